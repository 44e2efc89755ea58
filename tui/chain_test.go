package tui

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/charmbracelet/x/ansi"
)

// demoFuncs are the functions of a profile shaped like `cctop demo`: a Go program whose
// hot leaf is reached through nine frames of only children and two callers, with the
// probes that count its calls.
var demoFuncs = map[string]cct.Func{}

// demoPath is the chain from the thread's entry to the branch, outermost first.
var demoPath = []string{
	"runtime.goexit", "runtime.main", "main.main", "main.run", "main.cmdWorkload",
	"workload.Run", "workload.run", "workload.runDensity", "workload.densityRounds",
}

func init() {
	for _, n := range append(slices.Clone(demoPath), "workload.densityPhaseD", "workload.densityPhaseC",
		"workload.densityPhaseE", "workload.densityPhaseF", "workload.densityLeaf", "runtime.mcall", "runtime.park_m", "runtime.gcBgMarkWorker") {
		demoFuncs[n] = cct.Func{Name: "github.com/cctop/cctop/" + n, Short: n, Module: "/usr/bin/cctop"}
	}
	demoFuncs[cct.ProbesName] = cct.Func{Name: cct.ProbesName, Module: kernelModule}
	demoFuncs["do_syscall_64"] = cct.Func{Name: "do_syscall_64", Module: kernelModule}
	demoFuncs["[truncated]"] = cct.Func{Name: "[truncated]"}
}

// demoStack is a stack leaf first: leaf, then the phase, then demoPath from the inside.
func demoStack(leaf ...string) []string {
	st := slices.Clone(leaf)
	for i := len(demoPath) - 1; i >= 0; i-- {
		st = append(st, demoPath[i])
	}
	return st
}

// demoSamples weighs phase D at twice phase C (it passes twice the input), as the demo.
func demoSamples(d, c int64) []sample {
	return []sample{
		{demoStack("workload.densityLeaf", "workload.densityPhaseD"), 1, d, d / 2, 0},
		{demoStack("workload.densityLeaf", "workload.densityPhaseC"), 2, c, c, 0},
		{demoStack(cct.ProbesName, "workload.densityLeaf", "workload.densityPhaseD"), 1, 7, 7, 0},
		{demoStack(cct.ProbesName, "workload.densityLeaf", "workload.densityPhaseC"), 2, 3, 3, 0},
		{[]string{"runtime.park_m", "runtime.mcall"}, 3, 1, 1, 0},
		{[]string{"do_syscall_64", "runtime.gcBgMarkWorker", "runtime.goexit"}, 3, 2, 2, 0},
		{[]string{"[truncated]"}, 3, 1, 1, 0},
	}
}

func demoSnapshot(d, c int64) Snapshot {
	s := demoSamples(d, c)
	return buildTreeOf(demoFuncs, s, inOrder(len(s)))
}

// wholeName says whether name is on the screen uncut: not followed by "…".
func wholeName(scr, name string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(name) + `($|[^…\w])`).MatchString(scr)
}

// With no key pressed, the first screen is the hot path: the chain to the branch as one
// row, both callers of the hot leaf, and the cursor on the leaf.
func TestFirstScreenOpensHotPath(t *testing.T) {
	m := New(newFake(demoSnapshot(660, 330)), Options{Width: 80, Height: 24})
	scr := screen(m)
	for _, name := range []string{"runtime.goexit › … › workload.densityRounds (9)", "workload.densityPhaseD",
		"workload.densityLeaf", "workload.densityPhaseC"} {
		if !wholeName(scr, name) {
			t.Errorf("%q is not on the first screen uncut:\n%s", name, scr)
		}
	}
	want := append(slices.Clone(demoPath), "workload.densityPhaseD", "workload.densityLeaf")
	if got := shortPath(m); !slices.Equal(got, want) {
		t.Errorf("cursor on %q, want the hot leaf", got)
	}
	// The leaf holds its time itself: its probes stay folded away below it.
	if strings.Contains(scr, cct.ProbesName) {
		t.Errorf("the first screen opened the leaf:\n%s", scr)
	}
	if n := strings.Count(scr, "runtime.main"); n != 0 {
		t.Errorf("a frame inside the chain has a row of its own:\n%s", scr)
	}
}

