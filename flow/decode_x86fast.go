package flow

// x86asm allocates for most instructions it decodes (a memory operand or
// an immediate goes into an interface) and takes some 250 ns for each;
// compiled code is mostly a few dozen integer opcodes whose length and
// kind follow from their first bytes. fastAMD64 reads those and leaves
// everything else, and every case it is unsure of, to x86asm: it is an
// accelerator, and FuzzX86Fast holds it to give what x86asm gives.

// Opcode flags.
const (
	fOK    uint16 = 1 << iota // known here
	fM                        // a ModRM byte follows
	fI8                       // an 8-bit immediate
	fIz                       // a 16-bit immediate under 66, else 32-bit
	fIv                       // mov r, imm: 64-bit under REX.W
	fIw                       // a 16-bit immediate
	f66                       // known here under a 66 prefix too
	fMem                      // ModRM must name memory (lea)
	fReg0                     // ModRM's reg field must be 0
	fGrp                      // ModRM's reg field decides (F6, F7, FE, FF)
	fNoRex                    // known here only without REX (90: xchg with REX.B)
	fBr                       // a branch or a call, never under 66
	fNoW                      // known here only without REX.W (x86asm has no nopq)
)

var (
	x86One [256]uint16 // the one-byte map
	x86Two [256]uint16 // the 0f map
)

func init() {
	set := func(t *[256]uint16, f uint16, ops ...int) {
		for _, op := range ops {
			t[op] = f | fOK
		}
	}
	// add, or, adc, sbb, and, sub, xor, cmp
	for base := 0x00; base < 0x40; base += 8 {
		set(&x86One, fM|f66, base, base+1, base+2, base+3)
		set(&x86One, fI8, base+4)
		set(&x86One, fIz|f66, base+5)
	}
	for op := 0x50; op < 0x60; op++ {
		set(&x86One, f66, op) // push, pop
	}
	set(&x86One, fM, 0x63)     // movsxd
	set(&x86One, fM|fIz, 0x69) // imul r, r/m, imm32
	set(&x86One, fI8, 0x6a)    // push imm8
	set(&x86One, fM|fI8, 0x6b) // imul r, r/m, imm8
	set(&x86One, fI8|fBr, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
		0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f) // jcc rel8
	set(&x86One, fM|fI8|f66, 0x80, 0x83)
	set(&x86One, fM|fIz|f66, 0x81)
	set(&x86One, fM|f66, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b)  // test, xchg, mov
	set(&x86One, fM|fMem|f66, 0x8d)                                       // lea
	set(&x86One, fNoRex|f66, 0x90)                                        // nop
	set(&x86One, 0, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99) // xchg, cwde, cdq
	set(&x86One, fI8, 0xa8)                                               // test al, imm8
	set(&x86One, fIz|f66, 0xa9)
	set(&x86One, fI8, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7)
	set(&x86One, fIv, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf)
	set(&x86One, fIw, 0xc2)                 // ret imm16
	set(&x86One, 0, 0xc3, 0xc9, 0xcc, 0xf4) // ret, leave, int3, hlt
	set(&x86One, fM|fI8|fReg0, 0xc6)        // mov r/m8, imm8 (c6 f8 is xabort)
	set(&x86One, fM|fIz|fReg0|f66, 0xc7)    // mov r/m, imm32 (c7 f8 is xbegin)
	set(&x86One, fI8, 0xcd)                 // int imm8
	set(&x86One, fIz|fBr, 0xe8, 0xe9)       // call, jmp rel32
	set(&x86One, fI8|fBr, 0xeb)             // jmp rel8
	set(&x86One, fM|fGrp|f66, 0xf6, 0xf7, 0xfe, 0xff)

	set(&x86Two, 0, 0x05, 0x0b, 0xa2) // syscall, ud2, cpuid
	set(&x86Two, fM|fReg0|fMem|f66|fNoW, 0x1f)
	for op := 0x40; op < 0x50; op++ {
		set(&x86Two, fM|f66, op) // cmov
	}
	for op := 0x80; op < 0x90; op++ {
		set(&x86Two, fIz|fBr, op) // jcc rel32
	}
	for op := 0x90; op < 0xa0; op++ {
		set(&x86Two, fM|fReg0, op) // setcc
	}
	set(&x86Two, fM|f66, 0xa3, 0xab, 0xaf, 0xb6, 0xb7, 0xbe, 0xbf) // bt, bts, imul, movzx, movsx
	set(&x86Two, fM|fI8|f66, 0xa4, 0xac)                           // shld, shrd imm8
	set(&x86Two, fM|f66, 0xa5, 0xad)                               // shld, shrd cl
	for op := 0xc8; op < 0xd0; op++ {
		set(&x86Two, 0, op) // bswap
	}
}

