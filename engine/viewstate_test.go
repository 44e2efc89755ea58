package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/tui"
)

// fakeTarget is a viewTarget with the comparisons in offer, and calls that
// are the samples times two under density, or none with noCalls.
type fakeTarget struct {
	tree     *cct.Tree
	offer    map[string][]float64
	noCalls  bool
	reweigh  bool
	saveErr  error
	saved    []string
	said     []tea.Msg
	weighing []correct.Params
	flowed   []float64 // the flow-corrected calls, nil: none
	off      bool      // the profile has time off the CPU
	refuse   map[string]bool
	cov      *correct.Coverage // nil: unknown
}

func (f *fakeTarget) shown() *cct.Tree { return f.tree }
func (f *fakeTarget) calls(p correct.Params) []float64 {
	if f.noCalls {
		return nil
	}
	f.weighing = append(f.weighing, p)
	w := selfOf(f.tree, func(m cct.Metrics) int64 { return m.Samples })
	if p.Density {
		for i := range w {
			w[i] *= 2
		}
	}
	return w
}
func (f *fakeTarget) flowCalls(correct.Params) []float64 { return f.flowed }
func (f *fakeTarget) compared(name string, _ bool, _ correct.Params) ([]float64, bool) {
	w, ok := f.offer[name]
	return w, ok
}
func (f *fakeTarget) reweighs() bool { return f.reweigh }
func (f *fakeTarget) save(path string, _ correct.Params) error {
	f.saved = append(f.saved, path)
	return f.saveErr
}
func (f *fakeTarget) send(m tea.Msg) { f.said = append(f.said, m) }
func (f *fakeTarget) offCPU() bool   { return f.off }
func (f *fakeTarget) coverage() (correct.Coverage, bool) {
	if f.cov == nil {
		return correct.Coverage{}, false
	}
	return *f.cov, true
}
func (f *fakeTarget) switchMode(mode string) error {
	if f.refuse[mode] {
		return fmt.Errorf("no %s here", mode)
	}
	return nil
}

// lastStatus is the text of the last status message, "" when the last
// message was none.
func (f *fakeTarget) lastStatus() string {
	if len(f.said) == 0 {
		return ""
	}
	if m, ok := f.said[len(f.said)-1].(tui.StatusMsg); ok {
		return m.Text
	}
	return ""
}

// smallTree is main → {a, b}: a with 3 samples of 10 ns, b with 1.
func smallTree() *cct.Tree {
	t := cct.New()
	main, a, b := t.Intern(cct.Func{Name: "main"}), t.Intern(cct.Func{Name: "a"}), t.Intern(cct.Func{Name: "b"})
	t.Add([]cct.Frame{{Func: a}, {Func: main}}, 1, cct.Metrics{Samples: 3, Time: 30})
	t.Add([]cct.Frame{{Func: b}, {Func: main}}, 1, cct.Metrics{Samples: 1, Time: 10})
	return t
}

