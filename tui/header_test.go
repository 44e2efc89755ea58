package tui

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// realisticHeader is a live session with everything to say: a long command (cut by the
// source already), the counter described as a live session describes it, lost and
// throttled samples, folded contexts and the probes' cost.
func realisticHeader() Header {
	return Header{
		Target: "cctop workload density -duration… (pid 2854)", Threads: 6, Rate: 1003, Samples: 3592,
		Lost: 12, Throttled: 5, Folded: 1234, Unwound: 97.3,
		Counter: "uprobes on the 4 hottest functions (chosen from the live profile), ~0.83 µs per hit; " +
			"no hardware PMU here; armed on workload.densityLeaf, go-runewidth.inWidthTable, go-runewidth.runeWidthNoLUT",
		CounterBrief: "uprobes on 4 functions", ProbeCost: 0.7, Trigger: "time",
		Alpha: 0, Density: true, Latency: true, Comparison: "uncorrected samples", Overlap: 84.2, State: "live",
	}
}

// headerAt is the header's lines, plain, on width columns and at most lines lines.
func headerAt(h Header, v viewInfo, width, lines int) []string {
	st := PlainStyles()
	hb := headerBar{st: &st}
	hb.SetSize(width, lines)
	hb.set(h, v)
	return strings.Split(ansi.Strip(hb.View()), "\n")
}

// checkUncut fails if a line is wider than width, or shows a figure cut: a "…" right
// after a digit or in a word with a digit, or a word with a digit in it that is not a
// word of the text in full (whole, for the words it is given).
func checkUncut(t *testing.T, what string, lines []string, width int, whole []string) {
	t.Helper()
	words := map[string]bool{}
	for _, s := range whole {
		for _, w := range strings.Fields(s) {
			words[w] = true
		}
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > width {
			t.Errorf("%s at %d: line %d is %d cells wide: %q", what, width, i+1, n, l)
		}
		for _, w := range strings.Fields(l) {
			if !strings.ContainsFunc(w, unicode.IsDigit) {
				continue
			}
			if strings.Contains(w, "…") && !words[w] {
				t.Errorf("%s at %d: a figure is cut in %q: %q", what, width, w, l)
			} else if whole != nil && !words[w] {
				t.Errorf("%s at %d: %q is no whole word of the header: %q", what, width, w, l)
			}
		}
	}
}

// headerWords is every text the header can show, in full.
func headerWords(h Header, v viewInfo) []string {
	st := PlainStyles()
	hb := headerBar{st: &st, h: h, v: v}
	var out []string
	for _, it := range hb.items() {
		out = append(out, it.label, it.value)
	}
	return append(out, h.CounterBrief)
}

// TestHeaderAtAnyWidth: a header with everything to say fits 40, 80, 120 and 200
// columns with no figure cut, the top facts first and in order at 80, and says more
// where the width allows.
func TestHeaderAtAnyWidth(t *testing.T) {
	h := realisticHeader()
	v := viewInfo{view: "top-down", thread: "all"}
	figures := []string{"(pid 2854)", "1003/s", "3592 samples", "lost 12", "unwound 97.3%",
		"density on", "latency on", "alpha 0", "overlap 84.2%", "probe cost 0.7%",
		"throttled 5", "folded 1234 contexts"}
	for _, w := range []int{40, 80, 120, 200} {
		lines := headerAt(h, v, w, headerLines)
		all := strings.Join(lines, "\n")
		t.Logf("%d columns:\n%s", w, all)
		if len(lines) != headerLines {
			t.Errorf("%d columns: %d lines", w, len(lines))
		}
		checkUncut(t, "header", lines, w, headerWords(h, v))
		if w < 80 {
			continue
		}
		for _, f := range figures {
			if !strings.Contains(all, f) {
				t.Errorf("%d columns: no %q:\n%s", w, f, all)
			}
		}
		// Every item is whole or absent: a label is followed by its value.
		for _, lv := range []string{"trigger time", "thread all", "view top-down"} {
			if strings.Contains(all, strings.Fields(lv)[0]+" ") && !strings.Contains(all, lv) {
				t.Errorf("%d columns: %q cut:\n%s", w, lv, all)
			}
		}
	}

	// At 80 columns the top facts come first, in order.
	lines := headerAt(h, v, 80, headerLines)
	all := strings.Join(lines, "\n")
	at := -1
	for _, f := range []string{"cctop workload", "1003/s", "3592 samples", "lost 12", "unwound 97.3%",
		"density on", "latency on", "alpha 0", "overlap 84.2%"} {
		i := strings.Index(all, f)
		if i <= at {
			t.Errorf("%q is not after the facts before it:\n%s", f, all)
		}
		at = i
	}
	if !strings.HasPrefix(lines[0], "cctop workload") || !strings.HasPrefix(lines[1], "unwound") {
		t.Errorf("the session, then the stacks:\n%s", all)
	}
	// The counter's brief at 80; its description, and what overlap compares with, wider.
	if !strings.Contains(all, "counter uprobes on 4 functions") {
		t.Errorf("80 columns: no counter brief:\n%s", all)
	}
	wide := strings.Join(headerAt(h, v, 120, headerLines), "\n")
	if !strings.Contains(wide, "vs uncorrected samples  overlap 84.2%") || !strings.Contains(wide, "cctop workload density -duration… (pid 2854)") {
		t.Errorf("120 columns lack the comparison or the whole target:\n%s", wide)
	}
	wide = strings.Join(headerAt(h, v, 200, headerLines), "\n")
	if !strings.Contains(wide, "counter uprobes on the 4 hottest functions (chosen from the live profile), ~0.83 µs per hit; no hardware PMU here; …") {
		t.Errorf("200 columns: the counter's description is not there, cut between its clauses:\n%s", wide)
	}
	// Without a brief, the description is cut as free text.
	h.CounterBrief = ""
	lines = headerAt(h, v, 80, headerLines)
	checkUncut(t, "header without a brief", lines, 80, headerWords(h, v))
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "counter uprobes on the") {
		t.Errorf("no counter without a brief:\n%s", all)
	}
}

