package cfi

import (
	"os"
	"testing"
)

func libcTable(b *testing.B) *Table {
	b.Helper()
	if _, err := os.Stat(libc); err != nil {
		b.Skip(err)
	}
	return loadFile(b, libc)
}

// BenchmarkRule interprets libc's FDEs at pcs spread over the library, as
// an unwinder meeting them for the first time would (before memoizing).
func BenchmarkRule(b *testing.B) {
	tab := libcTable(b)
	pcs := samplePCs(tab, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	found := 0
	for i := 0; i < b.N; i++ {
		if _, ok := tab.Rule(pcs[i%len(pcs)]); ok {
			found++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rules/s")
	if found == 0 {
		b.Fatal("no rules")
	}
}

// BenchmarkLoad indexes libc.
func BenchmarkLoad(b *testing.B) {
	if _, err := os.Stat(libc); err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		loadFile(b, libc)
	}
}

// BenchmarkStep applies typical rules to a register set: a frame with
// saved registers, and the PLT's expression CFA.
func BenchmarkStep(b *testing.B) {
	stack := make([]uint64, 64)
	for i := range stack {
		stack[i] = 0x401000 + uint64(i)
	}
	const sp = 0x7000
	mem := func(a uint64) (uint64, bool) {
		i := (a - sp) / 8
		if a < sp || i >= uint64(len(stack)) {
			return 0, false
		}
		return stack[i], true
	}
	for _, bc := range []struct {
		name string
		ins  [][]byte
	}{
		{"saved", [][]byte{defCFAOffset(56), offset(RegRBX, 7), offset(RegRBP, 6), offset(RegR12, 5),
			offset(RegR13, 4), offset(RegR14, 3), offset(RegR15, 2)}},
		{"plt-expr", [][]byte{defCFAExpr(pltExpr)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := &frames{vaddr: 0x2000}
			gccFDE(f, gccCIE(f), 0x1000, 0x10, bc.ins...)
			r, ok := ehTable(f).Rule(0x1000)
			if !ok {
				b.Fatal("no rule")
			}
			var start Regs
			start.Set(RegRSP, sp)
			start.Set(RegRA, 0x1000)
			start.Set(RegRBX, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				regs := start
				if !r.Step(&regs, mem) {
					b.Fatal("Step failed")
				}
			}
		})
	}
}