// Where no child holds half of the time, the first screen stops at the branch, with
// the cursor there and the big branches open a level.
func TestFirstScreenStopsAtBranch(t *testing.T) {
	samples := append(demoSamples(400, 400),
		sample{demoStack("workload.densityLeaf", "workload.densityPhaseE"), 3, 300, 300, 0},
		sample{demoStack("workload.densityLeaf", "workload.densityPhaseF"), 3, 50, 50, 0})
	m := New(newFake(buildTreeOf(demoFuncs, samples, inOrder(len(samples)))), Options{Width: 80, Height: 24})
	if got := shortPath(m); !slices.Equal(got, demoPath) {
		t.Errorf("cursor on %q, want the branch %s", got, demoPath[len(demoPath)-1])
	}
	scr := screen(m)
	if n := strings.Count(scr, "workload.densityLeaf"); n != 3 {
		t.Errorf("%d leaves shown, want one under each branch of 25%% or more:\n%s", n, scr)
	}
	if !strings.Contains(scr, "▸ workload.densityPhaseF") {
		t.Errorf("the small branch is not there, closed:\n%s", scr)
	}
}

// shortPath is the cursor's context by short name.
func shortPath(m *Model) []string {
	var out []string
	for _, g := range m.tree.chain(m.tree.cursor) {
		out = append(out, m.tree.prof.shorts[g.fn])
	}
	return out
}

// The first screen follows the hot path across refreshes until a key moves the
// cursor; near ties keep their earlier choice.
func TestFollowHotPathUntilMoved(t *testing.T) {
	src := newFake(demoSnapshot(660, 330))
	m := New(src, Options{Width: 80, Height: 24})
	update := func(d, c int64) {
		s := demoSnapshot(d, c)
		s.Seq = src.Snapshot().Seq + 1
		src.set(s)
		send(m, tickMsg{})
	}
	leafUnder := func() string {
		p := shortPath(m)
		if len(p) < 2 || p[len(p)-1] != "workload.densityLeaf" {
			return ""
		}
		return p[len(p)-2]
	}
	update(330, 660)
	if got := leafUnder(); got != "workload.densityPhaseC" {
		t.Errorf("after phase C became the hot one the cursor is under %q", got)
	}
	update(640, 660) // within 5%: no flip
	if got := leafUnder(); got != "workload.densityPhaseC" {
		t.Errorf("a near tie moved the cursor to %q", got)
	}
	send(m, press("up"))
	at := shortPath(m)
	update(990, 10)
	if got := shortPath(m); !slices.Equal(got, at) {
		t.Errorf("after a key the refresh moved the cursor from %q to %q", at, got)
	}
}

// A chain row opens and closes with the fold key, z shows its frames one per row and
// back, and the cursor keeps its context through both.
func TestChainRows(t *testing.T) {
	m := New(newFake(demoSnapshot(660, 330)), Options{Width: 120, Height: 40})
	send(m, keys("c")...)
	if len(m.tree.rows) == 0 || m.tree.rows[0].links == nil || len(m.tree.rows[0].links) != len(demoPath) {
		t.Fatalf("the first row is not the chain of %d frames:\n%s", len(demoPath), screen(m))
	}
	send(m, keys("enter")...)
	scr := screen(m)
	if !strings.Contains(scr, "▾ runtime.goexit › … › workload.densityRounds (9)") || !wholeName(scr, "workload.densityPhaseC") {
		t.Fatalf("enter did not open the chain row:\n%s", scr)
	}
	send(m, keys("down")...)
	before := shortPath(m)
	send(m, keys("z")...)
	scr = screen(m)
	for _, name := range demoPath {
		if !regexp.MustCompile(`[▾▸ ] `+regexp.QuoteMeta(name)+`\s*$`).MatchString(scr) &&
			!strings.Contains(scr, " "+name+"\n") {
			t.Errorf("chains off: %s has no row:\n%s", name, scr)
		}
	}
	if got := shortPath(m); !slices.Equal(got, before) {
		t.Errorf("chains off moved the cursor from %q to %q", before, got)
	}
	send(m, keys("z")...)
	if got := shortPath(m); !slices.Equal(got, before) {
		t.Errorf("chains on again moved the cursor to %q", got)
	}
	// Closing the chain row hides its children; the row stays one chain.
	send(m, keys("home", "enter")...)
	if scr := screen(m); strings.Contains(scr, "densityPhaseD") || !strings.Contains(scr, "▸ runtime.goexit › … ›") {
		t.Errorf("enter did not close the chain row:\n%s", scr)
	}
}