// TestHeaderWarnings: a state that stops the numbers and the warnings stay on screen
// when their line is full, at the cost of less important items.
func TestHeaderWarnings(t *testing.T) {
	h := realisticHeader()
	h.State = "target exited"
	h.LogDropped = 2e6
	v := viewInfo{view: "top-down", thread: "all"}
	for _, w := range []int{60, 80, 120} {
		lines := headerAt(h, v, w, headerLines)
		all := strings.Join(lines, "\n")
		checkUncut(t, "header", lines, w, headerWords(h, v))
		for _, want := range []string{"target exited", "lost 12", "throttled 5", "folded 1234 contexts", "log dropped 2.00M"} {
			if !strings.Contains(all, want) {
				t.Errorf("%d columns: no %q:\n%s", w, want, all)
			}
		}
	}
	// Nothing to warn of, no warning.
	lines := headerAt(Header{Unwound: -1, Overlap: -1, ProbeCost: -1}, v, 80, headerLines)
	for _, no := range []string{"throttled", "folded", "log dropped", "probe cost"} {
		if strings.Contains(strings.Join(lines, "\n"), no) {
			t.Errorf("%q with nothing to say:\n%s", no, strings.Join(lines, "\n"))
		}
	}
}

// TestHeaderFewerLines: a small terminal gives the header fewer lines; they have the
// most important facts, whole.
func TestHeaderFewerLines(t *testing.T) {
	h := realisticHeader()
	v := viewInfo{view: "top-down", thread: "all"}
	for _, w := range []int{40, 80, 120} {
		for n := 1; n < headerLines; n++ {
			lines := headerAt(h, v, w, n)
			if len(lines) != n {
				t.Errorf("%dx%d: %d lines", w, n, len(lines))
			}
			checkUncut(t, "short header", lines, w, headerWords(h, v))
			all := strings.Join(lines, "\n")
			if !strings.HasPrefix(all, "cctop") || !regexp.MustCompile(`\(pid 2854\)\s+1003/s\s+3592 samples`).MatchString(all) {
				t.Errorf("%dx%d: not the target, the rate and the samples:\n%s", w, n, all)
			}
		}
	}
	// One line of 80 has the session's figures and, after them, the stacks'.
	line := headerAt(h, v, 80, 1)[0]
	if !strings.Contains(line, "3592 samples  lost 12") || !strings.Contains(line, "unwound 97.3%") {
		t.Errorf("one line: %q", line)
	}
}

// TestHeaderView: the view line's free text (focus, search) is cut, its figures not;
// an item added to viewInfo needs only a line in items.
func TestHeaderView(t *testing.T) {
	h := realisticHeader()
	v := viewInfo{
		view: "top-down", split: true, physical: true, thread: "4243 (worker-pool-1)",
		focus:  []string{"main.main", "main.run", "github.com/some/module/pkg.(*Server).handleConnection", "pkg.decode"},
		search: "handleConnectionWithAVeryLongQuery", matches: 12345,
	}
	for _, w := range []int{40, 80, 120, 200} {
		lines := headerAt(h, v, w, headerLines)
		checkUncut(t, "view line", lines, w, append(headerWords(h, v), "12.3k"))
		last := lines[len(lines)-1]
		if w >= 80 && (!strings.HasPrefix(last, "view top-down, call sites split") || !strings.Contains(last, "thread 4243 (worker-pool-1)")) {
			t.Errorf("%d columns: %q", w, last)
		}
		if w >= 120 && !strings.Contains(last, "12.3k contexts") {
			t.Errorf("%d columns: the search count is not whole: %q", w, last)
		}
	}
}