// fastAMD64 classifies the instruction at code's head as stepAMD64 would
// through x86asm, when it is one of the opcodes above; ok is false for
// any other, and for anything it is not sure of.
func fastAMD64(code []byte, pc uint64) (in insn, ok bool) {
	i, op16 := 0, false
prefixes:
	for ; i < len(code); i++ {
		switch code[i] {
		case 0x66:
			op16 = true
		case 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65:
		default:
			break prefixes
		}
	}
	if i >= len(code) {
		return in, false
	}
	rex := byte(0)
	if code[i]&0xf0 == 0x40 {
		rex = code[i]
		if i++; i >= len(code) {
			return in, false
		}
	}
	op := code[i]
	i++
	f, two := x86One[op], false
	if op == 0x0f {
		if i >= len(code) {
			return in, false
		}
		op = code[i]
		i++
		f, two = x86Two[op], true
	}
	if f&fOK == 0 || op16 && f&f66 == 0 || rex != 0 && f&fNoRex != 0 || rex&8 != 0 && f&fNoW != 0 {
		return in, false
	}
	reg := byte(0)
	if f&fM != 0 {
		if i >= len(code) {
			return in, false
		}
		m := code[i]
		i++
		mod, rm := m>>6, m&7
		reg = (m >> 3) & 7
		if mod == 3 && f&fMem != 0 || reg != 0 && f&fReg0 != 0 {
			return in, false
		}
		if mod != 3 && rm == 4 {
			if i >= len(code) {
				return in, false
			}
			if code[i]&7 == 5 && mod == 0 {
				i += 4 // no base: disp32
			}
			i++
		}
		switch {
		case mod == 1:
			i++
		case mod == 2, mod == 0 && rm == 5:
			i += 4
		}
	}
	if f&fGrp != 0 {
		switch {
		case op == 0xf6 && reg == 0:
			f |= fI8
		case op == 0xf7 && reg == 0:
			f |= fIz
		case op == 0xf6 || op == 0xf7:
			if reg == 1 {
				return in, false // an alias of test some decoders refuse
			}
		case op == 0xfe && reg > 1, op == 0xff && (reg == 3 || reg == 5 || reg == 7):
			return in, false // invalid, or far call and jump
		}
	}
	imm := 0
	op16 = op16 && rex&8 == 0 // REX.W overrides 66
	switch {
	case f&fI8 != 0:
		imm = 1
	case f&fIz != 0 && op16, f&fIw != 0:
		imm = 2
	case f&fIz != 0:
		imm = 4
	case f&fIv != 0 && rex&8 != 0:
		imm = 8
	case f&fIv != 0 && op16:
		imm = 2
	case f&fIv != 0:
		imm = 4
	}
	n := i + imm
	if n > len(code) || n > 15 {
		return in, false
	}
	in.n = n
	if f&fBr != 0 {
		if op16 {
			return in, false
		}
		var rel int64
		if imm == 1 {
			rel = int64(int8(code[i]))
		} else {
			rel = int64(int32(uint32(code[i]) | uint32(code[i+1])<<8 | uint32(code[i+2])<<16 | uint32(code[i+3])<<24))
		}
		in.target = pc + uint64(n) + uint64(rel)
		switch {
		case op == 0xe8 && !two:
			in.kind = kCall
		case (op == 0xe9 || op == 0xeb) && !two:
			in.kind = kJmp
		default:
			in.kind = kJcc
		}
		return in, true
	}
	switch {
	case two:
		switch op {
		case 0x0b:
			in.kind, in.pad = kTrap, true
		case 0x1f:
			in.pad = true
		}
	case op == 0xff && reg == 2:
		in.kind = kCallInd
	case op == 0xff && reg == 4:
		in.kind = kJmpInd
	case op == 0xc2 || op == 0xc3:
		in.kind = kRet
	case op == 0xcc || op == 0xf4:
		in.kind, in.pad = kTrap, true
	case op == 0xcd:
		if code[i] == 3 {
			in.kind, in.pad = kTrap, true
		}
	case op == 0x90:
		in.pad = true
	case op == 0x00:
		in.pad = n == 2 && code[0] == 0 && code[1] == 0
	}
	return in, true
}
