package tui

import (
	"math"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/cctop/cctop/cct"
)

func TestSparklineScale(t *testing.T) {
	nan := math.NaN()
	a := []float64{2, nan, 5, 8, 0}
	b := []float64{4, 6}
	sc := scaleOf(a, b)
	if sc.lo != 2 || sc.hi != 8 {
		t.Fatalf("scale %+v, want lo 2 (the smallest positive) and hi 8", sc)
	}
	for _, tc := range []struct {
		v    float64
		want rune
	}{
		{8, '█'},   // the max
		{2, '▁'},   // the smallest positive
		{0, '▁'},   // below it
		{nan, ' '}, // no sample
		{5, '▅'},   // half way: (5-2)/(8-2)*7 = 3.5, rounded to level 4
		{math.Inf(1), ' '},
	} {
		if got := sc.glyph(tc.v); got != tc.want {
			t.Errorf("glyph(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	// The newest points that fit, right-aligned: the newest is in the last cell.
	if got := sparkline(a, 3, sc); got != "▅█▁" {
		t.Errorf("sparkline of the newest 3: %q", got)
	}
	if got := sparkline(a, 7, sc); got != "  ▁ ▅█▁" {
		t.Errorf("sparkline padded to 7: %q", got)
	}
	if got := sparkline(a, 0, sc); got != "" {
		t.Errorf("sparkline of width 0: %q", got)
	}
	// One series with a constant positive value is all at the top; all zeros at the bottom.
	if got := sparkline([]float64{3, 3}, 2, scaleOf([]float64{3, 3})); got != "██" {
		t.Errorf("constant series: %q", got)
	}
	if got := sparkline([]float64{0, 0, nan}, 3, scaleOf([]float64{0, 0, nan})); got != "▁▁ " {
		t.Errorf("zero series: %q", got)
	}
	if got := sparkline(nil, 2, scaleOf()); got != "  " {
		t.Errorf("empty series: %q", got)
	}
}

func TestHistBars(t *testing.T) {
	// Proportional from zero, an empty bucket is blank, each bucket widened when there
	// is room, summed in pairs when there is not.
	if got := histBars([]uint64{1, 0, 8, 4}, 4); got != "▁ █▄" {
		t.Errorf("4 buckets in 4: %q", got)
	}
	if got := histBars([]uint64{1, 0, 8, 4}, 9); got != "▁▁  ██▄▄" {
		t.Errorf("4 buckets in 9: %q", got)
	}
	if got := histBars([]uint64{1, 0, 8, 4, 2}, 3); got != "▁█▂" {
		t.Errorf("5 buckets in 3: %q", got)
	}
	if got := histBars(nil, 3); got != "" {
		t.Errorf("no buckets: %q", got)
	}
}

func TestDurationAndRateFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{formatDuration(0), "0ns"},
		{formatDuration(850), "850ns"},
		{formatDuration(999.7), "1.00µs"}, // not "1000ns"
		{formatDuration(4200), "4.20µs"},
		{formatDuration(210e3), "210µs"},
		{formatDuration(999.8e3), "1.00ms"},
		{formatDuration(12.04e6), "12.0ms"},
		{formatDuration(1.5e9), "1.50s"},
		{formatDuration(math.NaN()), "?"},
		{formatRate(42), "42.0"},
		{formatRate(0.24), "0.240"},
		{formatRate(0), "0"},
		{formatRate(1234), "1234"},
		{formatRate(45678), "45.7k"},
		{formatRate(0.0001), "<0.001"},
		{formatCost(0.012), "1.2%"},
		{formatCost(0.0004), "0.04%"},
		{formatCost(0), "0.0%"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// panelText is the counters panel of c at w x h, without styles.
func panelText(c *Counters, w, h int) string {
	st := PlainStyles()
	p := countersPanel{st: &st}
	p.SetSize(w, h)
	p.set(c)
	return p.View()
}

func TestPanelContent(t *testing.T) {
	if got := panelText(nil, 80, 9); got != "no counters in this profile" {
		t.Errorf("nil counters: %q", got)
	}
	c := testCounters()
	got := panelText(c, 100, 9)
	for _, want := range []string{
		// The figures first, so that a long description wraps after them.
		"counter cost 1.2% of target CPU  hits 48.2k  uprobe on main.compute, main.hashBlock (0.6µs a hit)",
		"params trigger time · 999 Hz · alpha 1000 · density on · latency on  bucket 500ms",
		"app       1 ", "worker-1 11 ", "gc        7 ",
		"42.0 calls/ms",
		"latency n=12.3k  min 850ns  median 4.20µs  mean 5.10µs  max 210µs",
		"hist    512ns ", " 524µs",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("panel lacks %q:\n%s", want, got)
		}
	}
	lines := strings.Split(got, "\n")
	if len(lines) != 8 {
		t.Errorf("%d lines, want 8:\n%s", len(lines), got)
	}
	// The threads are in the given order (busiest first), in columns: the sparklines
	// and the values end in the same column on every line.
	if !strings.HasPrefix(lines[2], "app") || !strings.HasPrefix(lines[5], "gc") {
		t.Errorf("thread order:\n%s", got)
	}
	for _, l := range lines[3:6] {
		unitAt := func(l string) int { return lipgloss.Width(l[:strings.Index(l, " calls/ms")]) }
		if lipgloss.Width(l) != lipgloss.Width(lines[2]) || unitAt(l) != unitAt(lines[2]) {
			t.Errorf("thread lines do not line up:\n%s", strings.Join(lines[2:6], "\n"))
		}
	}

	// More threads than lines: the last line says how many more.
	many := testCounters()
	for i := range 10 {
		many.Density = append(many.Density, ThreadSeries{TID: uint32(100 + i), Name: "pool", Points: []float64{1, 2}})
	}
	got = panelText(many, 100, 9)
	if !strings.Contains(got, "+10 more threads") || strings.Count(got, "calls/ms") != 4 {
		t.Errorf("14 threads in 9 lines:\n%s", got)
	}

	// Unknown cost; no density yet (the counter is not armed).
	c = testCounters()
	c.Cost = -1
	c.Density = []ThreadSeries{{TID: 1, Name: "app", Points: []float64{math.NaN()}}}
	got = panelText(c, 100, 9)
	if !strings.Contains(got, "cost unknown") || !strings.Contains(got, "no call counts yet") {
		t.Errorf("unknown cost, no counts:\n%s", got)
	}
	c.Density = nil
	c.Latency = LatencyStats{}
	got = panelText(c, 100, 9)
	if !strings.Contains(got, "no call counts yet") || !strings.Contains(got, "latency n=0") || strings.Contains(got, "hist") {
		t.Errorf("empty counters:\n%s", got)
	}
	// A histogram whose edges do not match its buckets is left out, not drawn wrong.
	c = testCounters()
	c.Latency.Edges = c.Latency.Edges[:3]
	if got := panelText(c, 100, 9); strings.Contains(got, "hist") {
		t.Errorf("a malformed histogram was drawn:\n%s", got)
	}
	// A short panel keeps the counter, the busiest thread and the latency.
	got = panelText(testCounters(), 100, 3)
	if l := strings.Split(got, "\n"); len(l) != 3 || !strings.HasPrefix(l[0], "counter") ||
		!strings.HasPrefix(l[1], "app") || !strings.HasPrefix(l[2], "latency") {
		t.Errorf("3-line panel:\n%s", got)
	}
}

// TestPanelStops: where truncated stacks stop gets a line after the histogram, before
// the threads past the busiest, commonest first.
func TestPanelStops(t *testing.T) {
	c := testCounters()
	c.Stops = testStops
	got := panelText(c, 100, 9)
	lines := strings.Split(got, "\n")
	if len(lines) != 9 || lines[8] != "truncated libmkl_avx2.so.2 31.0% no CFI · [unknown] 0.4% pc in no mapping" {
		t.Errorf("stops line:\n%s", got)
	}
	// Six lines: the counter, the busiest thread, the latency, the parameters, the
	// histogram, then the stops before a second thread.
	got = panelText(c, 100, 6)
	if l := strings.Split(got, "\n"); len(l) != 6 || !strings.HasPrefix(l[5], "truncated libmkl_avx2.so.2") || strings.Contains(got, "worker-1") {
		t.Errorf("6-line panel:\n%s", got)
	}
	if got := panelText(testCounters(), 100, 9); strings.Contains(got, "truncated") {
		t.Errorf("a stops line without stops:\n%s", got)
	}
}

func TestPanelColors(t *testing.T) {
	st := DefaultStyles(true)
	p := countersPanel{st: &st}
	p.SetSize(100, 9)
	p.set(testCounters())
	if !hasColor(p.View()) {
		t.Error("the default panel has no color")
	}
	m := newPlain(newFake(testSnapshot()), Options{NoColor: true})
	send(m, press("C"))
	if hasColor(m.View().Content) {
		t.Error("NoColor panel has colors")
	}
}

// TestPanelToggle: C opens the panel below the tree on 80 columns and beside it on
// 160; C again gives the tree its space back.
func TestPanelToggle(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{Width: 80, Height: 24})
	closed := m.layout()
	body := m.tree.bodyHeight()
	send(m, press("C"))
	l := m.layout()
	if !m.showPanel || l.panel != panelLines || l.tree != closed.tree-panelLines || l.side != 0 {
		t.Errorf("80x24 open: %+v (closed %+v)", l, closed)
	}
	if m.tree.bodyHeight() != body-panelLines || m.tree.width != 80 {
		t.Errorf("tree %dx%d rows with the panel below", m.tree.width, m.tree.bodyHeight())
	}
	if !strings.Contains(screen(m), "latency n=12.3k") {
		t.Errorf("the panel is not drawn:\n%s", screen(m))
	}
	send(m, press("C"))
	if m.showPanel || m.layout() != closed || m.tree.bodyHeight() != body || strings.Contains(screen(m), "latency n=") {
		t.Errorf("closing the panel: %+v", m.layout())
	}

	m = newPlain(newFake(testSnapshot()), Options{Width: 160, Height: 50})
	closed = m.layout()
	send(m, press("C"))
	l = m.layout()
	if l.side == 0 || l.panel != 0 || l.tree != closed.tree || l.treeWidth+l.side+lipgloss.Width(sideRule) != 160 {
		t.Errorf("160x50 open: %+v", l)
	}
	if m.tree.width != l.treeWidth || m.panel.width != l.side || m.panel.height != l.tree {
		t.Errorf("tree width %d, panel %dx%d, layout %+v", m.tree.width, m.panel.width, m.panel.height, l)
	}
	// The help screen takes the whole width and hides the panel; closing it brings
	// the panel back.
	send(m, press("?"))
	if m.layout().side != 0 || m.tree.width != 160 {
		t.Errorf("help with the panel: %+v", m.layout())
	}
	send(m, press("?"))
	if m.layout() != l {
		t.Errorf("after help: %+v, want %+v", m.layout(), l)
	}
	// Without counters the panel below is one line.
	s := testSnapshot()
	s.Counters = nil
	m = newPlain(newFake(s), Options{Width: 80, Height: 24})
	send(m, press("C"))
	if l := m.layout(); l.panel != 1 || !strings.Contains(screen(m), "no counters in this profile") {
		t.Errorf("nil counters: %+v\n%s", l, screen(m))
	}
}

// TestPanelAtEverySize renders with the panel open at every size up to 50x15: no
// panic, no line wider than the terminal, no more lines than it has.
func TestPanelAtEverySize(t *testing.T) {
	many := testSnapshot()
	for i := range 20 {
		many.Counters.Density = append(many.Counters.Density, ThreadSeries{TID: uint32(100 + i), Name: strings.Repeat("long-name", 4), Points: []float64{1e9, math.Inf(1), -1}})
	}
	empty := testSnapshot()
	empty.Counters = &Counters{Cost: math.NaN(), Latency: LatencyStats{N: 1, Hist: []uint64{0}, Edges: []float64{0, 1}}}
	noCounters := testSnapshot()
	noCounters.Counters = nil
	for _, s := range []Snapshot{testSnapshot(), many, empty, noCounters} {
		resized := newPlain(newFake(s), Options{})
		send(resized, keys("e", "C")...)
		for w := 0; w <= 50; w++ {
			for h := 0; h <= 15; h++ {
				m := newPlain(newFake(s), Options{Width: w, Height: h}) // 0 is the default size
				send(m, tea.WindowSizeMsg{Width: w, Height: h})
				send(m, keys("e", "C")...)
				checkLines(t, screen(m), w, h)
				send(resized, tea.WindowSizeMsg{Width: w, Height: h})
				checkLines(t, screen(resized), w, h)
				if l := resized.layout(); l.header+l.tree+l.panel+l.status+l.footer != h {
					t.Fatalf("%dx%d: layout %+v does not add up", w, h, l)
				}
				if l := resized.layout(); l.panel > 0 && resized.tree.bodyHeight() < 3 {
					t.Fatalf("%dx%d: the panel left the tree %d rows", w, h, resized.tree.bodyHeight())
				}
			}
		}
		// And the wide layout, down to its threshold.
		for _, sz := range [][2]int{{150, 5}, {150, 1}, {150, 0}, {151, 40}, {160, 50}, {149, 12}, {300, 8}} {
			send(resized, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			checkLines(t, screen(resized), sz[0], sz[1])
		}
	}
}

// checkLines is checkScreen measured with lipgloss.
func checkLines(t *testing.T, s string, w, h int) {
	t.Helper()
	if s == "" {
		return
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		t.Fatalf("%dx%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := lipgloss.Width(l); n > w {
			t.Fatalf("%dx%d: line %d is %d cells wide: %q", w, h, i+1, n, l)
		}
	}
}

// TestPanelCostsTheWindow: a frame with the panel open still draws only the rows on
// screen, and the panel only its lines.
func TestPanelCostsTheWindow(t *testing.T) {
	s := bigSnapshot(10, 4)
	s.Counters = testCounters()
	m := newPlain(newFake(s), Options{Width: 80, Height: 24})
	expandAll(m, 5000)
	send(m, press("C"))
	body := m.tree.bodyHeight()
	before := m.tree.rowRenders
	m.View()
	if n := m.tree.rowRenders - before; n != body {
		t.Errorf("%d rows rendered, want the window's %d", n, body)
	}
}

func TestMouseWithPanel(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {160, 50}, {40, 10}} {
		m := newPlain(newFake(bigSnapshot(10, 3)), Options{Width: sz[0], Height: sz[1]})
		expandAll(m, 500)
		send(m, press("C"))
		// A click on the last tree row moves the cursor there.
		last := m.treeTop() + m.tree.bodyHeight() - 1
		send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: last})
		if want := m.tree.offset + m.tree.bodyHeight() - 1; m.tree.cursor != want {
			t.Errorf("%v: click on the last row: cursor %d, want %d", sz, m.tree.cursor, want)
		}
		// That row is on that screen line.
		if lines := strings.Split(screen(m), "\n"); !strings.Contains(lines[last], m.tree.prof.shorts[m.tree.rows[m.tree.cursor].g.fn]) {
			t.Errorf("%v: screen line %d is %q, not the cursor row", sz, last, lines[last])
		}
		// Clicks on the panel, below or beside the tree, do nothing.
		cur := m.tree.cursor
		send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: last + 1})
		send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: m.treeTop(), X: m.tree.width + 1})
		if m.tree.cursor != cur {
			t.Errorf("%v: a click on the panel moved the cursor to %d", sz, m.tree.cursor)
		}
	}
}

