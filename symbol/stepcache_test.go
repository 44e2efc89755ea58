package symbol

import (
	"encoding/binary"
	"testing"

	"github.com/cctop/cctop/symbol/cfi"
)

// TestStepCacheGeneration: a CFI rule found for a pid and pc is cached,
// and goes when the resolver's generation moves (here another file mapped
// over the same addresses), so that a stale rule never unwinds a frame of
// different code.
func TestStepCacheGeneration(t *testing.T) {
	const pid = 4242
	m, pc := libcMalloc(t)
	r := NewResolver()
	r.AddMapping(pid, m)
	step := func() (UnwindStop, bool) {
		var cur cfi.Regs
		cur.Set(RegPC, pc)
		cur.Set(RegSP, 0x1000)
		var sig bool
		// Every word of the copy a plausible return address, so that the
		// rule's step succeeds.
		stack := make([]byte, 256)
		for i := 0; i < len(stack); i += 8 {
			binary.LittleEndian.PutUint64(stack[i:], 0x7f00_0000_1234)
		}
		return r.step(pid, r.procs[pid], pc, &cur, &stackMem{sp: 0x1000, stack: stack}, &sig)
	}
	first, ok1 := step()
	if !ok1 {
		t.Fatalf("malloc's rule did not step: %v", first)
	}
	if e := r.steps.slot(pid, pc); e.mod == nil || e.pc != pc || e.pid != pid || e.gen != r.gen {
		t.Fatalf("malloc's rule was not cached (step %v %v): %+v", first, ok1, e)
	}
	second, ok2 := step()
	if second != first || ok2 != ok1 {
		t.Errorf("from the cache: %v %v, first %v %v", second, ok2, first, ok1)
	}
	r.AddMapping(pid, Mapping{Start: m.Start, Limit: m.Limit, Offset: m.Offset, Path: "/nonexistent/other.so"})
	if e := r.steps.slot(pid, pc); e.mod != nil && e.gen == r.gen {
		t.Fatalf("the rule stayed cached after another file was mapped there: %+v", e)
	}
	if _, ok := step(); ok {
		t.Errorf("a step over an unreadable file succeeded, as the cached rule did")
	}
}
