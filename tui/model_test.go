package tui

import (
	"errors"
	"image/color"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cctop/cctop/cct"
)

// visible is the rows as "depth name" lines, the shape of what the pane shows.
func visible(m *Model) []string {
	var out []string
	for _, r := range m.tree.rows {
		out = append(out, strings.Repeat(" ", int(r.depth))+m.tree.prof.names[r.g.fn])
	}
	return out
}

func cursorName(m *Model) string {
	t := m.tree
	return t.prof.names[t.rows[t.cursor].g.fn]
}

func TestFoldsSurviveRefreshWithNewIDs(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{})
	send(m, keys("e", "down", "down", "down", "down", "down", "space", "down")...)
	before := visible(m)
	cur := cursorName(m)

	// The same profile built in reverse order has other node ids for the same contexts.
	rev := inOrder(len(testSamples))
	slices.Reverse(rev)
	next := buildTree(testSamples, rev)
	old := src.Snapshot().Tree
	a, _ := old.Find("main.main", "main.run", "main.compute")
	b, _ := next.Tree.Find("main.main", "main.run", "main.compute")
	if a == b {
		t.Fatalf("test setup: node ids did not change (%d)", a)
	}
	next.Seq = 2
	src.set(next)
	send(m, SnapshotReadyMsg{})

	if m.tree.prof.tree != next.Tree {
		t.Fatal("the new snapshot was not taken")
	}
	if got := visible(m); !slices.Equal(got, before) {
		t.Errorf("rows changed across a refresh:\n got %q\nwant %q", got, before)
	}
	if got := cursorName(m); got != cur {
		t.Errorf("cursor moved from %s to %s", cur, got)
	}
}

func TestRefreshOnlyWhenSeqChanges(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{})
	rows := &m.tree.rows[0]
	send(m, tickMsg{}, SnapshotReadyMsg{})
	if &m.tree.rows[0] != rows {
		t.Error("rows were rebuilt although Seq did not change")
	}
	s := src.Snapshot()
	s.Seq++
	src.set(s)
	send(m, tickMsg{})
	if m.snap.Seq != s.Seq {
		t.Error("a tick did not take the new snapshot")
	}
}

func TestKeyReleaseDoesNothing(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{})
	send(m, tea.KeyReleaseMsg{Code: tea.KeyDown}, tea.KeyReleaseMsg{Code: 'd', Text: "d"},
		tea.KeyReleaseMsg{Code: 'e', Text: "e"})
	if m.tree.cursor != 0 || len(m.tree.rows) != 3 || len(src.done()) != 0 {
		t.Errorf("a key release acted: cursor %d, %d rows, actions %v", m.tree.cursor, len(m.tree.rows), src.done())
	}
	send(m, press("down"))
	if m.tree.cursor != 1 {
		t.Errorf("a press did not move the cursor")
	}
}

func TestActions(t *testing.T) {
	for _, tc := range []struct {
		keys []tea.Msg
		want Action
	}{
		{keys("d"), Action{Kind: ToggleDensity}},
		{keys("L"), Action{Kind: ToggleLatency}},
		{keys("+"), Action{Kind: AlphaUp}},
		{keys("-"), Action{Kind: AlphaDown}},
		{keys("]"), Action{Kind: RateUp}},
		{keys("["), Action{Kind: RateDown}},
		{keys("g"), Action{Kind: CycleTrigger}},
		{keys("o"), Action{Kind: CycleComparison}},
		{keys("b"), Action{Kind: Baseline}},
		{keys("p"), Action{Kind: Pause}},
		{keys("r"), Action{Kind: Reset}},
		{keys("m"), Action{Kind: SetMetric, Value: 1}}, // the snapshot shows time
		{keys("x", "enter"), Action{Kind: Export, Path: "cctop.pb.gz"}},
		{append(keys("x", "backspace", "backspace", "backspace", "backspace", "backspace"), append(typed("prof"), press("enter"))...),
			Action{Kind: Export, Path: "cctop.prof"}},
	} {
		src := newFake(testSnapshot())
		m := newPlain(src, Options{})
		send(m, tc.keys...)
		if got := src.done(); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%v: actions %+v, want %+v", tc.keys, got, tc.want)
		}
	}
	// Escape abandons an export.
	src := newFake(testSnapshot())
	send(newPlain(src, Options{}), keys("x", "esc")...)
	if got := src.done(); len(got) != 0 {
		t.Errorf("x esc: actions %+v", got)
	}
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		m := newPlain(newFake(testSnapshot()), Options{})
		_, cmd := m.Update(press(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
	// While typing a search, q is text.
	m := newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("/", "q")...)
	if got := m.prompt.input.Value(); got != "q" {
		t.Errorf("q in the search prompt: %q", got)
	}
}

