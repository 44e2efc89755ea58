package engine

import (
	"path/filepath"
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
	self := make([]float64, tr.Len())
	for i := range self {
		self[i] = float64(tr.Node(cct.NodeID(i)).Self.Samples)
	}
	x := newFlowFixer()
	defer x.close()
	factor, _ := x.factors(tr, self)
	counted := map[string]bool{}
	exact := map[correct.Edge]float64{}
	for _, f := range []string{"stageParse", "stageTransform", "stageEmit"} {
		counted[workloadPkg+f] = true
		exact[correct.Edge{Caller: workloadPkg + "stageRun", Callee: workloadPkg + f}] = 1
	}
	raw := projectEdges(tr, self, counted)
	fixed := make([]float64, len(self))
	for i := range self {
		fixed[i] = self[i] * factor[i]
	}
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
	fromFile := map[correct.Edge]float64{}
	for i := 0; i < back.Len(); i++ {
		n := back.Node(cct.NodeID(i))
		if n.Parent == cct.NoNode || n.Parent == 0 {
			continue
		}
		e := correct.Edge{Caller: back.Func(back.Node(n.Parent).Func).Name, Callee: back.Func(n.Func).Name}
		if exact[e] > 0 {
			fromFile[e] += float64(n.Self.CallsFlow)
		}
	}
	if ov := correct.Overlap(fromFile, exact); ov < 95 {
		t.Errorf("calls_flow/count of stageRun's edges in the file %v: overlap %.1f%%, want >= 95%%", fromFile, ov)
	}
}
