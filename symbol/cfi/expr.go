package cfi

// DW_OP_* opcodes the evaluator knows (DWARF 5 §2.5.1).
const (
	opAddr       = 0x03
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConst8u    = 0x0e
	opConst8s    = 0x0f
	opConstu     = 0x10
	opConsts     = 0x11
	opDup        = 0x12
	opDrop       = 0x13
	opOver       = 0x14
	opPick       = 0x15
	opSwap       = 0x16
	opRot        = 0x17
	opAbs        = 0x19
	opAnd        = 0x1a
	opDiv        = 0x1b
	opMinus      = 0x1c
	opMod        = 0x1d
	opMul        = 0x1e
	opNeg        = 0x1f
	opNot        = 0x20
	opOr         = 0x21
	opPlus       = 0x22
	opPlusUconst = 0x23
	opShl        = 0x24
	opShr        = 0x25
	opShra       = 0x26
	opXor        = 0x27
	opBra        = 0x28
	opEq         = 0x29
	opGe         = 0x2a
	opGt         = 0x2b
	opLe         = 0x2c
	opLt         = 0x2d
	opNe         = 0x2e
	opSkip       = 0x2f
	opLit0       = 0x30
	opLit31      = 0x4f
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opBregx      = 0x92
	opDerefSize  = 0x94
	opNop        = 0x96
)

// Bounds on expressions. CFI expressions in real binaries are a few to a
// few dozen bytes (the PLT's is 11); the limits keep malformed input from
// costing more than a few microseconds.
const (
	maxExprLen   = 1024
	maxExprStack = 64
	maxExprSteps = 4096 // branches can revisit bytes, so length alone is no bound
)

// exprStack is the evaluation stack; it records underflow and overflow
// instead of panicking, and evaluation stops at the next check.
type exprStack struct {
	v   [maxExprStack]uint64
	n   int
	bad bool
}

func (s *exprStack) push(v uint64) {
	if s.n == len(s.v) {
		s.bad = true
		return
	}
	s.v[s.n] = v
	s.n++
}

func (s *exprStack) pop() uint64 {
	if s.n == 0 {
		s.bad = true
		return 0
	}
	s.n--
	return s.v[s.n]
}

// at returns the entry i places below the top.
func (s *exprStack) at(i int) uint64 {
	if i < 0 || i >= s.n {
		s.bad = true
		return 0
	}
	return s.v[s.n-1-i]
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// eval computes a DWARF expression over the callee's registers and stack.
// With push set, initial is on the stack first: the CFA, for the
// DW_CFA_expression and DW_CFA_val_expression rules.
func eval(code []byte, regs *Regs, mem func(uint64) (uint64, bool), initial uint64, push bool) (uint64, bool) {
	if len(code) > maxExprLen {
		return 0, false
	}
	var s exprStack
	if push {
		s.push(initial)
	}
	r := reader{b: code}
	for steps := 0; r.pos < len(code); steps++ {
		if steps == maxExprSteps {
			return 0, false
		}
		op := r.u8()
		switch {
		case op >= opLit0 && op <= opLit31:
			s.push(uint64(op - opLit0))
			continue
		case op >= opBreg0 && op <= opBreg31:
			off := r.sleb()
			v, ok := regs.Get(int(op - opBreg0))
			if !ok {
				return 0, false
			}
			s.push(v + uint64(off))
			continue
		}
		switch op {
		case opNop:
		case opAddr:
			s.push(r.u64())
		case opConst1u:
			s.push(uint64(r.u8()))
		case opConst1s:
			s.push(uint64(int64(int8(r.u8()))))
		case opConst2u:
			s.push(uint64(r.u16()))
		case opConst2s:
			s.push(uint64(int64(int16(r.u16()))))
		case opConst4u:
			s.push(uint64(r.u32()))
		case opConst4s:
			s.push(uint64(int64(int32(r.u32()))))
		case opConst8u, opConst8s:
			s.push(r.u64())
		case opConstu:
			s.push(r.uleb())
		case opConsts:
			s.push(uint64(r.sleb()))
		case opBregx:
			reg := r.uleb()
			off := r.sleb()
			if reg >= NumRegs {
				return 0, false
			}
			v, ok := regs.Get(int(reg))
			if !ok {
				return 0, false
			}
			s.push(v + uint64(off))
		case opDup:
			s.push(s.at(0))
		case opDrop:
			s.pop()
		case opOver:
			s.push(s.at(1))
		case opPick:
			s.push(s.at(int(r.u8())))
		case opSwap:
			a, b := s.pop(), s.pop()
			s.push(a)
			s.push(b)
		case opRot:
			a, b, c := s.pop(), s.pop(), s.pop()
			s.push(a)
			s.push(c)
			s.push(b)
		case opDeref, opDerefSize:
			size := uint8(8)
			if op == opDerefSize {
				size = r.u8()
				if size == 0 || size > 8 {
					return 0, false
				}
			}
			v, ok := mem(s.pop())
			if !ok {
				return 0, false
			}
			if size < 8 {
				v &= 1<<(8*size) - 1
			}
			s.push(v)
		case opAbs:
			v := int64(s.pop())
			if v < 0 {
				v = -v
			}
			s.push(uint64(v))
		case opNeg:
			s.push(-s.pop())
		case opNot:
			s.push(^s.pop())
		case opPlusUconst:
			s.push(s.pop() + r.uleb())
		case opAnd, opDiv, opMinus, opMod, opMul, opOr, opPlus, opShl, opShr, opShra, opXor,
			opEq, opGe, opGt, opLe, opLt, opNe:
			b, a := s.pop(), s.pop()
			v, ok := binop(op, a, b)
			if !ok {
				return 0, false
			}
			s.push(v)
		case opSkip, opBra:
			off := int16(r.u16())
			if op == opBra && s.pop() == 0 {
				break
			}
			to := r.pos + int(off)
			if to < 0 || to > len(code) {
				return 0, false
			}
			r.pos = to
		default:
			// DW_OP_regN and friends name locations, not values, and are
			// invalid here; anything else is unknown.
			return 0, false
		}
		if s.bad || r.bad {
			return 0, false
		}
	}
	if s.bad || r.bad || s.n == 0 {
		return 0, false
	}
	return s.at(0), true
}

// binop applies a two-operand op to a (second entry) and b (top).
// Comparisons are signed, as DWARF specifies for generic-type values.
func binop(op uint8, a, b uint64) (uint64, bool) {
	switch op {
	case opAnd:
		return a & b, true
	case opOr:
		return a | b, true
	case opXor:
		return a ^ b, true
	case opPlus:
		return a + b, true
	case opMinus:
		return a - b, true
	case opMul:
		return a * b, true
	case opDiv:
		if b == 0 {
			return 0, false
		}
		return uint64(int64(a) / int64(b)), true
	case opMod:
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case opShl:
		return a << b, true
	case opShr:
		return a >> b, true
	case opShra:
		return uint64(int64(a) >> b), true
	case opEq:
		return b2u(a == b), true
	case opNe:
		return b2u(a != b), true
	case opGe:
		return b2u(int64(a) >= int64(b)), true
	case opGt:
		return b2u(int64(a) > int64(b)), true
	case opLe:
		return b2u(int64(a) <= int64(b)), true
	case opLt:
		return b2u(int64(a) < int64(b)), true
	}
	return 0, false
}