// A search match inside a chain heads a row of its own, with the cursor on it.
func TestSearchInsideChain(t *testing.T) {
	m := New(newFake(demoSnapshot(660, 330)), Options{Width: 120, Height: 40})
	send(m, keys("c", "/")...)
	send(m, typed("cmdWorkload")...)
	send(m, keys("enter")...)
	r := m.tree.rows[m.tree.cursor]
	if got := m.tree.prof.shorts[r.head().fn]; got != "main.cmdWorkload" {
		t.Fatalf("the cursor row starts at %s:\n%s", got, screen(m))
	}
	if got := shortPath(m); !slices.Contains(got, "main.cmdWorkload") {
		t.Errorf("cursor path %q", got)
	}
}

// Indentation stays within two fifths of the name column, so that a name 30 frames
// deep keeps most of an 80-column row.
func TestCompactIndent(t *testing.T) {
	for _, tc := range []struct{ depth, nameW, want int }{
		{0, 50, 0}, {1, 50, 2}, {6, 50, 12}, {7, 50, 13}, {14, 50, 20}, {30, 50, 20}, {30, 12, 4},
	} {
		if got := indentWidth(tc.depth, tc.nameW); got != tc.want {
			t.Errorf("indentWidth(%d, %d) = %d, want %d", tc.depth, tc.nameW, got, tc.want)
		}
	}
	// 31 frames with a sibling at every level, so that no chain forms.
	var samples []sample
	var stack []string
	funcs := map[string]cct.Func{}
	for d := range 31 {
		name := "deep.frame" + strings.Repeat("x", 2) + string(rune('A'+d%26)) + string(rune('a'+d/26))
		side := "side.branch" + string(rune('A'+d%26)) + string(rune('a'+d/26))
		funcs[name], funcs[side] = cct.Func{Name: name}, cct.Func{Name: side}
		stack = append([]string{name}, stack...)
		samples = append(samples, sample{append([]string{side}, stack...), 1, 10, 10, 0})
		if d == 30 {
			samples = append(samples, sample{slices.Clone(stack), 1, 1000, 1000, 0})
		}
	}
	m := New(newFake(buildTreeOf(funcs, samples, inOrder(len(samples)))), Options{Width: 80, Height: 24})
	leaf := stack[0]
	if got := m.tree.prof.names[m.tree.rows[m.tree.cursor].g.fn]; got != leaf {
		t.Fatalf("the first screen is on %s, want the leaf %s", got, leaf)
	}
	if scr := screen(m); !wholeName(scr, leaf) {
		t.Errorf("the name 31 frames deep is cut at 80 columns:\n%s", scr)
	}
}

