package cfi

import "testing"

// ruleAt builds a one-FDE table with ins and returns the rule at 0x1000.
func ruleAt(t *testing.T, ins ...[]byte) Rule {
	t.Helper()
	f := &frames{vaddr: 0x2000}
	c := gccCIE(f)
	gccFDE(f, c, 0x1000, 0x10, ins...)
	r, ok := ehTable(f).Rule(0x1000)
	if !ok {
		t.Fatal("no rule")
	}
	return r
}

func TestStep(t *testing.T) {
	const sp = 0x7000
	stack := map[uint64]uint64{
		sp + 0x00: 0x401111, // return address at CFA-8 when CFA = rsp+8
		sp + 0x08: 0xb0b0,   // rbx at CFA-16 when CFA = rsp+24
		sp + 0x10: 0x402222, // return address at CFA-8 when CFA = rsp+24; rbp at CFA-16 when CFA = rbp+16
		sp + 0x18: 0x403333, // return address at CFA-8 when CFA = rbp+16
	}
	callee := func() Regs {
		var r Regs
		r.Set(RegRA, 0x1000)
		r.Set(RegRSP, sp)
		r.Set(RegRBP, sp+0x10)
		r.Set(RegRBX, 0xbbbb)
		r.Set(RegR12, 0x1212)
		r.Set(RegRAX, 0xaaaa)
		return r
	}
	type want struct {
		reg int
		v   uint64
	}
	tests := []struct {
		name    string
		ins     [][]byte
		ok      bool
		want    []want
		invalid []int
	}{
		{"entry: ra at the CFA", nil, true,
			[]want{{RegRA, 0x401111}, {RegRSP, sp + 8}, {RegRBX, 0xbbbb}, {RegRBP, sp + 0x10}, {RegR12, 0x1212}},
			[]int{RegRAX, RegR13}},
		{"saved rbx", [][]byte{defCFAOffset(24), offset(RegRBX, 2)}, true,
			[]want{{RegRA, 0x402222}, {RegRSP, sp + 24}, {RegRBX, 0xb0b0}}, nil},
		{"rbp-based CFA", [][]byte{defCFA(RegRBP, 16), offset(RegRBP, 2)}, true,
			[]want{{RegRSP, sp + 0x20}, {RegRA, 0x403333}, {RegRBP, 0x402222}}, nil},
		{"val_offset and register rules", [][]byte{valOffset(RegRBX, 1), register(RegR12, RegRAX)}, true,
			[]want{{RegRBX, sp}, {RegR12, 0xaaaa}}, nil},
		{"undefined rbx becomes unknown", [][]byte{undefined(RegRBX)}, true, nil, []int{RegRBX}},
		{"unreadable rbx becomes unknown", [][]byte{offset(RegRBX, 100)}, true, nil, []int{RegRBX}},
		{"same value", [][]byte{sameValue(RegR12)}, true, []want{{RegR12, 0x1212}}, nil},
		{"expression rules", [][]byte{
			expression(RegRBX, []byte{opLit0 + 8, opMinus}),     // at CFA-8
			valExpression(RegR13, []byte{opLit0 + 1, opPlus}),   // CFA+1
			expression(RegR14, []byte{opLit0, opDeref}),         // unreadable
			defCFAExpr(cat([]byte{opBreg0 + RegRSP}, sleb(24))), // rsp+24
		}, true, []want{{RegRSP, sp + 24}, {RegRBX, 0x402222}, {RegR13, sp + 25}}, []int{RegR14}},
		{"undefined return address: outermost", [][]byte{undefined(RegRA)}, false, nil, nil},
		{"same-value return address", [][]byte{sameValue(RegRA)}, false, nil, nil},
		{"unreadable return address", [][]byte{defCFAOffset(0x1000)}, false, nil, nil},
		{"zero return address", [][]byte{defCFAOffset(48)}, false, nil, nil},
		{"CFA register unknown", [][]byte{defCFARegister(RegR13)}, false, nil, nil},
		{"CFA register outside the set", [][]byte{defCFARegister(40)}, false, nil, nil},
		{"CFA expression fails", [][]byte{defCFAExpr([]byte{opDrop})}, false, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ruleAt(t, tc.ins...)
			regs := callee()
			before := regs
			stack := stack
			if tc.name == "zero return address" {
				stack = map[uint64]uint64{sp + 40: 0}
			}
			ok := r.Step(&regs, memMap(stack))
			if ok != tc.ok {
				t.Fatalf("Step(%v) = %v, want %v", r, ok, tc.ok)
			}
			if !ok {
				if regs != before {
					t.Errorf("a failed Step changed regs: %+v", regs)
				}
				return
			}
			for _, w := range tc.want {
				if v, ok := regs.Get(w.reg); !ok || v != w.v {
					t.Errorf("%s = %#x, %v; want %#x", regNames[w.reg], v, ok, w.v)
				}
			}
			for _, reg := range tc.invalid {
				if v, ok := regs.Get(reg); ok {
					t.Errorf("%s = %#x, want unknown", regNames[reg], v)
				}
			}
		})
	}
}

// TestStepDRAP replays a realigned main: its CFA is read through RBP, and
// RBP itself is found by expression.
func TestStepDRAP(t *testing.T) {
	r := ruleAt(t, defCFAExpr(drapExpr), expression(RegRBP, cat([]byte{opBreg0 + RegRBP}, sleb(0))))
	const rbp = 0x7040
	mem := memMap(map[uint64]uint64{
		rbp - 8:    0x7100, // the saved incoming stack pointer, i.e. the CFA
		0x7100 - 8: 0x4242, // return address at CFA-8
		rbp:        0x7300, // caller's rbp
	})
	var regs Regs
	regs.Set(RegRA, 0x1000)
	regs.Set(RegRSP, 0x7000)
	regs.Set(RegRBP, rbp)
	if !r.Step(&regs, mem) {
		t.Fatalf("Step(%v) failed", r)
	}
	if regs.R[RegRSP] != 0x7100 || regs.R[RegRA] != 0x4242 || regs.R[RegRBP] != 0x7300 {
		t.Errorf("regs = %+v", regs)
	}
}

// TestRuleComparable: rules without expressions compare equal across
// tables, so callers can memoize and deduplicate them.
func TestRuleComparable(t *testing.T) {
	a := ruleAt(t, offset(RegRBX, 2))
	b := ruleAt(t, offset(RegRBX, 2))
	if a != b {
		t.Errorf("%v != %v", a, b)
	}
	c := ruleAt(t, defCFAExpr(drapExpr))
	if c.tab == nil || a.tab != nil {
		t.Error("only expression rules should refer to their table")
	}
	if got := c.Reg(RegRAX); got.Kind() != Unspecified {
		t.Errorf("untracked register: %v", got)
	}
}
