package cfi

import "math"

// DW_CFA_* opcodes (DWARF 5 §6.4.2, plus GNU extensions).
const (
	cfaAdvanceLoc = 0x40 // high two bits; delta in the low six
	cfaOffset     = 0x80 // high two bits; register in the low six
	cfaRestore    = 0xc0 // high two bits; register in the low six

	cfaNop                       = 0x00
	cfaSetLoc                    = 0x01
	cfaAdvanceLoc1               = 0x02
	cfaAdvanceLoc2               = 0x03
	cfaAdvanceLoc4               = 0x04
	cfaOffsetExtended            = 0x05
	cfaRestoreExtended           = 0x06
	cfaUndefined                 = 0x07
	cfaSameValue                 = 0x08
	cfaRegister                  = 0x09
	cfaRememberState             = 0x0a
	cfaRestoreState              = 0x0b
	cfaDefCFA                    = 0x0c
	cfaDefCFARegister            = 0x0d
	cfaDefCFAOffset              = 0x0e
	cfaDefCFAExpression          = 0x0f
	cfaExpression                = 0x10
	cfaOffsetExtendedSf          = 0x11
	cfaDefCFASf                  = 0x12
	cfaDefCFAOffsetSf            = 0x13
	cfaValOffset                 = 0x14
	cfaValOffsetSf               = 0x15
	cfaValExpression             = 0x16
	cfaGNUArgsSize               = 0x2e
	cfaGNUNegativeOffsetExtended = 0x2f
)

// maxRemember bounds DW_CFA_remember_state nesting. Compilers nest one or
// two deep (a function with several epilogues); deeper input is refused
// rather than grown, so a Rule lookup never allocates.
const maxRemember = 16

// row is the rule set the instructions build.
type row struct {
	// cfa is the register+offset rule. It is kept while an expression is
	// in force (cfaIsExpr), because def_cfa_offset after def_cfa_expression
	// changes it and def_cfa_register returns to it, as in GCC's unwinder
	// and readelf.
	cfa       Loc
	cfaExpr   Loc
	cfaIsExpr bool
	regs      [nSlots]Loc
}

// machine executes CFA instructions up to a target pc.
type machine struct {
	t     *Table
	c     *cie
	row   row
	init  row // after the CIE's instructions: what DW_CFA_restore returns to
	stack [maxRemember]row
	depth int
	loc   uint64 // address the current row starts at
	pc    uint64 // target
	inFDE bool   // running the FDE's instructions, not the CIE's

	// For FramePointerShare: the FDE moved the CFA away from the CIE's
	// rule, and it based the CFA on RBP.
	cfaMoved, fpCFA bool
}

type runResult uint8

const (
	runEnd  runResult = iota // instructions exhausted
	runStop                  // advanced past the target pc
	runBad                   // malformed or unknown instruction
)

// start runs the CIE's and then the FDE's instructions up to pc.
func (m *machine) start(t *Table, f *fde, pc uint64) runResult {
	if int(f.cie) >= len(t.cies) {
		return runBad
	}
	m.t, m.c, m.loc, m.pc = t, &t.cies[f.cie], f.begin, pc
	res := m.run(m.c.ins, m.c.insEnd, f.begin)
	if res != runEnd {
		return res
	}
	m.init = m.row
	m.inFDE = true
	return m.run(f.ins, f.insEnd, f.begin)
}

// rule converts the current row into a Rule.
func (m *machine) rule() (Rule, bool) {
	var r Rule
	r.cfa = m.row.cfa
	if m.row.cfaIsExpr {
		r.cfa = m.row.cfaExpr
	}
	if r.cfa.kind == Unspecified {
		return Rule{}, false
	}
	r.regs = m.row.regs
	r.signal = m.c.signal
	if r.cfa.isExpr() {
		r.tab = m.t
	}
	for _, l := range r.regs {
		if l.isExpr() {
			r.tab = m.t
		}
	}
	return r, true
}

