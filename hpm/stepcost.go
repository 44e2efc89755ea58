package hpm

import (
	"debug/elf"
	"os"
)

// What one hit of a probe costs depends on the instruction it replaced. The
// kernel puts an int3 over it; on the hit it either emulates the instruction
// (x86-64: PUSH of a register, NOP, JMP, CALL and conditional jumps, in
// arch/x86/kernel/uprobes.c) or copies it to a page of its own and
// single-steps it there, a second trap. Measured in the VM cctop was built
// on (BENCHMARKS.md, "What a probe hit costs"): 0.6 µs a hit on a PUSH,
// 9.4 µs on ENDBR64, TEST or SUB. Budgets and cost figures that used one
// figure for both were off by fifteen times one way or the other.

// Emulated says whether the kernel emulates the instruction t's probe
// replaces rather than single-stepping it; known is false where the file
// cannot be read or the architecture is not one this knows, and then the
// caller should assume the dearer step.
func (t Target) Emulated() (emulated, known bool) {
	f, err := os.Open(t.Path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil || ef.Machine != elf.EM_X86_64 {
		return false, false
	}
	code := make([]byte, 16)
	n, _ := f.ReadAt(code, int64(t.Offset))
	return emulatedX86(code[:n]), n > 0
}

// emulatedX86 says whether an x86-64 instruction at the start of code is one
// the kernel's uprobes emulate: a PUSH of a 64-bit register (with REX.B for
// R8-R15), a one-byte NOP, a relative JMP or CALL, or a conditional jump.
// Any other prefix, ENDBR64 and multi-byte NOPs included, is stepped.
func emulatedX86(code []byte) bool {
	if len(code) == 0 {
		return false
	}
	op := code[0]
	if op == 0x41 && len(code) > 1 { // REX.B: push %r8-%r15
		return code[1] >= 0x50 && code[1] <= 0x57
	}
	switch {
	case op >= 0x50 && op <= 0x57: // push %rax-%rdi
		return true
	case op == 0x90, op == 0xe8, op == 0xe9, op == 0xeb: // nop, call, jmp
		return true
	case op >= 0x70 && op <= 0x7f: // jcc rel8
		return true
	case op == 0x0f && len(code) > 1 && code[1] >= 0x80 && code[1] <= 0x8f: // jcc rel32
		return true
	}
	return false
}
