package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
)

// BenchmarkIngestDeep is the ingest rate on stacks 20 calls deep: the
// recorded batches of bench/deep20.c (C, frame pointers, two threads) turned
// into the tree, symbolizing and unwinding with warm caches.
//   - fp: the kernel's frame-pointer chain and the 512-byte leaf copy
//     (--unwind fp), what perf record -g takes;
//   - dwarf: 8 KiB stack copies unwound with CFI (--unwind dwarf), what
//     perf record --call-graph dwarf takes.
//
// bench/ingest.sh runs it beside perf report on the same program, with
// CCTOP_DEEP20 naming the binary both record. Metrics: samples/s,
// allocs/sample, B/sample (allocated), frames/sample, unwound%.
func BenchmarkIngestDeep(b *testing.B) {
	bin := os.Getenv("CCTOP_DEEP20")
	if bin == "" {
		src, err := filepath.Abs("../bench/deep20.c")
		if err != nil {
			b.Fatal(err)
		}
		bin = testutil.Compile(b, b.TempDir(), "gcc", src, "-O1", "-g", "-fno-omit-frame-pointer", "-pthread")
	}
	for _, tc := range []struct {
		name  string
		stack int
		dwarf bool
	}{{"fp", leafStackSize, false}, {"dwarf", defaultStackSize, true}} {
		b.Run(tc.name, func(b *testing.B) {
			batches, res := recordBatches(b, []string{bin, "3"}, tc.stack, 3*time.Second)
			samples := 0
			for _, bt := range batches {
				for _, r := range bt.Records {
					if r.Kind == sampler.KindSample {
						samples++
					}
				}
			}
			if samples == 0 {
				b.Fatal("no samples")
			}
			// A first pass warms the symbol caches, as a live run's
			// first seconds do.
			bl := replay(res, batches, tc.dwarf)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bl = replay(res, batches, tc.dwarf)
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			n := float64(samples) * float64(b.N)
			frames := meanDepth(bl.tree)
			b.ReportMetric(n/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/sample")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/sample")
			b.ReportMetric(frames, "frames/sample")
			b.ReportMetric(bl.unwound.percent(), "unwound%")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// meanDepth is the mean number of frames of t's samples.
func meanDepth(t *cct.Tree) float64 {
	depth := make([]int, t.Len())
	var frames, samples float64
	for id := 1; id < t.Len(); id++ {
		n := t.Node(cct.NodeID(id))
		depth[id] = depth[n.Parent] + 1 // a parent's id is below its children's
		frames += float64(depth[id]) * float64(n.Self.Samples)
		samples += float64(n.Self.Samples)
	}
	return frames / max(samples, 1)
}
