package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// recordBatches samples argv for d with stack copies of stack bytes and
// keeps deep copies of the batches, with the mappings seen, for replay.
func recordBatches(b testing.TB, argv []string, stack int, d time.Duration) ([]*sampler.Batch, *symbol.Resolver) {
	b.Helper()
	cfg := sampler.Config{Argv: argv, Leader: mustEvent("cpu-clock"), Freq: 999, UserOnly: true, Stdout: nil}
	if stack > 0 {
		cfg.UserStack, cfg.RingPages = stack, ringPagesFor(stack)
	}
	sess, err := sampler.Open(cfg)
	if err != nil {
		b.Skipf("sampling not permitted here: %v", err)
	}
	defer sess.Close()
	// The executable's own mappings predate the events: read them now,
	// as startSession does.
	res := symbol.NewResolver()
	if err := res.LoadProc(sess.PID()); err != nil {
		b.Fatal(err)
	}
	var batches []*sampler.Batch
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err = sess.Run(ctx, func(batch *sampler.Batch) {
		c := &sampler.Batch{}
		for i := range batch.Records {
			r := batch.Records[i]
			r.Chain = slices.Clone(r.Chain)
			r.Values = slices.Clone(r.Values)
			r.Regs = slices.Clone(r.Regs)
			r.Stack = slices.Clone(r.Stack)
			c.Records = append(c.Records, r)
		}
		batches = append(batches, c)
	})
	if err != nil && ctx.Err() == nil {
		b.Fatal(err)
	}
	sess.Stop(time.Second)
	return batches, res
}

// replay turns batches into a new builder's tree.
func replay(res *symbol.Resolver, batches []*sampler.Batch, dwarf bool) *builder {
	bl := newBuilder(res)
	bl.dwarf = dwarf
	for _, bt := range batches {
		bl.handle(bt)
	}
	return bl
}

// BenchmarkIngestDWARF measures how fast the aggregator turns samples
// with user stack copies into the tree (symbolizing and unwinding, warm
// caches), for the distribution's Python, which has no frame pointers,
// at several stack copy sizes; and the share of stacks that reach a
// root at each size. Metrics: samples/s, bytes copied per sample,
// unwound% (complete stacks). "fp" is the kernel's frame-pointer chain
// with the small leaf copy of --unwind fp, for reference.
func BenchmarkIngestDWARF(b *testing.B) {
	if _, err := os.Stat(debianPython); err != nil {
		b.Skipf("%s not installed", debianPython)
	}
	script, err := filepath.Abs("../bench/cpu_bound.py")
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stack int
		dwarf bool
	}{{"fp", leafStackSize, false}, {"dwarf-2048", 2048, true}, {"dwarf-4096", 4096, true}, {"dwarf-8192", 8192, true}, {"dwarf-16384", 16384, true}, {"dwarf-32768", 32768, true}} {
		b.Run(tc.name, func(b *testing.B) {
			batches, res := recordBatches(b, []string{debianPython, script, "100000"}, tc.stack, 2*time.Second)
			var samples, bytes int
			for _, bt := range batches {
				for _, r := range bt.Records {
					if r.Kind == sampler.KindSample {
						samples++
						bytes += len(r.Stack) + 8*len(r.Regs) + 8*len(r.Chain)
					}
				}
			}
			if samples == 0 {
				b.Fatal("no samples")
			}
			var bl *builder
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bl = replay(res, batches, tc.dwarf)
			}
			b.StopTimer()
			b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(bytes)/float64(samples), "copied-B/sample")
			b.ReportMetric(bl.unwound.percent(), "unwound%")
			b.ReportMetric(0, "ns/op")
		})
	}
}
