package flow

import (
	"math/rand/v2"
	"testing"
)

// benchCFG makes a function of n blocks shaped like compiled code: blocks
// fall through to the next, some branch forward (ifs, switches' arms),
// some back (loops, nested and now and then overlapping), some branch to
// the shared return block at the end (early returns), some end in a
// conditional tail call, and the call sites are in distinct blocks.
func benchCFG(n, calls int) *CFG {
	r := rand.New(rand.NewPCG(500, 100))
	g := &CFG{Blocks: make([]Block, n)}
	for v := range g.Blocks {
		b := &g.Blocks[v]
		b.Start, b.End = uint64(0x10000+0x20*v), uint64(0x10020+0x20*v)
		switch p := r.IntN(100); {
		case v == n-1:
			b.Exit = true
		case p < 3:
			b.Succs = []int{v + 1, n - 1}
		case p < 5:
			b.Succs, b.Exit = []int{v + 1}, true
		case p < 30 && v+2 < n:
			b.Succs = []int{v + 1, v + 2 + r.IntN(min(20, n-v-2))}
		case p < 34 && v > 0:
			b.Succs = []int{v + 1, v - 1 - r.IntN(min(15, v))}
		default:
			b.Succs = []int{v + 1}
		}
	}
	for _, v := range r.Perm(n)[:calls] {
		b := &g.Blocks[v]
		b.Calls = []CallSite{{Addr: b.Start + 8, Ret: b.Start + 13, Target: 0x90000, Block: v}}
	}
	g.Start, g.End = g.Blocks[0].Start, g.Blocks[n-1].End
	return g
}

func BenchmarkNewFDOM(b *testing.B) {
	g := benchCFG(500, 100)
	b.ReportAllocs()
	for b.Loop() {
		NewFDOM(g)
	}
}

func BenchmarkNewPrefixFDOM(b *testing.B) {
	g := benchCFG(500, 100)
	b.ReportAllocs()
	for b.Loop() {
		NewPrefixFDOM(g)
	}
}

func BenchmarkFDOMOutflowCorrection(b *testing.B) {
	g := benchCFG(500, 100)
	f := NewFDOM(g)
	r := rand.New(rand.NewPCG(1, 2))
	var s []SiteFlow
	for _, bl := range g.Blocks {
		for _, cs := range bl.Calls {
			s = append(s, SiteFlow{Site: cs, Outflow: float64(r.IntN(100))})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		FDOMOutflowCorrection(f, s)
	}
}
