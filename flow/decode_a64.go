package flow

import (
	"encoding/binary"
	"sync"

	"golang.org/x/arch/arm64/arm64asm"
)

// stepARM64 classifies the arm64 instruction at the head of code.
//
// The branches are read from their encodings here rather than from
// arm64asm: their formats are few and fixed, it saves the decoder's
// linear search through its table, and arm64asm does not know the
// pointer-authenticating ones (retaa, braaz, blraa...) that
// distributions' arm64 code uses. arm64asm says whether the other words
// of the branch group are instructions at all.
func stepARM64(code []byte, pc uint64) insn {
	if len(code) < 4 {
		return insn{n: len(code), kind: kBad, pad: allZero(code)}
	}
	w := binary.LittleEndian.Uint32(code)
	in := insn{n: 4}
	switch {
	case w&0x7c000000 == 0x14000000: // B, BL: imm26
		in.target = pc + uint64(int64(int32(w<<6)>>6)<<2)
		in.kind = kJmp
		if w&0x80000000 != 0 {
			in.kind = kCall
		}
	case w&0xff000000 == 0x54000000, // B.cond, BC.cond: imm19
		w&0x7e000000 == 0x34000000: // CBZ, CBNZ: imm19
		in.target = pc + uint64(int64(int32(w<<8)>>13)<<2)
		in.kind = kJcc
	case w&0x7e000000 == 0x36000000: // TBZ, TBNZ: imm14
		in.target = pc + uint64(int64(int32(w<<13)>>18)<<2)
		in.kind = kJcc
	case w&0xfe1f0000 == 0xd61f0000: // branch to a register, op2 = 0b11111
		switch (w >> 21) & 0xf {
		case 0, 8: // BR, BRAAZ, BRABZ; BRAA, BRAB
			in.kind = kJmpInd
		case 1, 9: // BLR, BLRAAZ, BLRABZ; BLRAA, BLRAB
			in.kind = kCallInd
		case 2, 4, 5: // RET, RETAA, RETAB; ERET, ERETAA, ERETAB; DRPS
			in.kind = kRet
		default:
			in.kind = kBad
		}
	case w&0xffe0001f == 0xd4200000, // BRK: gcc's __builtin_trap
		w&0xffe0001f == 0xd4400000, // HLT
		w&0xffff0000 == 0:          // UDF: Go's padding and its UNDEF
		in.kind, in.pad = kTrap, true
	case w == 0xd503201f: // NOP: gcc's padding
		in.pad = true
	case w&0x1c000000 == 0x14000000: // the rest of the branch, exception and system group
		// System instructions (barriers, hints, MSR and MRS) go on to
		// the next; arm64asm does not know all (msr dit, say).
		if w&0xffc00000 != 0xd5000000 && !decodeARM64(code) {
			in.kind = kBad
		}
	default:
		// No instruction outside that group transfers control, so a word
		// there needs no decoding: the next instruction is 4 bytes on
		// whatever it is. arm64asm does not know the LSE atomics (cas,
		// ldadd, swp) that Go and gcc emit, nor SVE, and calling it
		// would make them undecodable for nothing. Only the encoding
		// classes the architecture leaves unallocated are.
		switch (w >> 25) & 0xf {
		case 0b0000: // reserved, but for SME (bit 31) and udf above
			if w&0x80000000 == 0 {
				in.kind = kBad
			}
		case 0b0001, 0b0011:
			in.kind = kBad
		}
	}
	return in
}

// arm64asm.Decode writes a package-level coverage table on every call:
// Decode on several goroutines would race there. The words that come
// here are few (svc, a reserved encoding), so a lock costs nothing.
var arm64asmMu sync.Mutex

func decodeARM64(code []byte) (ok bool) {
	arm64asmMu.Lock()
	defer arm64asmMu.Unlock()
	defer func() {
		// As for x86asm: a decoder bug must not take the profiler down.
		if recover() != nil {
			ok = false
		}
	}()
	_, err := arm64asm.Decode(code)
	return err == nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
