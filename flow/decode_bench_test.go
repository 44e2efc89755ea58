package flow

import (
	"runtime"
	"testing"
)

// BenchmarkDecode decodes every function of libc and of a Go program for
// amd64 and arm64, and reports the cost per function and per byte, and
// what a decoded function allocates (its CFG, and on amd64 what x86asm
// allocates per instruction).
func BenchmarkDecode(b *testing.B) {
	sets := []struct {
		name string
		img  func(testing.TB) *elfImage
	}{
		{"libc", func(tb testing.TB) *elfImage { return readELF(tb, libcPath(tb)) }},
		{"go-amd64", func(tb testing.TB) *elfImage { return readELF(tb, buildGo(tb, "amd64", goProgram)) }},
		{"go-arm64", func(tb testing.TB) *elfImage { return readELF(tb, buildGo(tb, "arm64", goProgram)) }},
	}
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			img := set.img(b)
			noReturn := img.noReturn()
			size := 0
			for _, fn := range img.funcs {
				size += len(fn.code)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rounds := 0
			for b.Loop() {
				for _, fn := range img.funcs {
					Decode(img.arch, fn.code, fn.addr, noReturn)
				}
				rounds++
			}
			runtime.ReadMemStats(&after)
			nfn := float64(rounds * len(img.funcs))
			ns := float64(b.Elapsed().Nanoseconds())
			b.ReportMetric(ns/nfn, "ns/func")
			b.ReportMetric(ns/float64(rounds*size), "ns/byte")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/nfn, "B/func")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/nfn, "allocs/func")
			b.ReportMetric(float64(len(img.funcs)), "funcs")
		})
	}
}
