package engine

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
)

// TestIngestAllocatesNothing: once its contexts exist and the symbol
// caches are warm, a sample costs the builder no allocation, with the
// kernel's frame-pointer chains and with stack copies unwound by CFI. The
// samples of bench/deep20.c (C, two threads, 20 calls deep) are ingested
// once to warm up, then again into the same builder; the log of samples
// and the tree's slices may grow (amortized: a few allocations in all),
// nothing per sample.
func TestIngestAllocatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("samples a program for a second")
	}
	src, err := filepath.Abs("../bench/deep20.c")
	if err != nil {
		t.Fatal(err)
	}
	bin := testutil.Compile(t, t.TempDir(), "gcc", src, "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	for _, tc := range []struct {
		name  string
		stack int
		dwarf bool
	}{{"fp", leafStackSize, false}, {"dwarf", defaultStackSize, true}} {
		t.Run(tc.name, func(t *testing.T) {
			batches, res := recordBatches(t, []string{bin, "1"}, tc.stack, time.Second)
			var samples []*sampler.Batch
			n := 0
			for _, bt := range batches {
				s := &sampler.Batch{}
				for _, r := range bt.Records {
					if r.Kind == sampler.KindSample {
						s.Records = append(s.Records, r)
					}
				}
				n += len(s.Records)
				samples = append(samples, s)
			}
			if n < 500 {
				t.Fatalf("%d samples in a second", n)
			}
			bl := replay(res, batches, tc.dwarf)
			// The count is the process's: goroutines an earlier test
			// left winding down allocate too. The fewest of a few
			// passes is the builder's.
			allocs := uint64(1 << 62)
			for range 5 {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for _, bt := range samples {
					bl.handle(bt)
				}
				runtime.ReadMemStats(&after)
				allocs = min(allocs, after.Mallocs-before.Mallocs)
			}
			t.Logf("%d allocations for %d samples (%.1f%% unwound)", allocs, n, bl.unwound.percent())
			if per := float64(allocs) / float64(n); per >= 0.01 {
				t.Errorf("%.3f allocations per sample (%d for %d samples)", per, allocs, n)
			}
		})
	}
}