// bigSnapshot is a tree of fan-out `fan` and depth `depth` (fan^depth leaves), with
// weights from a seeded generator.
func bigSnapshot(fan, depth int) Snapshot {
	t := cct.New()
	fns := make([]cct.FuncID, fan*depth)
	for i := range fns {
		fns[i] = t.Intern(cct.Func{Name: "pkg.f" + strconv.Itoa(i)})
	}
	r := rand.New(rand.NewPCG(1, 2))
	stack := make([]cct.Frame, depth)
	var walk func(level int)
	walk = func(level int) {
		if level == depth {
			t.Add(stack, 1, cct.Metrics{Samples: 1, Time: 1 + r.Int64N(1000)})
			return
		}
		for i := range fan {
			stack[depth-1-level] = cct.Frame{Func: fns[level*fan+i], Addr: uint64(i)}
			walk(level + 1)
		}
	}
	walk(0)
	self := make([]float64, t.Len())
	for id := range t.Len() {
		self[id] = float64(t.Node(cct.NodeID(id)).Self.Time)
	}
	return Snapshot{Tree: t, Self: self, Metric: "time", Seq: 1, Header: Header{Unwound: -1, Overlap: -1}}
}

// expandAll opens every row, top-down, as far as n rows.
func expandAll(m *Model, n int) {
	t := m.tree
	for i := 0; i < len(t.rows) && len(t.rows) < n; i++ {
		t.open(i)
	}
}

func TestOnlyVisibleRowsRendered(t *testing.T) {
	m := newPlain(newFake(bigSnapshot(10, 4)), Options{Width: 80, Height: 24})
	expandAll(m, 5000)
	if len(m.tree.rows) < 1000 {
		t.Fatalf("only %d rows", len(m.tree.rows))
	}
	body := m.tree.bodyHeight()
	for _, msgs := range [][]tea.Msg{nil, keys("pgdown"), keys("end"), keys("up")} {
		send(m, msgs...)
		before := m.tree.rowRenders
		m.View()
		if n := m.tree.rowRenders - before; n != body {
			t.Errorf("after %v: %d rows rendered, want the window's %d", msgs, n, body)
		}
	}
}

func TestResizeNeverPanics(t *testing.T) {
	for _, steps := range [][]tea.Msg{nil, keys("e"), keys("?"), keys("/", "m"), keys("i", "e"), keys("s", "e"), keys("t"),
		{ErrorMsg{errors.New(strings.Repeat("long error ", 20))}}} {
		m := newPlain(newFake(testSnapshot()), Options{})
		send(m, steps...)
		for _, sz := range [][2]int{{40, 10}, {1, 1}, {0, 0}, {2, 3}, {10, 2}, {25, 5}, {80, 24}, {39, 7}} {
			send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			got := screen(m)
			checkScreen(t, got, sz[0], sz[1])
			send(m, keys("down", "end", "up", "e", "left", "pgdown")...)
			checkScreen(t, screen(m), sz[0], sz[1])
		}
	}
}