// TestViewStateActions: the view's keys do and say the same whatever the
// source, and cycling the comparison skips what the source lacks.
func TestViewStateActions(t *testing.T) {
	tr := smallTree()
	exact := []float64{0, 0, 5, 5}
	f := &fakeTarget{tree: tr, offer: map[string][]float64{"exact run": exact}, reweigh: true}
	v := newViewState(correct.Params{Density: true, Latency: true, Alpha: 1}, "uncorrected samples", "")

	// Without a baseline or base file on offer: straight to the exact run,
	// which counts calls while time is shown.
	v.act(tui.Action{Kind: tui.CycleComparison}, f)
	if got := comparisons[v.comparison]; got != "exact run" {
		t.Fatalf("after uncorrected samples: %q, want the exact run", got)
	}
	if got := f.lastStatus(); got != "the exact run counts calls: press m to compare calls" {
		t.Errorf("status %q", got)
	}
	var s tui.Snapshot
	v.show(&s, f)
	if s.Metric != "time" || !slices.Equal(s.Compare, exact) || s.Header.Comparison != "exact run" || s.Header.Overlap != 75 {
		t.Errorf("vs the exact run: metric %s, compare %v, header %+v", s.Metric, s.Compare, s.Header)
	}
	v.act(tui.Action{Kind: tui.CycleComparison}, f)
	v.show(&s, f)
	if s.Header.Comparison != "" || s.Compare != nil || s.Header.Overlap >= 0 {
		t.Errorf("after the exact run: %q, compare %v, overlap %v; want none", s.Header.Comparison, s.Compare, s.Header.Overlap)
	}
	v.act(tui.Action{Kind: tui.CycleComparison}, f)
	v.show(&s, f)
	// Time against the samples it is made of measures no correction: the
	// comparison is named but draws nothing.
	if s.Header.Comparison != "uncorrected samples" || s.Compare != nil || s.Header.Overlap >= 0 {
		t.Errorf("back to the samples, time shown: %q, compare %v, overlap %v", s.Header.Comparison, s.Compare, s.Header.Overlap)
	}
	v.act(tui.Action{Kind: tui.SetMetric, Value: 1}, f)
	v.show(&s, f)
	if s.Metric != "calls" || !slices.Equal(s.Compare, []float64{0, 0, 3, 1}) || s.Header.Overlap != 100 { // the fake's calls are twice the samples
		t.Errorf("calls against the samples: metric %s, compare %v, overlap %v", s.Metric, s.Compare, s.Header.Overlap)
	}
	v.act(tui.Action{Kind: tui.SetMetric, Value: 0}, f)

	// A baseline on offer but not taken: chosen, said, and nothing to
	// compare with.
	f.offer["baseline"] = nil
	f.said = nil
	v.act(tui.Action{Kind: tui.CycleComparison}, f)
	v.show(&s, f)
	if s.Header.Comparison != "baseline" || f.lastStatus() != "no baseline yet: press b to take one" || s.Compare != nil || s.Header.Overlap >= 0 {
		t.Errorf("an empty baseline: %q, said %q, compare %v, overlap %v", s.Header.Comparison, f.said, s.Compare, s.Header.Overlap)
	}

	// The toggles flip, say so, and the calls are weighed under them.
	v.act(tui.Action{Kind: tui.SetMetric, Value: 1}, f)
	v.act(tui.Action{Kind: tui.ToggleDensity}, f)
	if got := f.lastStatus(); got != "density correction off" || v.params.Density {
		t.Errorf("d: %q, density %v", got, v.params.Density)
	}
	v.show(&s, f)
	if s.Metric != "calls" || !slices.Equal(s.Self, []float64{0, 0, 3, 1}) || s.Header.Density || !s.Header.Latency {
		t.Errorf("calls without density: metric %s, self %v, header %+v", s.Metric, s.Self, s.Header)
	}
	v.act(tui.Action{Kind: tui.ToggleLatency}, f)
	v.act(tui.Action{Kind: tui.ToggleDensity}, f)
	if got := f.lastStatus(); got != "density correction on" || f.said[len(f.said)-2].(tui.StatusMsg).Text != "latency correction off" {
		t.Errorf("L, d: %q", f.said)
	}
	v.show(&s, f)
	if last := f.weighing[len(f.weighing)-1]; !last.Density || last.Latency || !slices.Equal(s.Self, []float64{0, 0, 6, 2}) {
		t.Errorf("weighed under %+v: %v", last, s.Self)
	}

	// Alpha steps where the target weighs anew, and is not the view's to
	// take where it does not.
	if !v.act(tui.Action{Kind: tui.AlphaUp}, f) || v.params.Alpha != 10 {
		t.Errorf("alpha up from 1: %v", v.params.Alpha)
	}
	f.reweigh = false
	if v.act(tui.Action{Kind: tui.AlphaDown}, f) || v.params.Alpha != 10 {
		t.Errorf("alpha down on a saved profile: taken, alpha %v", v.params.Alpha)
	}
	for _, k := range []tui.ActionKind{tui.Pause, tui.Reset, tui.Baseline, tui.RateUp, tui.CycleTrigger, tui.SetThread} {
		if v.act(tui.Action{Kind: k}, f) {
			t.Errorf("%v taken by the view", k)
		}
	}

	// Calls chosen where none were counted: time is shown, and said.
	f.noCalls, f.said = true, nil
	v.act(tui.Action{Kind: tui.SetMetric, Value: 1}, f)
	v.show(&s, f)
	if s.Metric != "time" || !slices.Equal(s.Self, []float64{0, 0, 30, 10}) || f.lastStatus() == "" {
		t.Errorf("calls without calls: metric %s, self %v, said %q", s.Metric, s.Self, f.said)
	}
	// The source's suggestion does not override the user's choice.
	v.suggestMetric("time")
	if v.metric != "calls" {
		t.Errorf("metric %s after a suggestion: the user chose calls", v.metric)
	}

	// w: flow-corrected calls where the target has them, shown as calls
	// and named in the header; the uncorrected ones until it does.
	f.noCalls, f.reweigh = false, true
	v.act(tui.Action{Kind: tui.SetMetric, Value: 0}, f)
	v.act(tui.Action{Kind: tui.ToggleFlow}, f)
	v.show(&s, f)
	if !v.flow || s.Metric != "calls" || !s.Header.Flow || !slices.Equal(s.Self, []float64{0, 0, 6, 2}) || !strings.HasPrefix(f.lastStatus(), "flow correction on") {
		t.Errorf("w with no correction yet: flow %v, metric %s, self %v, header %+v, said %q", v.flow, s.Metric, s.Self, s.Header, f.lastStatus())
	}
	f.flowed = []float64{0, 0, 4, 4, 1}
	v.show(&s, f)
	if !slices.Equal(s.Self, f.flowed) {
		t.Errorf("flow-corrected calls %v, shown %v", f.flowed, s.Self)
	}
	v.act(tui.Action{Kind: tui.ToggleFlow}, f)
	v.show(&s, f)
	if v.flow || s.Header.Flow || !slices.Equal(s.Self, []float64{0, 0, 6, 2}) || f.lastStatus() != "flow correction off" {
		t.Errorf("w again: flow %v, self %v, said %q", v.flow, s.Self, f.lastStatus())
	}
	// A saved profile without the correction: w says so and stays off.
	f.reweigh, f.flowed = false, nil
	v.act(tui.Action{Kind: tui.ToggleFlow}, f)
	if v.flow || !strings.Contains(f.lastStatus(), "no flow-corrected calls") {
		t.Errorf("w on a profile without calls_flow: flow %v, said %q", v.flow, f.lastStatus())
	}
}

