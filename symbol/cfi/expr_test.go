package cfi

import (
	"bytes"
	"testing"
)

func regsOf(kv ...uint64) *Regs {
	var r Regs
	for i := 0; i+1 < len(kv); i += 2 {
		r.Set(int(kv[i]), kv[i+1])
	}
	return &r
}

// memMap serves 8-byte reads from a map.
func memMap(m map[uint64]uint64) func(uint64) (uint64, bool) {
	return func(a uint64) (uint64, bool) {
		v, ok := m[a]
		return v, ok
	}
}

func TestEval(t *testing.T) {
	mem := memMap(map[uint64]uint64{0x7000: 0x1122334455667788, 0x7ff8: 0x8000})
	regs := regsOf(RegRSP, 0x7000, RegRBP, 0x8000, RegRA, 0x401026, 12, 3)
	neg1 := uint64(0xffffffffffffffff)
	tests := []struct {
		name string
		code []byte
		want uint64
		ok   bool
	}{
		{"lit", []byte{opLit0 + 31}, 31, true},
		{"const1u", []byte{opConst1u, 0xff}, 0xff, true},
		{"const1s", []byte{opConst1s, 0xff}, neg1, true},
		{"const2u", cat([]byte{opConst2u}, le16(0xfffe)), 0xfffe, true},
		{"const2s", cat([]byte{opConst2s}, le16(0xfffe)), neg1 - 1, true},
		{"const4u", cat([]byte{opConst4u}, le32(0xfffffffd)), 0xfffffffd, true},
		{"const4s", cat([]byte{opConst4s}, le32(0xfffffffd)), neg1 - 2, true},
		{"const8u", cat([]byte{opConst8u}, le64(1<<63)), 1 << 63, true},
		{"const8s", cat([]byte{opConst8s}, le64(neg1)), neg1, true},
		{"constu", cat([]byte{opConstu}, uleb(300)), 300, true},
		{"consts", cat([]byte{opConsts}, sleb(-300)), uint64(1<<64 - 300), true},
		{"breg", cat([]byte{opBreg0 + 7}, sleb(-16)), 0x7000 - 16, true},
		{"bregx", cat([]byte{opBregx}, uleb(12), sleb(5)), 8, true},
		{"breg of an unknown register", cat([]byte{opBreg0 + 3}, sleb(0)), 0, false},
		{"bregx beyond the register set", cat([]byte{opBregx}, uleb(17), sleb(0)), 0, false},
		{"plus", []byte{opLit0 + 2, opLit0 + 3, opPlus}, 5, true},
		{"plus_uconst", cat([]byte{opLit0 + 2, opPlusUconst}, uleb(1000)), 1002, true},
		{"minus", []byte{opLit0 + 2, opLit0 + 3, opMinus}, neg1, true},
		{"mul", []byte{opLit0 + 6, opLit0 + 7, opMul}, 42, true},
		{"div signed", cat([]byte{opConsts}, sleb(-9), []byte{opLit0 + 2, opDiv}), uint64(1<<64 - 4), true},
		{"div by zero", []byte{opLit0 + 1, opLit0, opDiv}, 0, false},
		{"mod", []byte{opLit0 + 9, opLit0 + 4, opMod}, 1, true},
		{"mod by zero", []byte{opLit0 + 1, opLit0, opMod}, 0, false},
		{"and or xor", []byte{opLit0 + 12, opLit0 + 10, opAnd, opLit0 + 1, opOr, opLit0 + 3, opXor}, 10, true},
		{"shl shr", []byte{opLit0 + 1, opLit0 + 10, opShl, opLit0 + 3, opShr}, 128, true},
		{"shl by 64 or more", []byte{opLit0 + 1, opConst1u, 200, opShl}, 0, true},
		{"shra", cat([]byte{opConsts}, sleb(-64), []byte{opLit0 + 3, opShra}), uint64(1<<64 - 8), true},
		{"neg not abs", cat([]byte{opLit0 + 5, opNeg, opAbs, opNot}), ^uint64(5), true},
		{"abs of negative", cat([]byte{opConsts}, sleb(-7), []byte{opAbs}), 7, true},
		{"comparisons are signed", cat([]byte{opConsts}, sleb(-1), []byte{opLit0 + 1, opLt}), 1, true},
		{"ge", []byte{opLit0 + 11, opLit0 + 11, opGe}, 1, true},
		{"gt", []byte{opLit0 + 11, opLit0 + 11, opGt}, 0, true},
		{"le", []byte{opLit0 + 12, opLit0 + 11, opLe}, 0, true},
		{"eq", []byte{opLit0 + 11, opLit0 + 11, opEq}, 1, true},
		{"ne", []byte{opLit0 + 11, opLit0 + 11, opNe}, 0, true},
		{"dup drop", []byte{opLit0 + 1, opLit0 + 2, opDup, opPlus, opPlus}, 5, true},
		{"drop", []byte{opLit0 + 1, opLit0 + 2, opDrop}, 1, true},
		{"swap", []byte{opLit0 + 1, opLit0 + 2, opSwap, opMinus}, 1, true},
		{"over", []byte{opLit0 + 1, opLit0 + 2, opOver, opMinus}, 1, true},
		{"pick", []byte{opLit0 + 7, opLit0 + 1, opLit0 + 2, opPick, 2}, 7, true},
		{"pick too deep", []byte{opLit0 + 7, opPick, 1}, 0, false},
		{"rot", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opRot, opDrop, opDrop}, 3, true},
		{"deref", cat([]byte{opBreg0 + 7}, sleb(0), []byte{opDeref}), 0x1122334455667788, true},
		{"deref_size", cat([]byte{opBreg0 + 7}, sleb(0), []byte{opDerefSize, 2}), 0x7788, true},
		{"deref_size 0", cat([]byte{opBreg0 + 7}, sleb(0), []byte{opDerefSize, 0}), 0, false},
		{"deref unreadable", []byte{opLit0, opDeref}, 0, false},
		{"nop", []byte{opNop, opLit0 + 4, opNop}, 4, true},
		{"skip", cat([]byte{opLit0 + 1, opSkip}, le16(1), []byte{opLit0 + 2}), 1, true},
		{"bra taken", cat([]byte{opLit0 + 5, opLit0 + 1, opBra}, le16(1), []byte{opLit0 + 2}), 5, true},
		{"bra not taken", cat([]byte{opLit0 + 5, opLit0, opBra}, le16(1), []byte{opLit0 + 2}), 2, true},
		{"skip out of range", cat([]byte{opSkip}, le16(100)), 0, false},
		{"endless loop", cat([]byte{opSkip}, le16(0xfffd)), 0, false},
		{"underflow", []byte{opPlus}, 0, false},
		{"empty result", []byte{opNop}, 0, false},
		{"register location is not a value", []byte{0x50}, 0, false},
		{"unknown op", []byte{0xe0}, 0, false},
		{"truncated operand", []byte{opConst4u, 1}, 0, false},
		{"PLT, first half of the entry", pltExpr, 0x7000 + 8, true},
		{"DRAP", drapExpr, 0x8000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := eval(tc.code, regs, mem, 0, false)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("eval = %#x, %v; want %#x, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestEvalPLT checks the PLT expression over a whole 16-byte entry: the
// CFA grows by 8 once the pc is at or past offset 11, after the push.
func TestEvalPLT(t *testing.T) {
	for off := uint64(0); off < 16; off++ {
		regs := regsOf(RegRSP, 0x7000, RegRA, 0x401020+off)
		got, ok := eval(pltExpr, regs, memMap(nil), 0, false)
		want := uint64(0x7008)
		if off >= 11 {
			want = 0x7010
		}
		if !ok || got != want {
			t.Errorf("pc offset %d: %#x, %v; want %#x", off, got, ok, want)
		}
	}
}

func TestEvalBounds(t *testing.T) {
	// The stack is bounded: pushing more than it holds fails.
	over := bytes.Repeat([]byte{opLit0}, maxExprStack+1)
	if _, ok := eval(over, &Regs{}, memMap(nil), 0, false); ok {
		t.Error("stack overflow accepted")
	}
	if v, ok := eval(over[:maxExprStack], &Regs{}, memMap(nil), 0, false); !ok || v != 0 {
		t.Errorf("a full stack: %v, %v", v, ok)
	}
	// So is the length.
	long := bytes.Repeat([]byte{opNop}, maxExprLen)
	long[0] = opLit0 + 1
	if _, ok := eval(long, &Regs{}, memMap(nil), 0, false); !ok {
		t.Error("maximal length rejected")
	}
	if _, ok := eval(append(long, opNop), &Regs{}, memMap(nil), 0, false); ok {
		t.Error("overlong expression accepted")
	}
	// The pushed initial value (the CFA) is the stack's first entry.
	if v, ok := eval([]byte{opLit0 + 8, opMinus}, &Regs{}, memMap(nil), 0x100, true); !ok || v != 0xf8 {
		t.Errorf("with CFA pushed: %#x, %v", v, ok)
	}
}
