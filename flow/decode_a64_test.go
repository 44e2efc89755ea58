package flow

import (
	"encoding/binary"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// arm64 encodings the tests assemble, with the immediates the asm fills in.
const (
	a64STP     = 0xa9bf7bfd // stp x29, x30, [sp, #-16]!
	a64MovFP   = 0x910003fd // mov x29, sp
	a64LDP     = 0xa8c17bfd // ldp x29, x30, [sp], #16
	a64Ret     = 0xd65f03c0 // ret
	a64RetAA   = 0xd65f0bff // retaa: pointer authentication, unknown to arm64asm
	a64BR      = 0xd61f0200 // br x16
	a64BLR     = 0xd63f0200 // blr x16
	a64B       = 0x14000000 // b, imm26
	a64BL      = 0x94000000 // bl, imm26
	a64BLE     = 0x5400000d // b.le, imm19
	a64CBNZ    = 0xb5000013 // cbnz x19, imm19
	a64TBZ     = 0x36180000 // tbz w0, #3, imm14
	a64CmpX0   = 0xf100001f // cmp x0, #0
	a64AddX0   = 0x91000400 // add x0, x0, #1
	a64SubX9   = 0xd1000673 // sub x19, x19, #1
	a64NOP     = 0xd503201f // nop
	a64BRK     = 0xd4207d00 // brk #0x3e8: __builtin_trap
	a64Unalloc = 0x02000000 // op0 = 0b0001: unallocated
	a64CASAL   = 0x88fbfc41 // casal w27, w1, [x2]: Go's atomics, unknown to arm64asm
)

// The encodings above are what arm64asm says they are: the tests would
// prove little if a hand encoding were wrong.
func TestA64Encodings(t *testing.T) {
	for _, tc := range []struct {
		w  uint32
		op arm64asm.Op
	}{
		{a64STP, arm64asm.STP}, {a64MovFP, arm64asm.MOV}, {a64LDP, arm64asm.LDP},
		{a64Ret, arm64asm.RET}, {a64BR, arm64asm.BR}, {a64BLR, arm64asm.BLR},
		{a64B | 4, arm64asm.B}, {a64BL | 4, arm64asm.BL}, {a64BLE | 4<<5, arm64asm.B},
		{a64CBNZ | 4<<5, arm64asm.CBNZ}, {a64TBZ | 4<<5, arm64asm.TBZ},
		{a64CmpX0, arm64asm.CMP}, {a64AddX0, arm64asm.ADD}, {a64SubX9, arm64asm.SUB},
		{a64NOP, arm64asm.NOP}, {a64BRK, arm64asm.BRK},
	} {
		inst, err := arm64asm.Decode(binary.LittleEndian.AppendUint32(nil, tc.w))
		if err != nil || inst.Op != tc.op {
			t.Errorf("%#08x: %v %v, want %v", tc.w, inst, err, tc.op)
		}
	}
	for _, w := range []uint32{a64RetAA, a64Unalloc, a64CASAL} {
		if inst, err := arm64asm.Decode(binary.LittleEndian.AppendUint32(nil, w)); err == nil {
			t.Errorf("%#08x decodes as %v", w, inst)
		}
	}
}

func TestA64ThreeCallsOneBlock(t *testing.T) {
	a := newAsm(t, base)
	a.word(a64STP).word(a64MovFP)
	a.label("c1").a64(a64BL, 0x500000, imm26)
	a.label("c2").a64(a64BL, 0x400000, imm26)
	a.label("c3").word(a64BLR)
	a.label("r3").word(a64LDP).word(a64Ret)
	code := a.code()
	g := decodeOK(t, "arm64", code, nil)
	checkBlocks(t, g, []wantBlock{{base, g.End, nil, true, []CallSite{
		{Addr: a.at("c1"), Ret: a.at("c2"), Target: 0x500000},
		{Addr: a.at("c2"), Ret: a.at("c3"), Target: 0x400000},
		{Addr: a.at("c3"), Ret: a.at("r3")},
	}}})
}

func TestA64Diamond(t *testing.T) {
	a := newAsm(t, base)
	a.word(a64CmpX0)
	a.a64(a64BLE, "else", imm19)
	a.label("then").a64(a64BL, 0x500000, imm26)
	a.label("b").a64(a64B, "join", imm26)
	a.label("else").a64(a64BL, 0x600000, imm26)
	a.label("join").word(a64AddX0).word(a64Ret)
	g := decodeOK(t, "arm64", a.code(), nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("then"), []int{2, 1}, false, nil},
		{a.at("then"), a.at("else"), []int{3}, false, []CallSite{{Addr: a.at("then"), Ret: a.at("b"), Target: 0x500000}}},
		{a.at("else"), a.at("join"), []int{3}, false, []CallSite{{Addr: a.at("else"), Ret: a.at("join"), Target: 0x600000}}},
		{a.at("join"), g.End, nil, true, nil},
	})
}

