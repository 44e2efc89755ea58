package flow

import "golang.org/x/arch/x86/x86asm"

// stepAMD64 classifies the x86-64 instruction at the head of code.
func stepAMD64(code []byte, pc uint64) insn {
	if isEndbr(code) {
		// x86asm does not know CET's endbr64/endbr32 and would split them
		// into a lone rep prefix and a hint nop.
		return insn{n: 4}
	}
	if n := vzero(code); n > 0 {
		return insn{n: n}
	}
	if in, ok := fastAMD64(code, pc); ok {
		return in
	}
	return slowAMD64(code, pc)
}

// slowAMD64 classifies the instruction through x86asm.
func slowAMD64(code []byte, pc uint64) insn {
	inst, ok := decodeX86(code)
	if !ok {
		// One byte on: a linear sweep through data finds its way back to
		// instructions within a few. Zero bytes are the padding of some
		// linkers, cut short by the function's end.
		return insn{n: 1, kind: kBad, pad: code[0] == 0}
	}
	in := insn{n: inst.Len}
	rel, direct := inst.Args[0].(x86asm.Rel)
	if direct {
		in.target = pc + uint64(inst.Len) + uint64(int64(rel))
	}
	switch inst.Op {
	case x86asm.CALL:
		in.kind = kCallInd
		if direct {
			in.kind = kCall
		}
	case x86asm.LCALL:
		in.kind = kCallInd
	case x86asm.JMP:
		in.kind = kJmpInd
		if direct {
			in.kind = kJmp
		}
	case x86asm.LJMP:
		in.kind = kJmpInd
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JNE,
		x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JO, x86asm.JNO,
		x86asm.JP, x86asm.JNP, x86asm.JS, x86asm.JNS,
		x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE,
		x86asm.XBEGIN: // xbegin goes on, or to its target when the transaction aborts
		in.kind = kJcc
		if !direct {
			in.kind = kJmpInd // never decoded so; kept conservative if it were
		}
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.SYSRET, x86asm.SYSEXIT:
		in.kind = kRet
	case x86asm.UD0, x86asm.UD1, x86asm.UD2, x86asm.HLT:
		in.kind, in.pad = kTrap, true
	case x86asm.INT:
		// int3 (0xcc, or cd 03): gcc and Go pad with it; reached, it
		// kills the process unless a debugger is there. int $0x80 and
		// others return.
		if imm, ok := inst.Args[0].(x86asm.Imm); ok && imm == 3 {
			in.kind, in.pad = kTrap, true
		}
	case x86asm.NOP:
		in.pad = true
	case x86asm.ADD:
		in.pad = inst.Len == 2 && code[0] == 0 && code[1] == 0
	}
	return in
}

// decodeX86 decodes one instruction, saying false for bytes x86asm does
// not know: an error, or the lone prefix it returns as an instruction
// when what follows the prefix does not decode with it.
func decodeX86(code []byte) (inst x86asm.Inst, ok bool) {
	defer func() {
		// The profiler must not die of a decoder bug on some binary's
		// bytes; the fuzz test is how such bugs are found.
		if recover() != nil {
			ok = false
		}
	}()
	inst, err := x86asm.Decode(code, 64)
	return inst, err == nil && inst.Op != 0 && inst.Len > 0
}

func isEndbr(code []byte) bool {
	return len(code) >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && (code[3] == 0xfa || code[3] == 0xfb)
}

// vzero is the length of a vzeroupper or vzeroall, 0 for any other
// instruction. x86asm v0.33.0 reads a ModRM byte after every VEX opcode,
// these two have none, and the two bytes too many it says they take put
// the sweep out of step with Go's and glibc's AVX2 loops, which end with
// vzeroupper.
func vzero(code []byte) int {
	switch {
	case len(code) >= 3 && code[0] == 0xc5 && code[2] == 0x77:
		return 3 // two-byte VEX: the map is 0f
	case len(code) >= 4 && code[0] == 0xc4 && code[1]&0x1f == 1 && code[3] == 0x77:
		return 4 // three-byte VEX with map 0f
	}
	return 0
}
