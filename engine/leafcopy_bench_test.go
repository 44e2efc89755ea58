package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// BenchmarkLeafCopy measures how much of the user stack a sample must
// carry for the leaf and its caller to unwind by CFI as they do from a
// full copy (issue 34: sample with the kernel's frame-pointer chain and a
// small copy, copy more only where code needs CFI). Each target is sampled
// with 8 KiB copies; each sample is unwound from the whole copy and from
// its first N bytes, and a size counts as enough for a sample when the
// first K frames (K=2: the leaf's caller found; K=3: its caller's too)
// are the same. Targets with code that keeps no frame pointers: Debian's
// python3 (stripped, CFI only), cc1plus compiling bench/gxx.sh's file at -O2, node (V8's JIT code
// has no CFI, its C++ does). Metrics: the share of samples, in percent,
// that N bytes serve for K frames ("k2-512B%"), and the bytes the kernel
// copied per sample.
func BenchmarkLeafCopy(b *testing.B) {
	targets := []struct {
		name string
		argv func(b *testing.B) []string
	}{
		{"python", func(b *testing.B) []string {
			if _, err := os.Stat(debianPython); err != nil {
				b.Skipf("%s not installed", debianPython)
			}
			script, _ := filepath.Abs("../bench/cpu_bound.py")
			return []string{debianPython, script, "100000"}
		}},
		{"cc1plus", func(b *testing.B) []string {
			gxx, err := exec.LookPath("g++")
			if err != nil {
				b.Skip("no g++")
			}
			// bench/gxx.sh's generated file: some seconds of compiling.
			src := filepath.Join(b.TempDir(), "gen.cc")
			gen := exec.Command("bash", "../bench/gxx.sh")
			gen.Env = append(os.Environ(), "GEN_ONLY="+src)
			if out, err := gen.CombinedOutput(); err != nil {
				b.Fatalf("bench/gxx.sh: %v\n%s", err, out)
			}
			return []string{gxx, "-O2", "-c", src, "-o", "/dev/null"}
		}},
		{"node", func(b *testing.B) []string {
			node, err := exec.LookPath("node")
			if err != nil {
				b.Skip("no node")
			}
			return []string{node, "-e", "function f(n){let s=0;for(let i=0;i<n;i++)s+=Math.sqrt(i)+JSON.stringify({i}).length;return s};let t=Date.now();while(Date.now()-t<2500)f(1e4)"}
		}},
	}
	sizes := []int{128, 256, 512, 1024, 2048, 4096}
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) {
			argv := tg.argv(b)
			batches, res := recordBatches(b, argv, defaultStackSize, 3*time.Second)
			bl := newBuilder(res)
			bl.dwarf = true
			enough := map[string]int{}
			samples, copied := 0, 0
			var regs, r2 symbol.Regs
			var full, part []uint64
			for _, bt := range batches {
				for i := range bt.Records {
					r := &bt.Records[i]
					if r.Kind == sampler.KindSample && len(r.Stack) > 0 {
						valid := r.DWARFRegs(regs[:])
						r2 = regs
						full, _ = res.UnwindUser(int(r.PID), &r2, valid, r.Stack, 3, full[:0])
						if len(full) >= 2 {
							samples++
							copied += len(r.Stack)
							for _, n := range sizes {
								r2 = regs
								part, _ = res.UnwindUser(int(r.PID), &r2, valid, r.Stack[:min(n, len(r.Stack))], 3, part[:0])
								for _, k := range []int{2, 3} {
									if k <= len(full) && len(part) >= k && slices.Equal(part[:k], full[:k]) {
										enough[fmt.Sprintf("k%d-%dB%%", k, n)]++
									}
								}
							}
						}
					}
					bl.handle(&sampler.Batch{Records: bt.Records[i : i+1]})
				}
			}
			if samples == 0 {
				b.Skip("no sample unwound past its leaf")
			}
			for k, v := range enough {
				b.ReportMetric(100*float64(v)/float64(samples), k)
			}
			b.ReportMetric(float64(samples), "samples")
			b.ReportMetric(float64(copied)/float64(samples), "copied-B/sample")
			b.ReportMetric(0, "ns/op")
		})
	}
}