// TestSetThread: the thread filter tells the Source which thread to weigh.
func TestSetThread(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{})
	send(m, keys("T", "T", "T")...)
	want := []Action{{Kind: SetThread, Value: 1}, {Kind: SetThread, Value: 7}, {Kind: SetThread, Value: 0}}
	if got := src.done(); !slices.Equal(got, want) {
		t.Errorf("T T T sent %+v, want %+v", got, want)
	}
	if SetThread.String() != "SetThread" {
		t.Errorf("SetThread is named %q", SetThread)
	}
}

// TestWeighingThread: until the Source has weighed the chosen thread, the tree shows
// that thread's contexts at zero and the status line says so; the next snapshot with
// the weights shows them.
func TestWeighingThread(t *testing.T) {
	s := testSnapshot()
	weighed := s.ThreadSelf
	s.ThreadSelf = func(tid uint32) []float64 {
		if tid == 7 {
			return nil
		}
		return weighed(tid)
	}
	src := newFake(s)
	m := newPlain(src, Options{Width: 80, Height: 24})
	send(m, keys("T", "T")...) // thread 7
	scr := screen(m)
	if !strings.Contains(scr, "weighing thread 7…") {
		t.Errorf("no weighing status:\n%s", scr)
	}
	var names []string
	for _, r := range m.tree.rows {
		names = append(names, m.tree.prof.names[r.g.fn])
		if !m.tree.prof.pending {
			t.Fatal("the profile is not marked pending")
		}
	}
	if !slices.Equal(names, []string{"runtime.gcBgMarkWorker", "[truncated]"}) {
		t.Errorf("rows while weighing: %q", names)
	}
	for _, l := range strings.Split(scr, "\n") {
		if strings.Contains(l, "gcBgMarkWorker") && !strings.HasPrefix(strings.TrimSpace(l), "0.0%   0.0%       0") {
			t.Errorf("a row being weighed shows a weight: %q", l)
		}
	}
	send(m, keys("e", "down")...) // the rows can be opened and browsed meanwhile
	send(m, tickMsg{})            // the same snapshot: still weighing
	if !strings.Contains(screen(m), "weighing thread 7…") {
		t.Error("the weighing status went away without weights")
	}

	s.ThreadSelf = weighed
	s.Seq++
	src.set(s)
	send(m, tickMsg{})
	scr = screen(m)
	if strings.Contains(scr, "weighing") || !strings.Contains(scr, "thread 7 (gc)") {
		t.Errorf("after the weights came:\n%s", scr)
	}
	if m.tree.prof.pending || m.tree.prof.grand != 195e6 {
		t.Errorf("weights of thread 7: grand %v, pending %v", m.tree.prof.grand, m.tree.prof.pending)
	}
	if got := cursorName(m); got != "runtime.scanobject" {
		t.Errorf("the cursor moved to %s when the weights came", got)
	}

	// A source with no weights for a thread at all: no panic, rows at zero.
	s = testSnapshot()
	s.ThreadSelf = func(uint32) []float64 { return nil }
	m = newPlain(newFake(s), Options{Width: 40, Height: 10})
	send(m, keys("T", "e", "i", "e", "t", "s", "/", "m", "enter", "n", "C")...)
	checkScreen(t, screen(m), 40, 10)
	// A snapshot without a tree while filtering.
	src = newFake(s)
	m = newPlain(src, Options{})
	send(m, press("T"))
	src.set(Snapshot{Seq: 9, ThreadSelf: s.ThreadSelf})
	send(m, tickMsg{})
	checkScreen(t, screen(m), 80, 24)
}