// TestViewStateExport: a default name with the time, the status naming
// the file, an error as an error.
func TestViewStateExport(t *testing.T) {
	f := &fakeTarget{tree: smallTree()}
	v := newViewState(correct.Params{}, "", "")
	v.export("", f)
	if len(f.saved) != 1 || !regexp.MustCompile(`^cctop-[0-9]{8}-[0-9]{6}\.pb\.gz$`).MatchString(f.saved[0]) || f.lastStatus() != "exported to "+f.saved[0] {
		t.Errorf("saved %q, said %q", f.saved, f.said)
	}
	f.saveErr = errors.New("disk full")
	v.export("x.pb.gz", f)
	if m, ok := f.said[len(f.said)-1].(tui.ErrorMsg); !ok || m.Err != f.saveErr {
		t.Errorf("a failed export said %v", f.said[len(f.said)-1])
	}
}

// TestFileSourceView: a saved profile's calls follow the density and
// latency toggles through the estimates it holds, alpha stays as recorded,
// and c cycles through the base file, none and the samples.
func TestFileSourceView(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, scale int64) string {
		tr := smallTree()
		for i := 2; i < tr.Len(); i++ {
			n := tr.Node(cct.NodeID(i))
			tr.AddSelf(cct.NodeID(i), 1, cct.Metrics{Calls: scale * 10 * n.Self.Samples, CallsAdj: scale * 100 * n.Self.Samples * int64(i)})
		}
		path := filepath.Join(dir, name)
		meta := cct.Meta{Calls: true, Comments: []string{"cctop record", "alpha=0.5"}}
		if err := writeProfile(path, "pprof", tr, meta); err != nil {
			t.Fatal(err)
		}
		return path
	}
	s, err := newFileSource(write("p.pb.gz", 1), write("base.pb.gz", 2))
	if err != nil {
		t.Fatal(err)
	}
	// The file numbers its nodes as it likes: weigh by name.
	byName := func(snap tui.Snapshot, w []float64) string {
		var out []string
		for i := 1; i < snap.Tree.Len(); i++ {
			n := snap.Tree.Node(cct.NodeID(i))
			if n.Self.Samples > 0 {
				out = append(out, fmt.Sprintf("%s=%g", snap.Tree.Func(n.Func).Name, w[i]))
			}
		}
		slices.Sort(out)
		return fmt.Sprint(out)
	}
	check := func(what, wantSelf string, wantDensity, wantLatency bool) {
		t.Helper()
		snap := s.Snapshot()
		h := snap.Header
		if snap.Metric != "calls" || byName(snap, snap.Self) != wantSelf || h.Density != wantDensity || h.Latency != wantLatency || h.Alpha != 0.5 {
			t.Errorf("%s: metric %s, self %s, header %+v; want calls %s", what, snap.Metric, byName(snap, snap.Self), h, wantSelf)
		}
	}
	// CallsAdj was written as 100 × samples × node ID: a (3 samples) is
	// node 2, b node 3.
	check("as opened", "[a=600 b=300]", true, true)
	s.do(tui.Action{Kind: tui.ToggleLatency})
	check("latency off", "[a=30 b=10]", true, false)
	s.do(tui.Action{Kind: tui.ToggleDensity})
	check("both off", "[a=3 b=1]", false, false)
	s.do(tui.Action{Kind: tui.ToggleLatency})
	check("latency alone, which the file does not hold", "[a=3 b=1]", false, true)
	s.do(tui.Action{Kind: tui.ToggleDensity})
	check("both on again", "[a=600 b=300]", true, true)

	var said []string
	for len(s.msgs) > 0 {
		if m, ok := (<-s.msgs).(tui.StatusMsg); ok {
			said = append(said, m.Text)
		}
	}
	if want := []string{"latency correction off", "density correction off", "latency correction on", "density correction on"}; !slices.Equal(said, want) {
		t.Errorf("said %q, want %q", said, want)
	}
	s.do(tui.Action{Kind: tui.AlphaUp})
	if m := <-s.msgs; m != (tui.StatusMsg{Text: "AlphaUp needs a live target"}) {
		t.Errorf("alpha on a file said %v", m)
	}
	check("after alpha", "[a=600 b=300]", true, true)

	snap := s.Snapshot()
	if h := snap.Header; h.Comparison != "base file" || byName(snap, snap.Compare) != "[a=1200 b=600]" || h.Overlap != 100 {
		t.Errorf("vs the base file: %q %s, overlap %v", h.Comparison, byName(snap, snap.Compare), h.Overlap)
	}
	var cycle []string
	for range 3 {
		s.do(tui.Action{Kind: tui.CycleComparison})
		cycle = append(cycle, s.Snapshot().Header.Comparison)
	}
	if want := []string{"", "uncorrected samples", "base file"}; !slices.Equal(cycle, want) {
		t.Errorf("c cycles %q, want %q", cycle, want)
	}
}