func TestA64Loops(t *testing.T) {
	a := newAsm(t, base)
	a.label("loop").a64(a64BL, 0x500000, imm26)
	a.label("sub").word(a64SubX9)
	a.a64(a64CBNZ, "loop", imm19)
	a.label("tbz").a64(a64TBZ, "r", imm14) // a forward test-bit branch
	a.label("c").a64(a64BL, 0x600000, imm26)
	a.label("r").word(a64Ret)
	g := decodeOK(t, "arm64", a.code(), nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("tbz"), []int{0, 1}, false, []CallSite{{Addr: base, Ret: a.at("sub"), Target: 0x500000}}},
		{a.at("tbz"), a.at("c"), []int{3, 2}, false, nil},
		{a.at("c"), a.at("r"), []int{3}, false, []CallSite{{Addr: a.at("c"), Ret: a.at("r"), Target: 0x600000}}},
		{a.at("r"), g.End, nil, true, nil},
	})
}

func TestA64NoReturnAndPadding(t *testing.T) {
	const abort = 0x7000
	a := newAsm(t, base)
	a.word(a64CmpX0)
	a.a64(a64BLE, "die", imm19)
	a.label("r").word(a64RetAA) // retaa: a return all the same
	a.label("die").a64(a64BL, abort, imm26)
	a.label("pad").word(a64NOP).word(0).word(a64BRK).word(a64NOP)
	g := decodeOK(t, "arm64", a.code(), func(t uint64) bool { return t == abort })
	checkBlocks(t, g, []wantBlock{
		{base, a.at("r"), []int{2, 1}, false, nil},
		{a.at("r"), a.at("die"), nil, true, nil},
		{a.at("die"), a.at("pad"), nil, true, []CallSite{{Addr: a.at("die"), Ret: a.at("pad"), Target: abort}}},
	})
}

func TestA64Conservative(t *testing.T) {
	a := newAsm(t, base)
	a.word(a64CmpX0).word(a64BR).word(a64Ret)
	decodeConservative(t, "arm64", a.code(), "indirect jump at 0x401004")

	a = newAsm(t, base)
	a.word(a64CmpX0).a64(a64B, 0x300000, imm26)
	g := decodeConservative(t, "arm64", a.code(), "tail call at 0x401004")
	if !g.Blocks[0].Exit {
		t.Errorf("tail call not an exit:\n%s", dump(g))
	}

	a = newAsm(t, base)
	a.word(a64CmpX0).a64(a64BLE, 0x300000, imm19).word(a64Ret)
	decodeConservative(t, "arm64", a.code(), "jump out of bounds at 0x401004")

	a = newAsm(t, base)
	a.word(a64CmpX0).word(a64Unalloc).word(a64Ret)
	decodeConservative(t, "arm64", a.code(), "undecodable bytes at 0x401004")

	// LSE atomics are instructions, though arm64asm does not know them.
	a = newAsm(t, base)
	a.word(a64CmpX0).word(a64CASAL).word(a64Ret)
	decodeOK(t, "arm64", a.code(), nil)

	// Bytes past the last whole word that are not zero: undecodable.
	decodeConservative(t, "arm64", append(newAsm(t, base).word(a64CmpX0).code(), 0x1f, 0x20), "undecodable bytes at 0x401004")
	// Zeros are padding, after a return.
	decodeOK(t, "arm64", append(newAsm(t, base).word(a64Ret).code(), 0, 0), nil)
}

// Branch immediates at their extremes, signed both ways.
func TestA64BranchImmediates(t *testing.T) {
	const pc = 0x10000000
	for _, tc := range []struct {
		w    uint32
		want uint64
	}{
		{imm26(a64B, -1), pc - 4},
		{imm26(a64BL, 1<<25-1), pc + (1<<25-1)*4},
		{imm26(a64BL, -1<<25), pc - 1<<27},
		{imm19(a64BLE, -1), pc - 4},
		{imm19(a64CBNZ, 1<<18-1), pc + (1<<18-1)*4},
		{imm19(a64CBNZ, -1<<18), pc - 1<<20},
		{imm14(a64TBZ, -1), pc - 4},
		{imm14(a64TBZ, 1<<13-1), pc + (1<<13-1)*4},
		{imm14(a64TBZ, -1<<13), pc - 1<<15},
	} {
		in := stepARM64(binary.LittleEndian.AppendUint32(nil, tc.w), pc)
		if in.target != tc.want {
			t.Errorf("%#08x: target %#x, want %#x", tc.w, in.target, tc.want)
		}
	}
}