func TestCutFree(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		want string
	}{
		{"short", 10, "short"},
		{"uprobes on the 4 hottest functions", 20, "uprobes on the…"}, // not "the 4…"
		{"uprobes on the 4 hottest functions", 18, "uprobes on the…"}, // a word cut goes whole
		{"~0.83 µs per hit", 7, ""},                                   // nothing but a figure: nothing
		{"cost ~0.83 µs per hit", 11, "cost…"},                        // the unit goes with its figure
		{"averyveryverylongword", 8, "averyve…"},                      // one word is cut where it has a letter
		{"python3.11-config", 9, "python…"},                           // not after a digit
		{"cctop workload density -duration…", 22, "cctop workload…"},  // "density" would be cut: it goes
		{"x", 0, ""},
	} {
		got := cutFree(tc.s, tc.w)
		if got != tc.want || ansi.StringWidth(got) > tc.w {
			t.Errorf("cutFree(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
	}
}

func TestTargetFit(t *testing.T) {
	for _, tc := range []struct {
		target string
		w      int
		want   string
	}{
		{"cctop workload density -duration… (pid 2854)", 80, "cctop workload density -duration… (pid 2854)"},
		{"cctop workload density -duration… (pid 2854)", 30, "cctop workload… (pid 2854)"},
		{"cctop workload density -duration… (pid 2854)", 12, "(pid 2854)"},
		{"pid 1234 (python3)", 14, "pid 1234 (pyt…"},
		{"pid 1234 (python3)", 9, "pid 1234"},
		{"/home/me/profiles/2024/run-17.pb.gz", 20, "…/2024/run-17.pb.gz"},
		{"/home/me/profiles/2024/run-17.pb.gz", 18, "…/run-17.pb.gz"},
		{"/home/me/profiles/2024/run-17.pb.gz", 12, "run-17.pb.gz"},
		{"/home/me/profiles/2024/run-17.pb.gz", 10, "run…"},
	} {
		fit, _ := targetFit(tc.target, 80)
		if got := fit(tc.w); got != tc.want || ansi.StringWidth(got) > tc.w {
			t.Errorf("target %q in %d: %q, want %q", tc.target, tc.w, got, tc.want)
		}
	}
}

// TestFooter: the footer has the focus's most useful bindings, whole, as many as fit:
// five at 80 columns, more at 120 and 200; a prompt's and the help screen's too.
func TestFooter(t *testing.T) {
	footer := func(m *Model) []string {
		l := strings.Split(screen(m), "\n")
		return strings.Split(l[len(l)-1], " • ")
	}
	whole := map[string]bool{}
	for _, b := range New(newFake(testSnapshot()), Options{}).ShortHelp() {
		whole[b.Help().Key+" "+b.Help().Desc] = true
	}
	prev := 0
	for _, w := range []int{40, 80, 120, 200} {
		m := New(newFake(testSnapshot()), Options{Width: w, Height: 24})
		got := footer(m)
		if line := strings.Join(got, " • "); ansi.StringWidth(line) > w || strings.Contains(line, "…") {
			t.Errorf("%d columns: %q", w, line)
		}
		for _, b := range got {
			if !whole[b] {
				t.Errorf("%d columns: %q is no whole binding", w, b)
			}
		}
		if w >= 80 && !slices.Equal(got[:5], []string{"enter/space fold", "t flat", "/ search", "i callers", "? help"}) {
			t.Errorf("%d columns: the first five are %q", w, got[:5])
		}
		if w > 80 && len(got) <= prev {
			t.Errorf("%d columns: %d bindings, no more than narrower", w, len(got))
		}
		prev = len(got)
	}
	m := New(newFake(testSnapshot()), Options{Width: 80, Height: 24})
	send(m, press("/"))
	if got := footer(m); !slices.Equal(got, []string{"enter accept", "esc cancel"}) {
		t.Errorf("prompt footer %q", got)
	}
	send(m, press("esc"), press("?"))
	if got := footer(m); !slices.Equal(got, []string{"? close help", "q quit"}) {
		t.Errorf("help screen footer %q", got)
	}
}

// livePanel is the counters panel of a live session as it describes itself.
func livePanel() *Counters {
	c := testCounters()
	c.Source = "call counter: uprobes on the 4 hottest functions (chosen from the live profile), ~0.83 µs per hit; " +
		"no hardware PMU here; armed on workload.densityLeaf, go-runewidth.inWidthTable, go-runewidth.runeWidthNoLUT"
	c.Cost, c.Hits = 0.018, 200123
	c.Params = "trigger time · cpu-clock at 999 Hz · alpha 0 · density on · latency on · unwind fp"
	c.Stops = testStops
	return c
}

// TestPanelAt80: the panel's lines cut no figure at 80 columns, at any height: the
// counter's figures come first and its description wraps, the parameters wrap between
// parameters, and what has no room goes whole.
func TestPanelAt80(t *testing.T) {
	c := livePanel()
	params := strings.Split(c.Params, " · ")
	for h := 1; h <= 16; h++ {
		got := strings.Split(panelText(c, 80, h), "\n")
		checkUncut(t, "panel", got, 80, nil)
		if !strings.HasPrefix(got[0], "counter cost 1.8% of target CPU  hits 200k  uprobes on the 4 hottest") {
			t.Errorf("height %d: the counter line: %q", h, got[0])
		}
		for _, l := range got {
			l = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "params "), " …"))
			if strings.Contains(l, "·") && !strings.HasPrefix(l, "truncated") {
				for _, p := range strings.Split(strings.Split(l, "  bucket")[0], " · ") {
					if !slices.Contains(params, p) {
						t.Errorf("height %d: parameter %q cut: %q", h, p, l)
					}
				}
			}
		}
	}
	// Tall enough, the description is there in full.
	got := panelText(c, 80, 16)
	var desc []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "counter ") || strings.HasPrefix(l, "        ") {
			desc = append(desc, strings.TrimSpace(l))
		}
	}
	if want := strings.TrimPrefix(c.Source, "call counter: "); !strings.Contains(strings.Join(desc, " "), want) {
		t.Errorf("the description is not there in full:\n%s", got)
	}
	// The full 80x24 screen: the header, the panel and the footer cut no figure.
	s := testSnapshot()
	s.Header, s.Counters = realisticHeader(), c
	m := New(newFake(s), Options{Width: 80, Height: 24})
	send(m, keys("e", "C")...)
	lines := strings.Split(screen(m), "\n")
	l := m.layout()
	mine := slices.Concat(lines[:l.header], lines[l.header+l.tree:l.header+l.tree+l.panel], lines[len(lines)-1:])
	checkUncut(t, "80x24 screen", mine, 80, nil)
}