// [cctop probes] is left out of the flat ranking until P, and rows of frames with no
// calls of their own show no calls.
func TestProbesAndNoCalls(t *testing.T) {
	s := demoSnapshot(660, 330)
	s.Metric = "calls"
	m := New(newFake(s), Options{Width: 80, Height: 24})
	send(m, keys("t")...)
	if scr := screen(m); strings.Contains(scr, cct.ProbesName) {
		t.Errorf("the flat view ranks %s:\n%s", cct.ProbesName, scr)
	}
	// The footer follows the view: no folds in the flat list, P offered, t goes back.
	lines := strings.Split(screen(m), "\n")
	if foot := lines[len(lines)-1]; !strings.Contains(foot, "P probe cost") || !strings.Contains(foot, "t tree") || strings.Contains(foot, "fold") {
		t.Errorf("flat view footer %q", foot)
	}
	send(m, keys("P")...)
	scr := screen(m)
	if !strings.Contains(scr, cct.ProbesName) {
		t.Fatalf("P did not rank %s:\n%s", cct.ProbesName, scr)
	}
	callsOf := func(scr, name string) string {
		for _, l := range strings.Split(scr, "\n") {
			if strings.HasSuffix(strings.TrimRight(l, " "), name) {
				return strings.TrimSpace(l[14:22]) // the metric column
			}
		}
		return "no row"
	}
	for _, name := range []string{cct.ProbesName, "do_syscall_64", "[truncated]"} {
		if got := callsOf(scr, name); got != "" {
			t.Errorf("%s shows calls %q", name, got)
		}
	}
	if got := callsOf(scr, "workload.densityLeaf"); got == "" || got == "no row" {
		t.Errorf("densityLeaf shows calls %q", got)
	}
	send(m, keys("P")...)
	if _, ok := rowsByName(m)[cct.ProbesName]; ok {
		t.Errorf("P again still ranks %s", cct.ProbesName)
	}
}

// [cctop probes] is no row of the top-down or bottom-up view either until P
// (issue 29): cctop's own cost under a hot function read as the program's
// hottest code. The rows' totals still hold its time.
func TestProbesLeftOutOfTrees(t *testing.T) {
	s := demoSnapshot(660, 330)
	m := New(newFake(s), Options{Width: 120, Height: 60})
	shown := func() bool { _, ok := rowsByName(m)[cct.ProbesName]; return ok }
	send(m, keys("e")...)
	if shown() {
		t.Errorf("the top-down view shows %s:\n%s", cct.ProbesName, screen(m))
	}
	send(m, keys("P", "e")...)
	if !shown() {
		t.Errorf("P did not show %s in the top-down view:\n%s", cct.ProbesName, screen(m))
	}
	send(m, keys("P", "i")...)
	if shown() {
		t.Errorf("the bottom-up view shows %s:\n%s", cct.ProbesName, screen(m))
	}
	send(m, keys("P")...)
	if !shown() {
		t.Errorf("P did not show %s in the bottom-up view:\n%s", cct.ProbesName, screen(m))
	}
}

// TestChainTextProcess: a chain that starts at a process keeps the process
// (comm and pid) whole and shortens the function it leads to from the
// left; another chain shortens its first name first.
func TestChainTextProcess(t *testing.T) {
	proc, last := "cctop [pid 28754]", "workload.densityRounds"
	for _, c := range []struct {
		room      int
		keepFirst bool
		want      string
	}{
		{80, true, "cctop [pid 28754] › … › workload.densityRounds (10)"},
		{40, true, "cctop [pid 28754] › … › …sityRounds (10)"},
		{40, false, "… › workload.densityRounds (10)"},
		{50, false, "cctop [pid 2875… › … › workload.densityRounds (10)"},
		{20, true, "… › workload.densit…"},
	} {
		if got := chainText(proc, last, 10, c.room, c.keepFirst); got != c.want || ansi.StringWidth(got) > c.room {
			t.Errorf("room %d keepFirst %v: %q, want %q", c.room, c.keepFirst, got, c.want)
		}
	}
}

// pgFuncs are the functions of a profile of three processes: two postgres backends
// and pgbench.
var pgFuncs = map[string]cct.Func{
	"pg1":   cct.ProcessFunc(101, "postgres: postgres pgbench [local] SELECT", "postgres"),
	"pg2":   cct.ProcessFunc(102, "postgres: postgres pgbench [local] idle", "postgres"),
	"bench": cct.ProcessFunc(200, "pgbench -S -c 4", "pgbench"),
	"exec":  {Name: "exec_simple_query", Module: "/usr/lib/postgresql/15/bin/postgres"},
	"main":  {Name: "main", Module: "/usr/bin/pgbench"},
}