// TestViewStateModes: the mode picks the time shown, idle threads are left
// out of the time off the CPU until H, the header says the on-CPU share of
// the threads shown, and W skips the modes a profile cannot show.
func TestViewStateModes(t *testing.T) {
	tr := cct.New()
	work := tr.Intern(cct.Func{Name: "work"})
	nap := tr.Intern(cct.Func{Name: cct.OffCPUFrame("nanosleep")})
	wait := tr.Intern(cct.Func{Name: cct.OffCPUFrame("futex")})
	// Thread 1 works 30 ms and sleeps 70 ms; thread 2 waits 1 s, idle.
	busy := tr.Add([]cct.Frame{{Func: work}}, 1, cct.Metrics{Samples: 30, Time: 30e6, Wall: 30e6})
	slept := tr.Add([]cct.Frame{{Func: nap}, {Func: work}}, 1, cct.Metrics{OffCPU: 70e6, Wall: 70e6})
	idle := tr.Add([]cct.Frame{{Func: wait}}, 2, cct.Metrics{OffCPU: 1e9, Wall: 1e9})
	f := &fakeTarget{tree: tr, off: true, refuse: map[string]bool{}}
	v := newViewState(correct.Params{}, "", ModeWall)
	var s tui.Snapshot
	v.show(&s, f)
	if s.Self[busy] != 30e6 || s.Self[slept] != 70e6 || s.Self[idle] != 0 {
		t.Errorf("wall, idle hidden: self %v", s.Self)
	}
	if h := s.Header; h.Mode != ModeWall || h.IdleHidden != 1 || h.OnCPU < 29.9 || h.OnCPU > 30.1 {
		t.Errorf("header %+v: want wall, 1 idle hidden, 30%% on the CPU", h)
	}
	v.act(tui.Action{Kind: tui.ToggleIdle}, f)
	v.show(&s, f)
	if s.Self[idle] != 1e9 || s.Header.IdleHidden != 0 {
		t.Errorf("idle shown: self %v, header %+v", s.Self, s.Header)
	}
	// W: wall → offcpu → cpu, the file way: offcpu refused, so cpu.
	f.refuse[ModeOffCPU] = true
	v.act(tui.Action{Kind: tui.CycleMode}, f)
	v.show(&s, f)
	if v.mode != ModeCPU || s.Self[busy] != 30e6 || s.Self[slept] != 0 {
		t.Errorf("after W with offcpu refused: mode %s, self %v", v.mode, s.Self)
	}
	if !slices.ContainsFunc(f.said, func(m tea.Msg) bool {
		st, ok := m.(tui.StatusMsg)
		return ok && strings.Contains(st.Text, "no offcpu here")
	}) {
		t.Errorf("the refusal was not said: %v", f.said)
	}
	delete(f.refuse, ModeOffCPU)
	v.act(tui.Action{Kind: tui.CycleMode}, f) // cpu → wall
	v.act(tui.Action{Kind: tui.CycleMode}, f) // wall → offcpu
	v.act(tui.Action{Kind: tui.ToggleIdle}, f)
	v.show(&s, f)
	if v.mode != ModeOffCPU || s.Self[busy] != 0 || s.Self[slept] != 70e6 || s.Self[idle] != 0 {
		t.Errorf("offcpu: mode %s, self %v", v.mode, s.Self)
	}
	// A profile without time off the CPU has no mode in its header.
	f.off = false
	v.show(&s, f)
	if s.Header.Mode != "" || s.Header.OnCPU >= 0 {
		t.Errorf("no off-CPU data: header %+v", s.Header)
	}
}