// TestHeaderTriggerLowerBound: a counting trigger that lost records says its
// counts are a lower bound, with the number lost, in the warning style.
func TestHeaderTriggerLowerBound(t *testing.T) {
	h := realisticHeader()
	h.Trigger, h.TriggerLost = "exact", 298
	got := strings.Join(headerAt(h, viewInfo{view: "top-down", thread: "all"}, 200, 6), "\n")
	if !strings.Contains(got, "exact (a lower bound: 298 lost)") {
		t.Errorf("header with 298 lost under the exact trigger:\n%s", got)
	}
	h.TriggerLost = 0
	if got := strings.Join(headerAt(h, viewInfo{view: "top-down", thread: "all"}, 200, 6), "\n"); strings.Contains(got, "lower bound") {
		t.Errorf("header with nothing lost:\n%s", got)
	}
}

// TestHeaderSaysSamplesWait: samples that wait for symbols to load are
// said, with their number, and nothing is said when none wait.
func TestHeaderSaysSamplesWait(t *testing.T) {
	h := realisticHeader()
	h.Waiting = 1234
	v := viewInfo{view: "top-down", thread: "all"}
	if got := strings.Join(headerAt(h, v, 200, 6), "\n"); !strings.Contains(got, "loading symbols 1234 samples wait") {
		t.Errorf("header with 1234 samples waiting:\n%s", got)
	}
	h.Waiting = 0
	if got := strings.Join(headerAt(h, v, 200, 6), "\n"); strings.Contains(got, "loading symbols") {
		t.Errorf("header with none waiting:\n%s", got)
	}
}

