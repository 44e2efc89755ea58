package symbol

// Frames of code that has no CFI and does not begin with the frame-pointer
// prologue fpPrologue knows, read from its machine code (amd64):
//
//   - Runtime builtins that set their frame pointer up after some checks
//     (V8's builtins: Builtins_InterpreterEntryTrampoline tests its
//     function's state, then pushes %rbp and sets it), and functions that
//     gcc shrink-wraps (an early exit before the prologue). frameSetup
//     finds the first push %rbp; mov %rsp,%rbp in the function's bytes:
//     past it, the frame pointer is the function's own.
//   - Small JIT stubs whose frame is a few pushes and a sub from %rsp, such
//     as CPython's perf trampolines (sub $8,%rsp; call *%rcx; add $8,%rsp;
//     ret), copied for every Python function, with no CFI and no frame
//     pointer. stubFrame decodes the stub from its start (known from the
//     perf map or jitdump that names it) to the pc: where every
//     instruction before the pc is one it understands, the frame's size is
//     exact.
//
// Both feed the validated steps of fpstep.go: a return address must still
// follow a call.

// maxSetupScan bounds frameSetup's scan of a function's bytes.
const maxSetupScan = 16 << 10

// noSetup is frameSetup's answer for a function with no frame setup in
// its first maxSetupScan bytes.
const noSetup = -1

// findSetup is the offset in code of the first push %rbp; mov %rsp,%rbp
// (55 48 89 e5, or 55 48 8b ec), or noSetup. It matches bytes, not decoded
// instructions: a match inside another instruction's operand is possible,
// and is why the step it allows is still validated.
func findSetup(code []byte) int {
	for i := 0; i+4 <= len(code); i++ {
		if code[i] != 0x55 || code[i+1] != 0x48 {
			continue
		}
		if code[i+2] == 0x89 && code[i+3] == 0xe5 || code[i+2] == 0x8b && code[i+3] == 0xec {
			return i
		}
	}
	return noSetup
}

// stub is what stubFrame found of a stub's frame at a pc.
type stub struct {
	// frame is how far SP is below the return address's slot: the
	// return address is at SP+frame.
	frame uint64
	// rbp is where the caller's %rbp was pushed, as an offset from SP
	// (valid when savedRBP).
	rbp      uint64
	savedRBP bool
	// fp: the stub set %rbp to its frame (mov %rsp,%rbp); the frame
	// pointer unwinds it.
	fp bool
}

// maxStubBytes is how much of a stub stubFrame reads.
const maxStubBytes = 64

// stubFrame decodes code, a stub's bytes from its first instruction, up to
// pc (an offset in code). With exact false, pc is a return address: the
// instruction before it must be a call, reached through instructions
// stubFrame understands. It reports false where it cannot tell.
func stubFrame(code []byte, pc int, exact bool) (stub, bool) {
	if pc < 0 || pc > len(code) {
		return stub{}, false
	}
	var s stub
	var pushed uint64 // bytes pushed or reserved so far
	off := 0
	for off < len(code) && off < pc {
		b := code[off:]
		n := 0
		switch {
		case len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa:
			n = 4 // endbr64
		case b[0] >= 0x50 && b[0] <= 0x57:
			n = 1
			pushed += 8
			if b[0] == 0x55 {
				s.rbp, s.savedRBP = pushed, true
			}
		case len(b) >= 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57:
			n = 2
			pushed += 8
		case len(b) >= 3 && b[0] == 0x48 && (b[1] == 0x89 && b[2] == 0xe5 || b[1] == 0x8b && b[2] == 0xec):
			n = 3
			s.fp = true
		case len(b) >= 4 && b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xec:
			n = 4
			pushed += uint64(b[3]) // sub $imm8,%rsp: imm8 is sign-extended
			if b[3] >= 0x80 {
				return stub{}, false
			}
		case len(b) >= 7 && b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xec:
			imm := uint32(b[3]) | uint32(b[4])<<8 | uint32(b[5])<<16 | uint32(b[6])<<24
			if imm >= 1<<31 {
				return stub{}, false
			}
			n = 7
			pushed += uint64(imm)
		case movRegReg(b):
			n = 3
		default:
			// Not a prologue instruction: a return address must be
			// the end of a call that starts here.
			if exact || !callAt(code[off:pc]) {
				return stub{}, false
			}
			n = pc - off
		}
		off += n
	}
	if off != pc {
		return stub{}, false
	}
	s.frame = pushed
	if s.savedRBP {
		s.rbp = pushed - s.rbp
	}
	return s, true
}

// callAt reports whether code is exactly one call instruction (E8 rel32 or
// FF /2 with its operand, after REX and legacy prefixes).
func callAt(code []byte) bool {
	for len(code) > 0 && (code[0]&0xf0 == 0x40 || code[0] == 0x3e || code[0] == 0x2e) {
		code = code[1:]
	}
	switch {
	case len(code) == 5 && code[0] == 0xe8:
		return true
	case len(code) >= 2 && code[0] == 0xff:
		return modRMLen(code[1:]) == len(code)-1
	}
	return false
}

// movRegReg reports whether b starts with a 64-bit mov between registers
// that leaves %rsp and %rbp alone (REX.W 89/8B, ModRM mod 3).
func movRegReg(b []byte) bool {
	if len(b) < 3 || b[0]&0xf8 != 0x48 || (b[1] != 0x89 && b[1] != 0x8b) || b[2]>>6 != 3 {
		return false
	}
	dst := b[2] & 7 // 89: rm is the destination
	if b[1] == 0x8b {
		dst = b[2] >> 3 & 7
	}
	rex := b[0]
	if b[1] == 0x89 && rex&1 != 0 || b[1] == 0x8b && rex&4 != 0 {
		return true // r8-r15
	}
	return dst != 4 && dst != 5
}