// TestProcessesByName: a profile of several processes opens with each by comm and
// pid; M merges those of one name into a row that counts them and sums their time, and
// back.
func TestProcessesByName(t *testing.T) {
	samples := []sample{
		{[]string{"exec", "pg1"}, 101, 40, 40, 0},
		{[]string{"exec", "pg2"}, 102, 35, 35, 0},
		{[]string{"main", "bench"}, 200, 25, 25, 0},
	}
	m := New(newFake(buildTreeOf(pgFuncs, samples, inOrder(len(samples)))), Options{Width: 100, Height: 24})
	scr := screen(m)
	for _, want := range []string{"postgres [pid 101]", "postgres [pid 102]", "pgbench [pid 200]"} {
		if !strings.Contains(scr, want) {
			t.Errorf("%q is not on the first screen:\n%s", want, scr)
		}
	}
	send(m, press("M"))
	scr = screen(m)
	if !regexp.MustCompile(`75\.0%.*postgres \(2 processes\)`).MatchString(scr) || strings.Contains(scr, "[pid 101]") ||
		!regexp.MustCompile(`25\.0%.*pgbench`).MatchString(scr) {
		t.Errorf("M did not merge the postgres processes into one row of 75%%:\n%s", scr)
	}
	send(m, press("M"))
	if scr = screen(m); !strings.Contains(scr, "postgres [pid 102]") {
		t.Errorf("M again did not show the processes by pid:\n%s", scr)
	}
}

// TestProcessesFlatAndThreads: in a profile of several processes the flat view has a
// row per function and process (per comm with M), as perf report's comm,sym; the thread
// filter steps through the threads process by process and names each thread's process.
func TestProcessesFlatAndThreads(t *testing.T) {
	samples := []sample{
		{[]string{"exec", "pg1"}, 101, 40, 40, 0},
		{[]string{"exec", "pg2"}, 105, 35, 35, 0},
		{[]string{"main", "bench"}, 200, 25, 25, 0},
	}
	snap := buildTreeOf(pgFuncs, samples, inOrder(len(samples)))
	snap.Threads = []cct.Thread{{TID: 200, PID: 200, Name: "pgbench"}, {TID: 105, PID: 102, Name: "bgworker"},
		{TID: 101, PID: 101, Name: "postgres"}, {TID: 102, PID: 102, Name: "postgres"}}
	m := New(newFake(snap), Options{Width: 100, Height: 24})
	send(m, press("t"))
	scr := screen(m)
	for _, re := range []string{`40\.0%.*exec_simple_query · postgres \[pid 101\]`, `35\.0%.*exec_simple_query · postgres \[pid 102\]`, `25\.0%.*main · pgbench \[pid 200\]`} {
		if !regexp.MustCompile(re).MatchString(scr) {
			t.Errorf("flat view: no row %s:\n%s", re, scr)
		}
	}
	if strings.Contains(scr, "[local] SELECT") {
		t.Errorf("a process is a row of its own in the flat view:\n%s", scr)
	}
	send(m, press("M"))
	if scr = screen(m); !regexp.MustCompile(`75\.0%.*exec_simple_query · postgres\s`).MatchString(scr) {
		t.Errorf("flat view by name: no row of 75%% for exec_simple_query in postgres:\n%s", scr)
	}
	for _, want := range []string{"thread 101 (postgres) of pid 101", "thread 102 (postgres) of pid 102", "thread 105 (bgworker) of pid 102 (postgres)",
		"thread 200 (pgbench) of pid 200", "all threads"} {
		send(m, press("T"))
		if scr = screen(m); !strings.Contains(scr, want) {
			t.Errorf("T: want %q on the status line:\n%s", want, scr)
		}
	}
}