// TestHeaderFile: a saved profile's header says what the file holds (the sample type
// and how many there are, its period, length and time, its main binary) and leaves out
// the live-only facts it does not carry; a cctop profile with call estimates keeps the
// corrections and the unwound share it recorded.
func TestHeaderFile(t *testing.T) {
	heap := Header{
		Target: "heap.pb.gz", Samples: 24, Unwound: -1, ProbeCost: -1, Overlap: -1, State: "file",
		File: &FileInfo{
			SampleType: "inuse_space", Unit: "bytes", Types: 4, PeriodType: "space", PeriodUnit: "bytes", Period: 524288,
			DurationNanos: 30e9, TimeNanos: time.Date(2026, 11, 26, 17, 0, 0, 0, time.Local).UnixNano(),
			Main: "/usr/local/bin/server", BuildID: "bc61d848f6f1", Comments: []string{"built by ci"},
		},
	}
	v := viewInfo{view: "top-down", thread: "all"}
	got := strings.Join(headerAt(heap, v, 160, 4), "\n")
	for _, want := range []string{"heap.pb.gz", "type inuse_space/bytes (4 types)", "period 512KiB space", "over 30.0s",
		"at 2026-11-26 17:00:00", "24 samples", "binary /usr/local/bin/server build-id bc61d848f6f1", "built by ci"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in the file's header:\n%s", want, got)
		}
	}
	for _, live := range []string{"0/s", "threads", "lost", "unwound", "density", "latency", "alpha", "counter", "trigger"} {
		if strings.Contains(got, live) {
			t.Errorf("a heap profile's header says %q:\n%s", live, got)
		}
	}
	checkUncut(t, "file header at 80", headerAt(heap, v, 80, 4), 80, nil)
	own := heap
	own.File = &FileInfo{SampleType: "cpu", Unit: "nanoseconds", Types: 4, Corrections: true}
	own.Unwound, own.Density, own.Trigger = 99.1, true, "time"
	got = strings.Join(headerAt(own, v, 160, 4), "\n")
	for _, want := range []string{"unwound 99.1%", "density on", "alpha 0", "trigger time"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in a cctop profile's header:\n%s", want, got)
		}
	}
}

// TestHeaderDensityCoverage: at 80 columns the header says what density
// does: on, with the share of samples that carry a count, or not applied
// for want of counts, with the reason, whole.
func TestHeaderDensityCoverage(t *testing.T) {
	v := viewInfo{view: "top-down", thread: "all"}
	h := realisticHeader()
	h.Counted = 89.4
	if got := strings.Join(headerAt(h, v, 80, 4), "\n"); !strings.Contains(got, "density on") || !strings.Contains(got, "counted 89.4%") {
		t.Errorf("counted profile at 80:\n%s", got)
	}
	h.DensityWhy, h.Counted, h.Comparison, h.Overlap = "3% of samples counted, 50% needed", 3, "uncorrected samples", -1
	got := headerAt(h, v, 80, 4)
	checkUncut(t, "header", got, 80, headerWords(h, v))
	if s := strings.Join(got, "\n"); !strings.Contains(s, "density no counts: 3% of samples counted, 50% needed") || strings.Contains(s, "counted 3") || strings.Contains(s, "density on") {
		t.Errorf("a sliver counted, at 80:\n%s", s)
	}
}

// TestHeaderRuntime: what cctop did to the target's runtime is said, in
// full where there is room and cut at a clause where there is not.
func TestHeaderRuntime(t *testing.T) {
	h := realisticHeader()
	h.Runtime = "python 3.12: perf trampolines on; cctop set PYTHONPERFSUPPORT=1 (--keep-env leaves the environment alone)"
	v := viewInfo{view: "top-down", thread: "all"}
	if got := strings.Join(headerAt(h, v, 400, 6), "\n"); !strings.Contains(got, h.Runtime) {
		t.Errorf("wide header:\n%s", got)
	}
	got := strings.Join(headerAt(h, v, 100, 6), "\n")
	if !strings.Contains(got, "python 3.12: perf trampolines on") {
		t.Errorf("100 columns:\n%s", got)
	}
	for _, l := range headerAt(h, v, 100, 6) {
		if w := ansi.StringWidth(l); w > 100 {
			t.Errorf("line of %d columns: %q", w, l)
		}
	}
	h.Runtime = ""
	if got := strings.Join(headerAt(h, v, 240, 6), "\n"); strings.Contains(got, "trampolines") {
		t.Errorf("no runtime:\n%s", got)
	}
}

// TestHeaderRuntimeHoldsNothingBack: a runtime note too long for its line
// is left out, and the counter's line after it stays.
func TestHeaderRuntimeHoldsNothingBack(t *testing.T) {
	h := realisticHeader()
	v := viewInfo{view: "top-down", thread: "all"}
	without := strings.Join(headerAt(h, v, 80, 6), "\n")
	h.Runtime = strings.Repeat("python without perf trampolines ", 4)
	if got := strings.Join(headerAt(h, v, 80, 6), "\n"); got != without {
		t.Errorf("with a long runtime note:\n%s\nwithout:\n%s", got, without)
	}
}