func TestThreadShape(t *testing.T) {
	s := testSnapshot()
	shape := threadShape(s.Tree, 7)
	id, ok := s.Tree.Find("runtime.gcBgMarkWorker", "runtime.scanobject")
	if !ok || shape[id] != 90 { // its samples
		t.Errorf("shape of scanobject under thread 7: %v", shape[id])
	}
	main, _ := s.Tree.Find("main.main", "main.run")
	if shape[main] != 0 {
		t.Errorf("thread 7 has no samples in main.run, shape %v", shape[main])
	}
}

// TestSidePanelAligned: beside the tree, the rule is in the same column on every line,
// whatever the rows hold (the tree fills its lines without measuring them).
func TestSidePanelAligned(t *testing.T) {
	tr := cct.New()
	f := tr.Intern(cct.Func{Name: "main.处理请求", File: "/src/app/处理.go"})
	g := tr.Intern(cct.Func{Name: "main.µ"})
	tr.Add([]cct.Frame{{Func: g}, {Func: f, Addr: 1, Line: 3}}, 1, cct.Metrics{Samples: 1, Time: 1})
	wide := snapshotOf(tr)
	wide.Counters = testCounters()
	for _, s := range []Snapshot{testSnapshot(), wide} {
		for _, steps := range [][]tea.Msg{nil, keys("e"), keys("s", "e"), keys("i", "e"), keys("t"),
			append(keys("e", "/"), typed("mem")...), keys("T", "T", "e"), keys("e", "end")} {
			for _, sz := range [][2]int{{150, 30}, {163, 12}, {240, 20}} {
				m := newPlain(newFake(s), Options{Width: sz[0], Height: sz[1]})
				send(m, keys("C")...)
				send(m, steps...)
				l := m.layout()
				lines := strings.Split(screen(m), "\n")
				for i := l.header; i < l.header+l.tree; i++ {
					at := strings.Index(lines[i], "│")
					if at < 0 || lipgloss.Width(lines[i][:at]) != l.treeWidth {
						t.Fatalf("%v after %v: line %d has the rule at %d, want %d:\n%s", sz, steps, i, lipgloss.Width(lines[i][:max(at, 0)]), l.treeWidth, screen(m))
					}
				}
			}
		}
	}
}