// TestCoverageRuleShowsTime: with density on and too few counted samples,
// the view shows time whatever the metric, the header says why, and the
// comparison with uncorrected samples is not drawn (time against samples
// measures no correction); with enough, calls and the overlap come back.
func TestCoverageRuleShowsTime(t *testing.T) {
	tree := cct.New()
	a := tree.Intern(cct.Func{Name: "a"})
	b := tree.Intern(cct.Func{Name: "b"})
	tree.Add([]cct.Frame{{Func: a}}, 1, cct.Metrics{Samples: 3, Time: 30})
	tree.Add([]cct.Frame{{Func: b}, {Func: a}}, 1, cct.Metrics{Samples: 1, Time: 10})
	f := &fakeTarget{tree: tree, cov: &correct.Coverage{Counted: 138, Samples: 4867}}
	v := newViewState(correct.DefaultParams(), "uncorrected samples", ModeCPU)
	v.suggestMetric("calls")
	var s tui.Snapshot
	v.show(&s, f)
	if s.Metric != "time" || s.Compare != nil || s.Header.Overlap >= 0 {
		t.Errorf("a sliver counted: metric %q, compare %v, overlap %v; want time, none", s.Metric, s.Compare, s.Header.Overlap)
	}
	if !strings.Contains(s.Header.DensityWhy, "3% of samples counted, 50% needed") {
		t.Errorf("DensityWhy %q", s.Header.DensityWhy)
	}
	f.cov = &correct.Coverage{Counted: 4000, Weighed: 3000, Samples: 4867}
	s = tui.Snapshot{}
	v.show(&s, f)
	if s.Metric != "calls" || s.Compare == nil || s.Header.Overlap < 0 || s.Header.DensityWhy != "" {
		t.Errorf("counted: metric %q, compare %v, overlap %v, why %q", s.Metric, s.Compare, s.Header.Overlap, s.Header.DensityWhy)
	}
	// Density off: latency alone needs no counts.
	f.cov = &correct.Coverage{}
	v.act(tui.Action{Kind: tui.ToggleDensity}, f)
	s = tui.Snapshot{}
	v.show(&s, f)
	if s.Header.DensityWhy != "" || s.Metric != "calls" {
		t.Errorf("density off: why %q, metric %q", s.Header.DensityWhy, s.Metric)
	}
}

