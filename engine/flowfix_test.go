package engine

import (
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/internal/testutil"
)

// TestFlowStages: the stages workload, recorded with no call counter, has
// one block of stageRun call three functions of cost 1:6:3. Raw samples
// share the three edges by time, about 0.1/0.6/0.3; corrected by the
// control flow of stageRun's machine code they are equal, as the calls
// are (the acceptance of issue 16: an overlap of 95% or more).
func TestFlowStages(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	rec := recordFor(t, 3*time.Second, cctopBin, "workload", "stages", "-loop")
	tr := rec.Tree()
	self := selfOf(tr, func(m cct.Metrics) int64 { return m.Samples })
	x := newFlowFixer()
	defer x.close()
	fixed := x.pass(tr, self).w
	counted := map[string]bool{}
	exact := map[correct.Edge]float64{}
	for _, f := range []string{"stageParse", "stageTransform", "stageEmit"} {
		counted[workloadPkg+f] = true
		exact[correct.Edge{Caller: workloadPkg + "stageRun", Callee: workloadPkg + f}] = 1
	}
	raw := projectEdges(tr, self, counted)
	flowed := projectEdges(tr, fixed, counted)
	rawOv, flowOv := correct.Overlap(raw, exact), correct.Overlap(flowed, exact)
	t.Logf("raw edges %v (overlap %.1f%%); flow %v (overlap %.1f%%); %+v", raw, rawOv, flowed, flowOv, x.stats)
	if len(raw) != 3 {
		t.Fatalf("edges from stageRun: %v", raw)
	}
	if flowOv < 95 {
		t.Errorf("flow-corrected edges overlap the exact counts by %.1f%%, want 95%% or more (raw %.1f%%)", flowOv, rawOv)
	}
	if x.stats.Contexts == 0 {
		t.Error("no context corrected")
	}

	// The recording's profile carries the same correction as
	// calls_flow/count, readable back.
	path := filepath.Join(t.TempDir(), "s.pb.gz")
	if err := rec.WriteProfile(path, "pprof"); err != nil {
		t.Fatal(err)
	}
	back, meta, err := readTree(path)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Flow {
		t.Fatal("no calls_flow/count column")
	}
	fromFile := flowEdgesOf(back, exact)
	if ov := correct.Overlap(fromFile, exact); ov < 95 {
		t.Errorf("calls_flow/count of stageRun's edges in the file %v: overlap %.1f%%, want >= 95%%", fromFile, ov)
	}
}

// flowEdgesOf is the calls_flow/count of t's contexts on the edges of
// exact, each context's own: the calls the correction gave its edge.
func flowEdgesOf(t *cct.Tree, exact map[correct.Edge]float64) map[correct.Edge]float64 {
	out := map[correct.Edge]float64{}
	for i := 0; i < t.Len(); i++ {
		n := t.Node(cct.NodeID(i))
		if n.Parent == cct.NoNode || n.Parent == 0 {
			continue
		}
		e := correct.Edge{Caller: t.Func(t.Node(n.Parent).Func).Name, Callee: t.Func(n.Func).Name}
		if exact[e] > 0 {
			out[e] += float64(n.Self.CallsFlow)
		}
	}
	return out
}

// TestFlowSharedLeaf: the sharedleaf workload, recorded with no call
// counter. Its stages spend their time in one shared leaf, 1:6:3, and take
// no sample of their own: raw samples give sharedRun's edges the leaf's
// time under each (73% overlap with the equal calls), and a flow
// correction within functions alone gives the stages nothing and the
// leaf's contexts 1:6:3. The relations between levels tie the seven
// contexts below sharedRounds' loop into one class (issue 29): in the
// profile's calls_flow/count, sharedRun's edges overlap the truth by 95%
// or more, and so do the leaf's and all seven.
func TestFlowSharedLeaf(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	rec := recordFor(t, 3*time.Second, cctopBin, "workload", "sharedleaf", "-loop")
	tr := rec.Tree()
	self := selfOf(tr, func(m cct.Metrics) int64 { return m.Samples })
	const pkg = workloadPkg + "shared"
	stages := map[string]bool{}
	run, leaf, all := map[correct.Edge]float64{}, map[correct.Edge]float64{}, map[correct.Edge]float64{}
	all[correct.Edge{Caller: pkg + "Rounds", Callee: pkg + "Run"}] = 1
	for _, f := range []string{"Parse", "Transform", "Emit"} {
		stages[pkg+f] = true
		run[correct.Edge{Caller: pkg + "Run", Callee: pkg + f}] = 1
		leaf[correct.Edge{Caller: pkg + f, Callee: pkg + "Leaf"}] = 1
	}
	maps.Copy(all, run)
	maps.Copy(all, leaf)
	raw := projectEdges(tr, self, stages)
	rawOv := correct.Overlap(raw, run)
	t.Logf("raw: sharedRun's edges %v, overlap %.1f%%", raw, rawOv)
	if len(raw) != 3 || rawOv > 90 {
		t.Fatalf("raw samples on sharedRun's edges %v (overlap %.1f%%): want the three, shared by time", raw, rawOv)
	}

	path := filepath.Join(t.TempDir(), "s.pb.gz")
	if err := rec.WriteProfile(path, "pprof"); err != nil {
		t.Fatal(err)
	}
	back, meta, err := readTree(path)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Flow {
		t.Fatal("no calls_flow/count column")
	}
	for _, c := range []struct {
		what  string
		exact map[correct.Edge]float64
	}{{"sharedRun's edges", run}, {"the leaf's edges", leaf}, {"the seven edges", all}} {
		got := flowEdgesOf(back, c.exact)
		ov := correct.Overlap(got, c.exact)
		t.Logf("calls_flow/count of %s: %v, overlap %.1f%%", c.what, got, ov)
		if ov < 95 {
			t.Errorf("calls_flow/count of %s %v: overlap %.1f%% with the equal calls, want >= 95%% (raw %.1f%%)", c.what, got, ov, rawOv)
		}
	}
}