// TestPanelMemory: what the profile holds gets lines of its own after the stops,
// wrapped between its parts when the panel is narrow (no part split), and none when
// the source does not say.
func TestPanelMemory(t *testing.T) {
	c := testCounters()
	c.Stops = testStops
	parts := []string{"tree 12k contexts 3.6 MiB", "sample log 250k samples 9.5 MiB", "symbols 141 MiB in 38 modules of 1024 MiB"}
	c.Memory = strings.Join(parts, ", ")
	for _, size := range []struct{ w, h int }{{100, 12}, {160, 12}, {60, 17}} {
		got := panelText(c, size.w, size.h)
		lines := strings.Split(got, "\n")
		at := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "memory ") {
				at = i
			}
			if len([]rune(l)) > size.w {
				t.Errorf("%dx%d: line wider than the panel: %q", size.w, size.h, l)
			}
		}
		if at < 0 {
			t.Errorf("%dx%d: no memory line:\n%s", size.w, size.h, got)
			continue
		}
		rest := strings.Join(lines[at:], "\n")
		for _, part := range parts {
			if !strings.Contains(rest, part) {
				t.Errorf("%dx%d: %q not whole on a line:\n%s", size.w, size.h, part, rest)
			}
		}
	}
	if got := panelText(testCounters(), 100, 12); strings.Contains(got, "memory") {
		t.Errorf("a memory line without memory:\n%s", got)
	}
}