// set applies a rule to a register. The return address column is the
// CIE's choice, 16 on x86-64; other untracked registers are ignored.
func (m *machine) set(reg uint64, l Loc) {
	if reg == m.c.ra {
		m.row.regs[slotRA] = l
	}
	if s := slotOf(reg); s >= 0 {
		m.row.regs[s] = l
	}
}

func (m *machine) restore(reg uint64) {
	if reg == m.c.ra {
		m.row.regs[slotRA] = m.init.regs[slotRA]
	}
	if s := slotOf(reg); s >= 0 {
		m.row.regs[s] = m.init.regs[s]
	}
}

// advance moves the row start by delta code units and reports whether the
// new row begins past the target.
func (m *machine) advance(delta uint64) bool {
	d := delta * m.c.codeAlign // both bounded: no overflow
	next := m.loc + d
	if next < m.loc || next > m.pc {
		return true
	}
	m.loc = next
	return false
}

// factored scales an unsigned operand by the data alignment factor.
func (m *machine) factored(u uint64) (int32, bool) {
	if u > math.MaxInt32 {
		return 0, false
	}
	return fit32(int64(u) * m.c.dataAlign)
}

// sfactored scales a signed operand by the data alignment factor.
func (m *machine) sfactored(s int64) (int32, bool) {
	if s > math.MaxInt32 || s < math.MinInt32 {
		return 0, false
	}
	return fit32(s * m.c.dataAlign)
}

func fit32(v int64) (int32, bool) {
	if v > math.MaxInt32 || v < math.MinInt32 {
		return 0, false
	}
	return int32(v), true
}

// run executes the instructions in t.buf[ins:end]. begin is the FDE's
// pc_begin, the base of funcrel DW_CFA_set_loc operands.
func (m *machine) run(ins, end uint32, begin uint64) runResult {
	if ins > end || int(end) > len(m.t.buf) {
		return runBad
	}
	r := reader{b: m.t.buf[:end], pos: int(ins)}
	for r.pos < len(r.b) {
		op := r.u8()
		var ok bool
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			if m.advance(uint64(op & 0x3f)) {
				return runStop
			}
			ok = true
		case cfaOffset:
			ok = m.offset(uint64(op&0x3f), r.uleb(), AtCFA)
		case cfaRestore:
			m.restore(uint64(op & 0x3f))
			ok = true
		default:
			var stop bool
			stop, ok = m.extended(op, &r, begin)
			if stop {
				return runStop
			}
		}
		if !ok || r.bad {
			return runBad
		}
	}
	return runEnd
}

func (m *machine) offset(reg, u uint64, k LocKind) bool {
	off, ok := m.factored(u)
	m.set(reg, Loc{kind: k, off: off})
	return ok
}

func (m *machine) offsetSf(reg uint64, s int64, k LocKind) bool {
	off, ok := m.sfactored(s)
	m.set(reg, Loc{kind: k, off: off})
	return ok
}

// defCFA sets a register+offset CFA rule.
func (m *machine) defCFA(reg uint64, off int32) bool {
	if reg > math.MaxUint8 {
		return false
	}
	m.row.cfa = Loc{kind: InRegister, reg: uint8(reg), off: off}
	m.row.cfaIsExpr = false
	m.noteCFA()
	return true
}

// noteCFA records what FramePointerShare looks for after a CFA change: an
// RBP-based rule, or an expression starting from RBP (the realigned
// functions' DW_OP_breg6, which also keep a frame pointer chain).
func (m *machine) noteCFA() {
	if !m.inFDE {
		return
	}
	if m.row.cfaIsExpr || m.row.cfa != m.init.cfa {
		m.cfaMoved = true
	}
	if m.row.cfaIsExpr {
		e := m.row.cfaExpr
		if int(e.off) < len(m.t.buf) && e.n > 0 && m.t.buf[e.off] == opBreg0+RegRBP {
			m.fpCFA = true
		}
	} else if m.row.cfa.kind == InRegister && m.row.cfa.reg == RegRBP {
		m.fpCFA = true
	}
}

