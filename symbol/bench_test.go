package symbol

import (
	"os"
	"reflect"
	"testing"
)

func cachedSetup(tb testing.TB) (*Resolver, int, []uint64) {
	r := NewResolver()
	pid := os.Getpid()
	if err := r.LoadProc(pid); err != nil {
		tb.Fatal(err)
	}
	var pcs []uint64
	for _, fn := range []any{selfTestFunc, NewResolver, (*Resolver).Lookup, parseMapsLine} {
		pc := uint64(reflect.ValueOf(fn).Pointer())
		pcs = append(pcs, pc, pc+7)
	}
	pcs = append(pcs, 0x10) // unmapped
	dst := make([]Frame, 0, 16)
	for _, pc := range pcs {
		if f := r.Lookup(pid, pc, dst[:0]); pc != 0x10 && f[0].Func == "" {
			tb.Fatalf("%#x not resolved", pc)
		}
	}
	return r, pid, pcs
}

// TestLookupCachedNoAlloc: a cached lookup allocates nothing.
func TestLookupCachedNoAlloc(t *testing.T) {
	r, pid, pcs := cachedSetup(t)
	dst := make([]Frame, 0, 16)
	allocs := testing.AllocsPerRun(100, func() {
		for _, pc := range pcs {
			dst = r.Lookup(pid, pc, dst[:0])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per cached lookup round", allocs)
	}
}

func BenchmarkLookupCached(b *testing.B) {
	r, pid, pcs := cachedSetup(b)
	dst := make([]Frame, 0, 16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst = r.Lookup(pid, pcs[i%len(pcs)], dst[:0])
	}
}

// BenchmarkLookupCachedBudget is BenchmarkLookupCached under a budget
// that holds the modules: the hit path of the agent.
func BenchmarkLookupCachedBudget(b *testing.B) {
	r, pid, pcs := cachedSetup(b)
	r.SetBudget(256 << 20)
	if s := r.MemStats(); s.Evictions != 0 {
		b.Fatalf("modules evicted: %+v", s)
	}
	dst := make([]Frame, 0, 16)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst = r.Lookup(pid, pcs[i%len(pcs)], dst[:0])
	}
}