// TestAnchor: the recursive workload's shape. rounds calls deep and wide
// from one block (FDOM binds them: fixed); wide's inner levels only call
// on, so their contexts weigh nothing while all the leaf time is under
// them. The counter read 13 calls of wide: the 12 the weighed contexts miss
// go to the inner levels by the time under each, and the bound context
// keeps its 1. leaf's contexts weigh 30 calls against a count of 9: they
// are scaled down. A function counted but not in the tree has no context
// to anchor.
func TestAnchor(t *testing.T) {
	tr := cct.New()
	fn := func(name string) cct.FuncID { return tr.Intern(cct.Func{Name: name}) }
	rounds, deep, wide, leaf := fn("rounds"), fn("deep"), fn("wide"), fn("leaf")
	at := func(fs ...cct.FuncID) []cct.Frame { // root first
		st := make([]cct.Frame, len(fs))
		for i, f := range fs {
			st[len(fs)-1-i] = cct.Frame{Func: f, Addr: uint64(0x100 * (i + 1))}
		}
		return st
	}
	ns := func(n int64) cct.Metrics { return cct.Metrics{Time: n, Samples: n} }
	dID := tr.Add(at(rounds, deep), 1, ns(10))
	w2 := tr.Add(at(rounds, wide), 1, cct.Metrics{})
	w1 := tr.Add(at(rounds, wide, wide), 1, cct.Metrics{})
	w0 := tr.Add(at(rounds, wide, wide, wide), 1, ns(20)) // its own loop: a little self time
	l := tr.Add(at(rounds, wide, wide, wide, leaf), 1, ns(80))

	w := make([]float64, tr.Len())
	w[dID], w[w2], w[w0], w[l] = 1, 1, 0, 30
	fixed := make([]bool, tr.Len())
	fixed[dID], fixed[w2] = true, true
	counts := map[string]float64{"deep": 1, "wide": 13, "leaf": 9, "never": 5}
	if n := anchor(tr, w, fixed, counts); n != 3 {
		t.Errorf("anchored %d functions, want 3 (deep, wide, leaf)", n)
	}
	// Under w1 80+20 of time, none its own; under w0 80, 20 its own.
	want := map[cct.NodeID]float64{dID: 1, w2: 1, w1: 12 * 100 / 180.0, w0: 12 * 80 / 180.0, l: 9}
	for id, v := range want {
		if math.Abs(w[id]-v) > 1e-9 {
			t.Errorf("node %d (%s): %v, want %v", id, tr.Func(tr.Node(id).Func).Name, w[id], v)
		}
	}
	if sum := w[w2] + w[w1] + w[w0]; math.Abs(sum-13) > 1e-9 {
		t.Errorf("wide's contexts add up to %v, want its count 13", sum)
	}

	// A function whose contexts are all bound and weigh nothing (a class
	// of contexts that only call on): its count goes by the time under
	// each, as to unbound ones.
	fixed[w1], fixed[w0] = true, true
	w[w2], w[w1], w[w0] = 0, 0, 0
	if n := anchor(tr, w, fixed, map[string]float64{"wide": 18}); n != 1 {
		t.Errorf("all bound, none weighing: anchored %d functions, want 1", n)
	}
	// Under w2 and w1 the time of 20+80, under w0 80.
	for id, v := range map[cct.NodeID]float64{w2: 18 * 100 / 280.0, w1: 18 * 100 / 280.0, w0: 18 * 80 / 280.0} {
		if math.Abs(w[id]-v) > 1e-9 {
			t.Errorf("all bound: node %d: %v, want %v", id, w[id], v)
		}
	}

	// No count: nothing moves.
	before := slices.Clone(w)
	if n := anchor(tr, w, fixed, nil); n != 0 || !slices.Equal(w, before) {
		t.Errorf("with no counts: %d anchored, weights %v → %v", n, before, w)
	}
}