func TestMouse(t *testing.T) {
	m := newPlain(newFake(bigSnapshot(10, 3)), Options{Width: 80, Height: 24})
	expandAll(m, 500)
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown}, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if m.tree.offset != 2*wheelStep {
		t.Errorf("two notches down: offset %d, want %d", m.tree.offset, 2*wheelStep)
	}
	if m.tree.cursor < m.tree.offset {
		t.Errorf("cursor %d left above the window at %d", m.tree.cursor, m.tree.offset)
	}
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if m.tree.offset != wheelStep {
		t.Errorf("one notch up: offset %d, want %d", m.tree.offset, wheelStep)
	}
	// A click on a row with children puts the cursor there; a second click toggles it.
	k := 2
	for !m.tree.rows[m.tree.offset+k].g.hasKids() {
		k++
	}
	y := m.treeTop() + k
	send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: y})
	if want := m.tree.offset + k; m.tree.cursor != want {
		t.Fatalf("click: cursor %d, want %d", m.tree.cursor, want)
	}
	open := m.tree.rows[m.tree.cursor].open
	send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: y})
	if m.tree.rows[m.tree.cursor].open == open {
		t.Error("a click on the cursor row did not toggle it")
	}
}

func TestErrorStaysUntilKey(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	send(m, ErrorMsg{errors.New("boom")}, tickMsg{}, StatusMsg{"later status"})
	if !strings.Contains(screen(m), "error: boom") {
		t.Fatal("the error is not shown, or was replaced before a key")
	}
	send(m, press("down"))
	s := screen(m)
	if strings.Contains(s, "boom") || !strings.Contains(s, "later status") {
		t.Errorf("after a key the error should give way to the status:\n%s", s)
	}
}

func TestSourceMessages(t *testing.T) {
	src := newFake(testSnapshot())
	src.msgs = make(chan tea.Msg, 1)
	m := newPlain(src, Options{})
	src.msgs <- StatusMsg{"baseline taken"}
	cmd := m.listen()
	msg := cmd()
	_, next := m.Update(msg)
	if !strings.Contains(screen(m), "baseline taken") {
		t.Error("a status from the source is not shown")
	}
	if next == nil {
		t.Error("the model stopped listening to the source")
	}
	close(src.msgs)
	if _, ok := next().(sourceEnd); !ok {
		t.Error("a closed channel does not end the listening")
	}
}

func TestSearchJumpsAndWraps(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("/")...)
	send(m, typed("memmove")...)
	send(m, press("enter"))
	var seen []string
	for range 4 {
		if cursorName(m) != "runtime.memmove" {
			t.Fatalf("cursor on %s, not a match", cursorName(m))
		}
		seen = append(seen, strings.Join(m.tree.cursorPathNames(), ">"))
		send(m, press("n"))
	}
	want := []string{
		"main.main>main.run>main.compute>main.compute>runtime.memmove",
		"main.main>main.run>main.compute>runtime.memmove",
		"[truncated]>runtime.memmove",
		"main.main>main.run>main.compute>main.compute>runtime.memmove", // wrapped
	}
	if !slices.Equal(seen, want) {
		t.Errorf("n visits\n%q\nwant\n%q", seen, want)
	}
	// The cursor is on the second match now; N goes back to the first, and N again
	// wraps to the last.
	send(m, press("N"))
	if got := strings.Join(m.tree.cursorPathNames(), ">"); got != want[0] {
		t.Errorf("N went to %s, want %s", got, want[0])
	}
	send(m, press("N"))
	if got := strings.Join(m.tree.cursorPathNames(), ">"); got != want[2] {
		t.Errorf("N from the first match went to %s, want %s (wrapping back)", got, want[2])
	}
	// Bottom-up, the same search finds the function at the top level first.
	send(m, press("i"), press("home"), press("n"))
	if got := strings.Join(m.tree.cursorPathNames(), ">"); got != "runtime.memmove" {
		t.Errorf("bottom-up n went to %s", got)
	}
	// No match: a message, the cursor stays.
	send(m, keys("/", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace", "backspace")...)
	send(m, typed("zzz")...)
	send(m, press("enter"))
	if !strings.Contains(screen(m), "no match") {
		t.Error("a search without match says nothing")
	}
}

// cursorPathNames is the cursor's path as function names, for assertions.
func (t *treePane) cursorPathNames() []string {
	var out []string
	for _, k := range t.cursorPath() {
		out = append(out, k.name)
	}
	return out
}

func TestFocusAndBack(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("e", "down", "down", "f")...)
	if len(m.tree.rows) == 0 || cursorName(m) != "main.compute" || m.tree.rows[0].depth != 0 {
		t.Fatalf("focus: top row %s", cursorName(m))
	}
	if strings.Contains(strings.Join(visible(m), "\n"), "main.parseConfig") {
		t.Error("focus shows rows outside the subtree")
	}
	send(m, press("backspace"))
	if got := strings.Join(m.tree.cursorPathNames(), ">"); got != "main.main>main.run>main.compute" {
		t.Errorf("after unfocus the cursor is on %s", got)
	}
	if !strings.Contains(strings.Join(visible(m), "\n"), "main.parseConfig") {
		t.Error("unfocus did not return to the whole tree")
	}
}

