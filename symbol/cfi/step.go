package cfi

// Regs is a register set in x86-64 DWARF numbering (0 rax, 1 rdx, 2 rcx,
// 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the frame's pc).
// Bit n of Valid says R[n] is known.
type Regs struct {
	R     [NumRegs]uint64
	Valid uint32
}

// Set stores a known value.
func (r *Regs) Set(n int, v uint64) {
	if n >= 0 && n < NumRegs {
		r.R[n] = v
		r.Valid |= 1 << n
	}
}

// Get returns register n if it is known.
func (r *Regs) Get(n int) (uint64, bool) {
	if n < 0 || n >= NumRegs || r.Valid&(1<<n) == 0 {
		return 0, false
	}
	return r.R[n], true
}

// Step turns the callee's registers into the caller's: the CFA from its
// rule becomes the caller's RSP, the recovered return address its pc
// (R[16]), and the callee-saved registers are recovered by their rules.
// mem reads 8 bytes of the sampled stack and fails outside it.
//
// Step reports false, leaving regs unchanged, when the CFA or the return
// address cannot be computed: an undefined return address (the outermost
// frame), a zero one, unreadable memory, a register that is not known, or
// an expression it cannot evaluate. A callee-saved register that cannot be
// recovered only becomes unknown: the walk can go on until some rule
// needs it.
//
// The caller-saved registers are not preserved across calls, and a Rule
// does not track them: they are unknown in the result.
func (r Rule) Step(regs *Regs, mem func(addr uint64) (uint64, bool)) bool {
	switch r.regs[slotRA].kind {
	case Unspecified, SameValue, Undefined:
		// Undefined marks the outermost frame; the other two would make
		// the callee's pc its own return address.
		return false
	}
	cfa, ok := r.cfaValue(regs, mem)
	if !ok {
		return false
	}
	ra, ok := r.value(r.regs[slotRA], RegRA, cfa, regs, mem)
	if !ok || ra == 0 {
		return false
	}
	var out Regs
	out.Set(RegRA, ra)
	out.Set(RegRSP, cfa)
	for s := slotRBX; s < slotRA; s++ {
		reg := int(slotRegs[s])
		if v, ok := r.value(r.regs[s], reg, cfa, regs, mem); ok {
			out.Set(reg, v)
		}
	}
	*regs = out
	return true
}

func (r *Rule) cfaValue(regs *Regs, mem func(uint64) (uint64, bool)) (uint64, bool) {
	switch r.cfa.kind {
	case InRegister:
		v, ok := regs.Get(int(r.cfa.reg))
		return v + uint64(int64(r.cfa.off)), ok
	case ValExpr:
		code := r.expr(r.cfa)
		if code == nil {
			return 0, false
		}
		return eval(code, regs, mem, 0, false)
	}
	return 0, false
}

// value recovers register reg of the caller under rule l.
func (r *Rule) value(l Loc, reg int, cfa uint64, regs *Regs, mem func(uint64) (uint64, bool)) (uint64, bool) {
	switch l.kind {
	case Unspecified, SameValue:
		return regs.Get(reg)
	case AtCFA:
		return mem(cfa + uint64(int64(l.off)))
	case ValCFA:
		return cfa + uint64(int64(l.off)), true
	case InRegister:
		v, ok := regs.Get(int(l.reg))
		return v + uint64(int64(l.off)), ok
	case AtExpr, ValExpr:
		code := r.expr(l)
		if code == nil {
			return 0, false
		}
		a, ok := eval(code, regs, mem, cfa, true)
		if !ok || l.kind == ValExpr {
			return a, ok
		}
		return mem(a)
	}
	return 0, false
}
