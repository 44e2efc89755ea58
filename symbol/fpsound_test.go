package symbol

import (
	"os"
	"reflect"
	"testing"
)

//go:noinline
func fpStepProbe(x int) int { return x*3 + 1 }

// TestFrameStepGoCached: a Go frame keeps its frame pointer whatever its
// .debug_frame says, and FrameStep's answer is kept by pid and pc for
// the resolver's generation: the density workload's frames are Go's, and
// finding the answer anew (mapping, module, pclntab) was a third of a
// sample's ingest.
func TestFrameStepGoCached(t *testing.T) {
	pid := os.Getpid()
	r := NewResolver()
	if err := r.LoadProc(pid); err != nil {
		t.Skip(err)
	}
	pc := uint64(reflect.ValueOf(fpStepProbe).Pointer())
	step, mod := r.FrameStep(pid, pc, true)
	if step != FPKept || mod == "" {
		t.Fatalf("a Go function's entry: %v in %q, want FPKept in this binary", step, mod)
	}
	// The answer comes from the cache: a different one planted there is
	// returned, until the generation moves.
	r.fpSteps.slot(pid, pc).step = FPLost
	if step, _ := r.FrameStep(pid, pc, true); step != FPLost {
		t.Fatalf("second call: %v, want the cached answer", step)
	}
	r.gen++
	if step, _ := r.FrameStep(pid, pc, true); step != FPKept {
		t.Errorf("after the generation moved: %v, want FPKept found again", step)
	}
	if step, mod := r.FrameStep(pid+1<<22, pc, true); step != FPNoInfo || mod != "" {
		t.Errorf("another pid: %v %q, want nothing known", step, mod)
	}
}