func TestCollapseParentAndExpand(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("right", "right", "right")...) // open main.main, step in, open main.run
	if got := strings.Join(m.tree.cursorPathNames(), ">"); got != "main.main>main.run" {
		t.Fatalf("right right right: %s", got)
	}
	send(m, press("left")) // close main.run
	send(m, press("left")) // to main.main
	if got := cursorName(m); got != "main.main" || m.tree.rows[1].g.fn == m.tree.rows[0].g.fn {
		t.Errorf("left left: on %s", got)
	}
	send(m, press("c"))
	if len(m.tree.rows) != 3 {
		t.Errorf("collapse all left %d rows", len(m.tree.rows))
	}
	// Enter and space toggle.
	send(m, press("enter"))
	n := len(m.tree.rows)
	send(m, press("space"))
	if n <= 3 || len(m.tree.rows) != 3 {
		t.Errorf("enter/space: %d then %d rows", n, len(m.tree.rows))
	}
}

func TestViewsSumUp(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	// Flat: memmove is called in three contexts; its self is their sum.
	send(m, press("t"))
	var memmove *group
	for _, r := range m.tree.rows {
		if m.tree.prof.names[r.g.fn] == "runtime.memmove" {
			memmove = r.g
		}
	}
	if memmove == nil || memmove.self != (90+35+15+25)*1e6 || memmove.total != memmove.self {
		t.Errorf("flat memmove: %+v", memmove)
	}
	// Flat main.compute is recursive: its total counts each sample once.
	for _, r := range m.tree.rows {
		if m.tree.prof.names[r.g.fn] == "main.compute" && r.g.total != 720e6 {
			t.Errorf("flat main.compute total %v, want 720ms", r.g.total)
		}
	}
	// Bottom-up: the top-level row of a function is its self, and its callers sum to it.
	send(m, press("i"))
	for _, r := range m.tree.rows {
		if m.tree.prof.names[r.g.fn] != "runtime.memmove" {
			continue
		}
		if r.g.total != memmove.self {
			t.Errorf("bottom-up memmove %v, want %v", r.g.total, memmove.self)
		}
		var sum float64
		for _, c := range m.tree.forest.children(r.g) {
			sum += c.total
		}
		if sum != r.g.total {
			t.Errorf("bottom-up memmove callers sum to %v, want %v", sum, r.g.total)
		}
	}
	// Split: main.compute calls memmove from two sites, merged they are one row.
	send(m, press("i"), press("home"))
	send(m, keys("e", "down", "down", "down", "down", "down", "down", "right")...)
	count := func() int {
		n := 0
		for _, r := range m.tree.rows {
			if r.depth == 3 && m.tree.prof.names[r.g.fn] == "runtime.memmove" {
				n++
			}
		}
		return n
	}
	if n := count(); n != 1 {
		t.Fatalf("merged: %d memmove rows under main.compute", n)
	}
	send(m, keys("s", "home", "e", "down", "down", "down", "down", "down", "down", "right")...)
	if n := count(); n != 2 {
		t.Errorf("split: %d memmove rows under main.compute, want 2:\n%s", n, screen(m))
	}
}

