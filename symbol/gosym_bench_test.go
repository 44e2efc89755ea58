package symbol

import (
	"debug/elf"
	"os"
	"testing"
)

// benchPCs returns n pcs spread evenly over the text of the table.
func benchPCs(tab *pclntab, n int) []uint64 {
	first, last := uint64(tab.entryOff(0)), uint64(tab.entryOff(tab.nfunc))
	pcs := make([]uint64, n)
	for i := range pcs {
		pcs[i] = tab.text + first + (last-first)*uint64(i)/uint64(n)
	}
	return pcs
}

// BenchmarkGoTableFrames measures frames on pcs the module's address
// cache has not seen: what each new pc in a profile costs. Names and file
// names are interned after the first pass, as they would be in a long
// session.
func BenchmarkGoTableFrames(b *testing.B) {
	g := openGoTable(b, selfExe(b))
	pcs := benchPCs(g.tab, 1<<14)
	var dst []Frame
	var frames int
	i := 0
	for b.Loop() {
		dst, _ = g.frames(pcs[i%len(pcs)], dst[:0])
		frames += len(dst)
		i++
	}
	b.ReportMetric(float64(frames)/float64(i), "frames/pc")
}

// BenchmarkGoTableSPDelta measures the SP delta lookup an unwinder makes
// per Go frame on a cache miss.
func BenchmarkGoTableSPDelta(b *testing.B) {
	g := openGoTable(b, selfExe(b))
	pcs := benchPCs(g.tab, 1<<14)
	i := 0
	for b.Loop() {
		g.spDelta(pcs[i%len(pcs)])
		i++
	}
}

// BenchmarkNewGoTable measures loading the Go table of this test binary:
// reading the pclntab and finding go:func.*, with no per-function work.
func BenchmarkNewGoTable(b *testing.B) {
	path := selfExe(b)
	f, err := elf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	syms, _ := f.Symbols()
	segs := loadSegments(f.Progs)
	for b.Loop() {
		if newGoTable(f, nil, syms, segs, st.Size()) == nil {
			b.Fatal("no table")
		}
	}
}
