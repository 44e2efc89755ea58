package cfi

import (
	"strconv"
	"testing"
)

type pcWant struct {
	pc   uint64
	want string // Rule.String(); "" means no rule
}

func checkRules(t *testing.T, tab *Table, cases []pcWant) {
	t.Helper()
	for _, c := range cases {
		r, ok := tab.Rule(c.pc)
		got := ""
		if ok {
			got = r.String()
		}
		if got != c.want {
			t.Errorf("Rule(%#x) = %q, want %q", c.pc, got, c.want)
		}
	}
}

const base = "cfa=rsp+8 ra=c-8" // gccCIE's initial row

// TestInstructions runs one FDE per instruction family under GCC's usual
// CIE and checks the rule before, at and after each row boundary.
func TestInstructions(t *testing.T) {
	tests := []struct {
		name string
		ins  [][]byte
		want []pcWant
	}{
		{"none", nil, []pcWant{{0xfff, ""}, {0x1000, base}, {0x10ff, base}, {0x1100, ""}}},
		{"advance_loc and offset", [][]byte{
			advance(1), defCFAOffset(16), offset(RegRBP, 2),
			advance(3), defCFARegister(RegRBP),
		}, []pcWant{
			{0x1000, base},
			{0x1001, "cfa=rsp+16 rbp=c-16 ra=c-8"},
			{0x1003, "cfa=rsp+16 rbp=c-16 ra=c-8"},
			{0x1004, "cfa=rbp+16 rbp=c-16 ra=c-8"},
			{0x10ff, "cfa=rbp+16 rbp=c-16 ra=c-8"},
		}},
		{"advance_loc1/2/4", [][]byte{
			advance1(0x10), defCFAOffset(16),
			advance2(0x20), defCFAOffset(24),
			advance4(0x30), defCFAOffset(32),
		}, []pcWant{
			{0x100f, base},
			{0x1010, "cfa=rsp+16 ra=c-8"},
			{0x102f, "cfa=rsp+16 ra=c-8"},
			{0x1030, "cfa=rsp+24 ra=c-8"},
			{0x105f, "cfa=rsp+24 ra=c-8"},
			{0x1060, "cfa=rsp+32 ra=c-8"},
		}},
		{"advance past the end of the range", [][]byte{advance4(0x1000), defCFAOffset(16)},
			[]pcWant{{0x10ff, base}}},
		{"offset_extended, _sf, GNU negative", [][]byte{
			offsetExt(RegRBX, 3), offsetExtSf(RegR12, -4), offsetExtSf(RegR13, 1), negOffsetExt(RegR14, 5),
		}, []pcWant{{0x1000, "cfa=rsp+8 rbx=c-24 r12=c+32 r13=c-8 r14=c+40 ra=c-8"}}},
		{"val_offset, _sf", [][]byte{valOffset(RegR15, 2), valOffsetSf(RegRBX, -1)},
			[]pcWant{{0x1000, "cfa=rsp+8 rbx=v+8 r15=v-16 ra=c-8"}}},
		{"restore returns to the CIE's rule", [][]byte{
			offset(RegRBX, 2), offset(RegRA, 3), advance(4),
			restore(RegRBX), restoreExt(RegRA),
		}, []pcWant{
			{0x1003, "cfa=rsp+8 rbx=c-16 ra=c-24"},
			{0x1004, base},
		}},
		{"undefined, same_value, register", [][]byte{
			undefined(RegRA), sameValue(RegRBX), register(RegR12, RegRAX), register(RegR13, RegRA),
		}, []pcWant{{0x1000, "cfa=rsp+8 rbx=s r12=rax r13=ra ra=u"}}},
		{"remember and restore state, CFA included", [][]byte{
			advance(1), defCFAOffset(16), offset(RegRBX, 2),
			advance(1), remember, defCFA(RegRSP, 8), restore(RegRBX),
			advance(1), restoreSt,
		}, []pcWant{
			{0x1001, "cfa=rsp+16 rbx=c-16 ra=c-8"},
			{0x1002, base},
			{0x1003, "cfa=rsp+16 rbx=c-16 ra=c-8"},
		}},
		{"restore_state without remember", [][]byte{advance(1), restoreSt},
			[]pcWant{{0x1000, base}, {0x1001, ""}}},
		{"def_cfa, def_cfa_sf, def_cfa_offset_sf", [][]byte{
			defCFA(RegR10, 0), advance(1), defCFASf(RegRSP, -3), advance(1), defCFAOffsetSf(-4),
		}, []pcWant{
			{0x1000, "cfa=r10+0 ra=c-8"},
			{0x1001, "cfa=rsp+24 ra=c-8"},
			{0x1002, "cfa=rsp+32 ra=c-8"},
		}},
		{"def_cfa_expression, then back to a register", [][]byte{
			defCFA(RegR10, 0), advance(1), defCFAExpr(drapExpr),
			advance(1), defCFAOffset(40),
			advance(1), defCFARegister(RegRSP),
		}, []pcWant{
			{0x1001, "cfa=exp ra=c-8"},
			// def_cfa_offset keeps the expression in force...
			{0x1002, "cfa=exp ra=c-8"},
			// ...and def_cfa_register returns to the register rule with
			// the offset set meanwhile, as readelf and GCC's unwinder do.
			{0x1003, "cfa=rsp+40 ra=c-8"},
		}},
		{"expression, val_expression", [][]byte{
			expression(RegRBP, []byte{opBreg0 + 6, 0}), valExpression(RegRBX, []byte{opLit0 + 1}),
			expression(RegRAX, []byte{opNop}), // untracked: ignored
		}, []pcWant{{0x1000, "cfa=rsp+8 rbx=vexp rbp=exp ra=c-8"}}},
		{"GNU_args_size and nop change nothing", [][]byte{argsSize(16), nop, advance(1), argsSize(0), nop, nop},
			[]pcWant{{0x1000, base}, {0x1001, base}}},
		{"unknown opcode stops", [][]byte{advance(2), {0x3f}, defCFAOffset(16)},
			[]pcWant{{0x1001, base}, {0x1002, ""}, {0x10ff, ""}}},
		{"untracked registers are ignored", [][]byte{offset(RegRAX, 2), offsetExt(40, 3), undefined(33)},
			[]pcWant{{0x1000, base}}},
		{"truncated operand", [][]byte{advance(1), {cfaDefCFA, RegRSP}},
			[]pcWant{{0x1000, base}, {0x1001, ""}}},
		{"offset beyond 32 bits", [][]byte{advance(1), offsetExt(RegRBX, 1<<40)},
			[]pcWant{{0x1000, base}, {0x1001, ""}}},
		{"expression longer than the FDE", [][]byte{advance(1), {cfaDefCFAExpression, 100, opNop}},
			[]pcWant{{0x1000, base}, {0x1001, ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &frames{vaddr: 0x2000}
			c := gccCIE(f)
			gccFDE(f, c, 0x1000, 0x100, tc.ins...)
			tab := ehTable(f)
			if tab.Len() != 1 {
				t.Fatalf("Len = %d, want 1", tab.Len())
			}
			checkRules(t, tab, tc.want)
		})
	}
}

// TestRememberDepth: nesting within the bound works, beyond it the FDE
// gives no rule rather than growing.
func TestRememberDepth(t *testing.T) {
	build := func(depth int) *Table {
		f := &frames{vaddr: 0x2000}
		c := gccCIE(f)
		var ins [][]byte
		for i := 0; i < depth; i++ {
			ins = append(ins, remember, defCFAOffset(uint64(16+8*i)))
		}
		ins = append(ins, advance(1))
		for i := 0; i < depth; i++ {
			ins = append(ins, restoreSt)
		}
		gccFDE(f, c, 0x1000, 0x100, ins...)
		return ehTable(f)
	}
	checkRules(t, build(maxRemember), []pcWant{
		{0x1000, "cfa=rsp+" + strconv.Itoa(16+8*(maxRemember-1)) + " ra=c-8"},
		{0x1001, base},
	})
	checkRules(t, build(maxRemember+1), []pcWant{{0x1000, ""}})
}

// TestCodeAlignAndSetLoc: advances are in units of the code alignment
// factor; DW_CFA_set_loc takes an address in the FDE's encoding.
func TestCodeAlignAndSetLoc(t *testing.T) {
	f := &frames{vaddr: 0x2000}
	c := f.cie(cieSpec{
		version: 3, aug: "zR", codeAlign: 4, dataAlign: -4, ra: 16,
		augData: []byte{peUdata8},
		ins:     cat(defCFA(RegRSP, 8), offset(RegRA, 2)),
	})
	setLoc := cat([]byte{cfaSetLoc}, le64(0x1080))
	f.fde(c, peUdata8, 0x1000, 0x100, []byte{},
		cat(advance(2), defCFAOffset(16), offset(RegRBX, 3), setLoc, defCFAOffset(32))...)
	checkRules(t, ehTable(f), []pcWant{
		{0x1007, base},
		{0x1008, "cfa=rsp+16 rbx=c-12 ra=c-8"},
		{0x107f, "cfa=rsp+16 rbx=c-12 ra=c-8"},
		{0x1080, "cfa=rsp+32 rbx=c-12 ra=c-8"},
	})
}

// TestReturnAddressColumn: the CIE names the return address column; a
// version 1 CIE stores it in one byte.
func TestReturnAddressColumn(t *testing.T) {
	f := &frames{vaddr: 0x2000}
	c := f.cie(cieSpec{
		version: 1, aug: "zR", codeAlign: 1, dataAlign: -8, ra: 15,
		augData: []byte{pePcrel | peSdata4},
		ins:     cat(defCFA(RegRSP, 8), offset(15, 1)),
	})
	gccFDE(f, c, 0x1000, 0x10)
	// Column 15 is both r15 and the return address here.
	checkRules(t, ehTable(f), []pcWant{{0x1000, "cfa=rsp+8 r15=c-8 ra=c-8"}})
}