func TestThreadFilterCycles(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	var got []string
	for range 3 {
		send(m, press("T"))
		got = append(got, m.viewInfo().thread)
	}
	if want := []string{"1 (app)", "7 (gc)", "all"}; !slices.Equal(got, want) {
		t.Errorf("T cycles %q, want %q", got, want)
	}
	// Without per-thread data, T says so.
	s := testSnapshot()
	s.ThreadSelf = nil
	m = newPlain(newFake(s), Options{})
	send(m, press("T"))
	if m.filtering || !strings.Contains(screen(m), "no per-thread data") {
		t.Error("T without thread data")
	}
}

// sgrColor matches a color parameter in an SGR sequence: 30–49 and 90–107.
var sgrParams = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

func hasColor(s string) bool {
	for _, m := range sgrParams.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if n >= 30 && n <= 49 || n >= 90 && n <= 107 {
				return true
			}
		}
	}
	return false
}

func TestNoColor(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{NoColor: true})
	send(m, keys("e", "/", "m")...)
	send(m, tea.BackgroundColorMsg{})
	s := m.View().Content
	if hasColor(s) {
		t.Errorf("NoColor output has colors: %q", s)
	}
	if !strings.Contains(s, "\x1b[7m") {
		t.Error("NoColor lost the reverse-video cursor")
	}
	t.Setenv("NO_COLOR", "1")
	m = newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("e")...)
	if hasColor(m.View().Content) {
		t.Error("NO_COLOR in the environment still gives colors")
	}
	t.Setenv("NO_COLOR", "")
	m = newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("e")...)
	if !hasColor(m.View().Content) {
		t.Error("the default styles have no color at all")
	}
}

func TestViewFlags(t *testing.T) {
	v := newPlain(newFake(testSnapshot()), Options{}).View()
	if !v.AltScreen || v.MouseMode != tea.MouseModeCellMotion {
		t.Errorf("view: alt screen %v, mouse mode %v", v.AltScreen, v.MouseMode)
	}
}

func TestEmptyAndNilSnapshots(t *testing.T) {
	for _, s := range []Snapshot{{}, {Tree: cct.New(), Metric: "calls"}, {Tree: testSnapshot().Tree, Self: []float64{1}}} {
		m := newPlain(newFake(s), Options{Width: 60, Height: 12})
		send(m, keys("e", "down", "f", "F", "i", "t", "T", "s", "n", "c", "end", "left", "right", "space", "I", "v", "e", "f", "I")...)
		checkScreen(t, screen(m), 60, 12)
	}
}