// TestFileSourceCoverage: a recorded profile whose counted samples are a
// sliver (call_coverage= in its comments, as record writes it) opens on
// time, its header saying why; one counted enough opens on calls, and one
// from elsewhere (no such comment) as before.
func TestFileSourceCoverage(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, comments ...string) string {
		tr := smallTree()
		for i := 2; i < tr.Len(); i++ {
			n := tr.Node(cct.NodeID(i))
			tr.AddSelf(cct.NodeID(i), 1, cct.Metrics{Calls: 10 * n.Self.Samples, CallsAdj: 10 * n.Self.Samples})
		}
		path := filepath.Join(dir, name)
		meta := cct.Meta{Calls: true, Comments: append([]string{"cctop record", "alpha=0"}, comments...)}
		if err := writeProfile(path, "pprof", tr, meta); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		name, comment, metric, why string
	}{
		{"sliver", "call_coverage=138/4867 samples carry a call count, 138 of them a call", "time", "3% of samples counted, 50% needed"},
		{"few calls", "call_coverage=3665/4186 samples carry a call count, 5 of them a call", "time", "only 5 counted a call, 100 needed"},
		{"covered", "call_coverage=4000/4867 samples carry a call count, 3000 of them a call", "calls", ""},
		{"elsewhere", "", "calls", ""},
	} {
		var comments []string
		if c.comment != "" {
			comments = append(comments, c.comment)
		}
		s, err := newFileSource(write(c.name+".pb.gz", comments...), "")
		if err != nil {
			t.Fatal(err)
		}
		snap := s.Snapshot()
		if snap.Metric != c.metric || snap.Header.DensityWhy != c.why {
			t.Errorf("%s: metric %q, why %q; want %q, %q", c.name, snap.Metric, snap.Header.DensityWhy, c.metric, c.why)
		}
	}
}