// block reads an expression operand and returns a Loc referring to it.
func (m *machine) block(r *reader, k LocKind) (Loc, bool) {
	n := r.uleb()
	if n > maxExprLen || !r.need(n) {
		return Loc{}, false
	}
	l := Loc{kind: k, n: uint16(n), off: int32(r.pos)}
	r.pos += int(n)
	return l, true
}

// extended executes an opcode whose high two bits are zero. stop reports
// that the row would begin past the target.
func (m *machine) extended(op uint8, r *reader, begin uint64) (stop, ok bool) {
	switch op {
	case cfaNop:
	case cfaSetLoc:
		s := &m.t.sects[m.c.sect]
		b := bases{pc: s.vaddr - uint64(s.start), fn: begin}
		if m.c.enc&peIndirect != 0 {
			return false, false
		}
		next := r.ptr(m.c.enc, m.c.addrSize, &b)
		if next > m.pc {
			return true, true
		}
		m.loc = next
	case cfaAdvanceLoc1:
		return m.advance(uint64(r.u8())), true
	case cfaAdvanceLoc2:
		return m.advance(uint64(r.u16())), true
	case cfaAdvanceLoc4:
		return m.advance(uint64(r.u32())), true
	case cfaOffsetExtended:
		reg := r.uleb()
		return false, m.offset(reg, r.uleb(), AtCFA)
	case cfaOffsetExtendedSf:
		reg := r.uleb()
		return false, m.offsetSf(reg, r.sleb(), AtCFA)
	case cfaValOffset:
		reg := r.uleb()
		return false, m.offset(reg, r.uleb(), ValCFA)
	case cfaValOffsetSf:
		reg := r.uleb()
		return false, m.offsetSf(reg, r.sleb(), ValCFA)
	case cfaGNUNegativeOffsetExtended:
		reg := r.uleb()
		u := r.uleb()
		if u > math.MaxInt32 {
			return false, false
		}
		return false, m.offsetSf(reg, -int64(u), AtCFA)
	case cfaRestoreExtended:
		m.restore(r.uleb())
	case cfaUndefined:
		m.set(r.uleb(), Loc{kind: Undefined})
	case cfaSameValue:
		m.set(r.uleb(), Loc{kind: SameValue})
	case cfaRegister:
		reg := r.uleb()
		src := r.uleb()
		if src > math.MaxUint8 {
			return false, false
		}
		m.set(reg, Loc{kind: InRegister, reg: uint8(src)})
	case cfaRememberState:
		if m.depth == len(m.stack) {
			return false, false
		}
		m.stack[m.depth] = m.row
		m.depth++
	case cfaRestoreState:
		if m.depth == 0 {
			return false, false
		}
		m.depth--
		m.row = m.stack[m.depth]
	case cfaDefCFA:
		reg := r.uleb()
		off, ok := fit32(int64(min(r.uleb(), math.MaxInt32+1)))
		return false, ok && m.defCFA(reg, off)
	case cfaDefCFASf:
		reg := r.uleb()
		off, ok := m.sfactored(r.sleb())
		return false, ok && m.defCFA(reg, off)
	case cfaDefCFARegister:
		return false, m.defCFA(r.uleb(), m.row.cfa.off)
	case cfaDefCFAOffset:
		off, ok := fit32(int64(min(r.uleb(), math.MaxInt32+1)))
		m.row.cfa.kind = InRegister
		m.row.cfa.off = off
		m.noteCFA()
		return false, ok
	case cfaDefCFAOffsetSf:
		off, ok := m.sfactored(r.sleb())
		m.row.cfa.kind = InRegister
		m.row.cfa.off = off
		m.noteCFA()
		return false, ok
	case cfaDefCFAExpression:
		l, ok := m.block(r, ValExpr)
		m.row.cfaExpr = l
		m.row.cfaIsExpr = ok
		m.noteCFA()
		return false, ok
	case cfaExpression, cfaValExpression:
		reg := r.uleb()
		k := AtExpr
		if op == cfaValExpression {
			k = ValExpr
		}
		l, ok := m.block(r, k)
		m.set(reg, l)
		return false, ok
	case cfaGNUArgsSize:
		r.uleb()
	default:
		return false, false
	}
	return false, true
}