// I and v flip their views and say so; they send nothing to the Source, and a second
// press undoes the first. In a prompt they are text.
func TestInlineAndNamesKeys(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{})
	send(m, press("I"))
	if !m.physical || !m.viewInfo().physical || !strings.Contains(screen(m), "view top-down, physical frames") {
		t.Errorf("I: physical %v\n%s", m.physical, screen(m))
	}
	send(m, press("v"))
	if !m.tree.fullNames || !strings.Contains(screen(m), "full names") {
		t.Errorf("v: full names %v", m.tree.fullNames)
	}
	send(m, press("I"), press("v"))
	if m.physical || m.tree.fullNames || strings.Contains(screen(m), "physical frames") {
		t.Errorf("I v again: physical %v, full names %v", m.physical, m.tree.fullNames)
	}
	if got := src.done(); len(got) != 0 {
		t.Errorf("the view toggles sent actions %+v", got)
	}
	send(m, press("/"))
	send(m, typed("vI")...)
	if m.physical || m.tree.fullNames || m.prompt.input.Value() != "vI" {
		t.Errorf("I and v in the search prompt: physical %v, full names %v, query %q", m.physical, m.tree.fullNames, m.prompt.input.Value())
	}
	// Releases do nothing.
	send(m, press("esc"), tea.KeyReleaseMsg{Code: 'I', Text: "I"}, tea.KeyReleaseMsg{Code: 'v', Text: "v"})
	if m.physical || m.tree.fullNames {
		t.Error("a key release toggled a view")
	}
	// The test profile's inlined main.hashBlock is part of main.compute in physical
	// frames: compute's self grows by hashBlock's.
	send(m, keys("I", "e")...)
	for _, r := range m.tree.rows {
		switch m.tree.prof.names[r.g.fn] {
		case "main.hashBlock":
			t.Error("physical frames show the inlined main.hashBlock")
		case "main.compute":
			if r.depth == 2 && r.g.self != 60e6 {
				t.Errorf("physical main.compute self %v, want hashBlock's 60ms", r.g.self)
			}
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{formatTime(1.234e9), "1.23s"},
		{formatTime(12e6), "12.0ms"},
		{formatTime(850e3), "850µs"},
		{formatTime(999), "999ns"},
		{formatTime(0), "0"},
		{formatTime(754e9), "12.6m"},
		{formatCount(999), "999"},
		{formatCount(12345), "12.3k"},
		{formatCount(4.56e6), "4.56M"},
		{formatDelta(12.34), "+12.3"},
		{formatDelta(-0.04), "0.0"},
		{formatDelta(-3.25), "-3.2"},
		{formatPct(100), "100.0%"},
		{formatValue("bytes", 512), "512B"},
		{formatValue("bytes", 1023), "1023B"},
		{formatValue("bytes", 12.3*1024), "12.3KiB"},
		{formatValue("bytes", 1023.9*1024), "1024KiB"},
		{formatValue("bytes", 64<<20), "64.0MiB"},
		{formatValue("bytes", 1.5*(1<<30)), "1.50GiB"},
		{formatValue("nanoseconds", 12e6), "12.0ms"},
		{formatValue("microseconds", 1400), "1.40ms"},
		{formatValue("seconds", 3), "3.00s"},
		{formatValue("count", 4000), "4000"},
		{formatValue("objects", 45e3), "45.0k"},
		{formatSigned(formatValue("bytes", -(2<<20)), -(2 << 20)), "-2.00MiB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
		if w := ansi.StringWidth(tc.got); w > metricWidth && !strings.HasPrefix(tc.got, "-") {
			t.Errorf("%q is wider than a column", tc.got)
		}
	}
}

func TestSplitCarriesFolds(t *testing.T) {
	m := newPlain(newFake(testSnapshot()), Options{})
	send(m, keys("e", "down", "down", "down")...) // main.main > run > compute > hashBlock
	merged := visible(m)
	cur := m.tree.cursorPathNames()
	send(m, press("s"))
	split := visible(m)
	// Every merged row that was visible is visible split; memmove under main.compute
	// shows twice (two call sites).
	for _, r := range merged {
		if !slices.Contains(split, r) {
			t.Errorf("split lost row %q:\n%s", r, strings.Join(split, "\n"))
		}
	}
	if !slices.Equal(m.tree.cursorPathNames(), cur) {
		t.Errorf("split moved the cursor to %q from %q", m.tree.cursorPathNames(), cur)
	}
	send(m, press("s"))
	if got := visible(m); !slices.Equal(got, merged) {
		t.Errorf("merging back changed the rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(merged, "\n"))
	}
}

func TestControlCharactersInNames(t *testing.T) {
	tr := cct.New()
	f := tr.Intern(cct.Func{Name: "evil\x1b[2J\nname"})
	tr.Add([]cct.Frame{{Func: f}}, 1, cct.Metrics{Samples: 1, Time: 1})
	s := snapshotOf(tr)
	s.Header.Target = "pid 1 (bad\x1b]0;x\x07)"
	m := newPlain(newFake(s), Options{NoColor: true})
	v := m.View().Content
	if strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\x1b]0") || strings.Contains(v, "\x07") {
		t.Errorf("control sequences from names reach the terminal: %q", v)
	}
	if !strings.Contains(ansi.Strip(v), "evil?[2J?name") {
		t.Errorf("the name is not shown with its control characters replaced:\n%s", ansi.Strip(v))
	}
}

