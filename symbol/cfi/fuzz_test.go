package cfi

import (
	"testing"
)

// fuzzMem is a stack of 4 KiB above 0x7000 whose words are a function of
// their address, so expressions and rules read varied but repeatable data.
func fuzzMem(addr uint64) (uint64, bool) {
	if addr < 0x7000 || addr >= 0x8000-8 {
		return 0, false
	}
	return addr*0x9e3779b97f4a7c15 ^ addr>>7, true
}

func fuzzRegs(seed uint64) Regs {
	var r Regs
	for i := range r.R {
		r.R[i] = 0x7000 + (seed>>uint(i%8))&0xff8
	}
	r.Valid = uint32(seed>>32) | 1<<RegRSP | 1<<RegRA
	return r
}

// exercise looks up pc and every FDE boundary (a bounded number of them)
// and steps each rule found, checking the invariants that hold for any
// input.
func exercise(t *testing.T, tab *Table, pc, seed uint64) {
	pcs := []uint64{pc}
	for i, f := range tab.fdes {
		if i == 64 {
			break
		}
		pcs = append(pcs, f.begin, f.end-1, f.begin+(f.end-f.begin)/2)
	}
	for _, pc := range pcs {
		i := tab.find(pc)
		if i >= 0 && (pc < tab.fdes[i].begin || pc >= tab.fdes[i].end) {
			t.Fatalf("find(%#x) returned FDE %#x..%#x", pc, tab.fdes[i].begin, tab.fdes[i].end)
		}
		r, ok := tab.Rule(pc)
		if !ok {
			continue
		}
		if i < 0 {
			t.Fatalf("Rule(%#x) without an FDE", pc)
		}
		_ = r.String()
		regs := fuzzRegs(seed)
		before := regs
		if r.Step(&regs, fuzzMem) {
			if regs.Valid&(1<<RegRA|1<<RegRSP) != 1<<RegRA|1<<RegRSP || regs.R[RegRA] == 0 {
				t.Fatalf("Step succeeded without pc and sp: %+v", regs)
			}
		} else if regs != before {
			t.Fatal("failed Step changed the registers")
		}
	}
	tab.FramePointerShare()
}

// FuzzLoad treats arbitrary bytes as .eh_frame and .debug_frame.
func FuzzLoad(f *testing.F) {
	// Seeds: testdata/fuzz/FuzzLoad holds sections of compiled binaries;
	// these are hand-built.
	fr := &frames{vaddr: 0x2000}
	c := gccCIE(fr)
	gccFDE(fr, c, 0x1000, 0x40, advance(1), defCFAOffset(16), offset(RegRBX, 2), advance(4), remember,
		defCFAExpr(drapExpr), advance(2), restoreSt)
	gccFDE(fr, c, 0x1040, 0x10, defCFAExpr(pltExpr))
	d := &frames{debug: true, dwarf64: true}
	dc := d.cie(cieSpec{version: 4, addrSize: 8, codeAlign: 1, dataAlign: -8, ra: 16, ins: defCFA(RegRSP, 8)})
	d.fde(dc, peAbsptr, 0x1000, 0x20, nil, cat(advance(4), defCFAOffset(16))...)
	f.Add(fr.b, uint64(0x2000), d.b, uint64(0x1005), uint64(0))
	f.Add([]byte{}, uint64(0), []byte{}, uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, eh []byte, ehAddr uint64, debug []byte, pc, seed uint64) {
		tab := load(input{eh: eh, ehAddr: ehAddr, debug: debug, addrSize: 8})
		exercise(t, tab, pc, seed)
	})
}

// FuzzRule wraps arbitrary CIE and FDE instructions in well-formed entries,
// so the fuzzer spends its time in the interpreter and the expression
// evaluator rather than on headers.
func FuzzRule(f *testing.F) {
	f.Add(cat(defCFA(RegRSP, 8), offset(RegRA, 1)),
		cat(advance(1), defCFAOffset(16), offset(RegRBP, 2), advance(3), defCFARegister(RegRBP)),
		uint64(4), uint64(0xfff))
	f.Add(cat(defCFA(RegRSP, 8), offset(RegRA, 1)), defCFAExpr(pltExpr), uint64(3), uint64(0xffffffff))
	f.Add(cat(defCFA(RegRSP, 8), offset(RegRA, 1)),
		cat(defCFA(RegR10, 0), advance(2), defCFAExpr(drapExpr), expression(RegRBP, []byte{opBreg0 + 6, 0})),
		uint64(2), uint64(0x7fff))
	f.Fuzz(func(t *testing.T, cieIns, fdeIns []byte, pc, seed uint64) {
		fr := &frames{vaddr: 0x2000}
		c := fr.cie(cieSpec{aug: "zR", codeAlign: 1, dataAlign: -8, ra: 16,
			augData: []byte{pePcrel | peSdata4}, ins: cieIns})
		gccFDE(fr, c, 0x1000, 0x100, fdeIns)
		tab := ehTable(fr)
		if tab.Len() != 1 {
			t.Fatalf("well-formed FDE not indexed: %d", tab.Len())
		}
		exercise(t, tab, 0x1000+pc%0x100, seed)
		// Expressions are also run on their own, over the FDE's bytes.
		if len(fdeIns) <= maxExprLen {
			regs := fuzzRegs(seed)
			eval(fdeIns, &regs, fuzzMem, seed, seed&1 == 0)
		}
	})
}