// TestHeaderShowsBounds: the header says what the memory bounds cost, and only when they
// cost something.
func TestHeaderShowsBounds(t *testing.T) {
	st := PlainStyles()
	hb := headerBar{st: &st}
	hb.SetSize(120, headerLines)
	hb.set(Header{Unwound: -1, Overlap: -1}, viewInfo{})
	if v := ansi.Strip(hb.View()); strings.Contains(v, "folded") || strings.Contains(v, "log dropped") {
		t.Errorf("bounds shown with nothing folded:\n%s", v)
	}
	hb.SetSize(80, headerLines)
	hb.set(Header{Unwound: -1, Overlap: -1, Folded: 12345, LogDropped: 2e6,
		Counter: "uprobes on the 4 hottest functions (chosen from the live profile), ~1.0 µs per hit"}, viewInfo{})
	v := ansi.Strip(hb.View())
	for _, want := range []string{"folded 12.3k contexts", "log dropped 2.00M"} {
		if !strings.Contains(v, want) {
			t.Errorf("header lacks %q:\n%s", want, v)
		}
	}
}

// TestTickWithoutSnapshotRepeatsFrame: Bubble Tea draws after every message; a tick that
// finds no new snapshot gives the last frame again without drawing a row, and the next
// snapshot or key draws anew.
func TestTickWithoutSnapshotRepeatsFrame(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{Width: 80, Height: 24})
	first := m.View().Content
	body := min(m.tree.bodyHeight(), len(m.tree.rows))
	before := m.tree.rowRenders
	m.Update(tickMsg{})
	if got := m.View().Content; got != first {
		t.Errorf("a tick without a snapshot changed the frame:\n%s\nwas\n%s", got, first)
	}
	if n := m.tree.rowRenders - before; n != 0 {
		t.Errorf("a tick without a snapshot drew %d rows", n)
	}
	s := src.Snapshot()
	s.Seq++
	src.set(s)
	m.Update(tickMsg{})
	m.View()
	if n := m.tree.rowRenders - before; n != body {
		t.Errorf("a tick with a new snapshot drew %d rows, want %d", n, body)
	}
	before = m.tree.rowRenders
	m.Update(tickMsg{})
	m.Update(press("down"))
	if got := m.View().Content; got == first {
		t.Error("the frame after a key is the old one")
	}
	if n := m.tree.rowRenders - before; n != body {
		t.Errorf("a key after a tick drew %d rows, want %d", n, body)
	}
}

// TestFooterFollowsBackground: the footer's line is kept while its keys stay, and drawn
// again in the light theme's colors when the terminal says its background is light.
func TestFooterFollowsBackground(t *testing.T) {
	m := New(newFake(testSnapshot()), Options{Width: 100, Height: 30})
	dark := m.footer()
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	light := DefaultStyles(false)
	want := New(newFake(testSnapshot()), Options{Width: 100, Height: 30, Styles: &light}).footer()
	if got := m.footer(); got != want || got == dark {
		t.Errorf("footer after a light background:\n%q\nwant\n%q (dark %q)", got, want, dark)
	}
}
