package cfi

import (
	"fmt"
	"strings"
)

// x86-64 DWARF register numbers (System V psABI, figure 3.36).
const (
	RegRAX  = 0
	RegRDX  = 1
	RegRCX  = 2
	RegRBX  = 3
	RegRSI  = 4
	RegRDI  = 5
	RegRBP  = 6
	RegRSP  = 7
	RegR8   = 8
	RegR9   = 9
	RegR10  = 10
	RegR11  = 11
	RegR12  = 12
	RegR13  = 13
	RegR14  = 14
	RegR15  = 15
	RegRA   = 16 // return address column; in Regs, the frame's pc
	NumRegs = 17 // registers in Regs: rax..r15 and the return address column
)

var regNames = [NumRegs]string{
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ra",
}

// LocKind says how a register (or the CFA) of the caller is recovered.
type LocKind uint8

const (
	// Unspecified: no instruction mentioned the register. Callee-saved
	// registers then keep their value, as in GCC's unwinder; for the
	// return address it means there is no way to find the caller.
	Unspecified LocKind = iota
	Undefined           // not recoverable; for the return address: outermost frame
	SameValue           // the callee did not change it
	AtCFA               // saved in memory at CFA+Offset
	ValCFA              // its value is CFA+Offset
	InRegister          // its value is register Reg plus Offset
	AtExpr              // saved in memory at the address an expression computes
	ValExpr             // its value is what an expression computes
)

var kindNames = [...]string{"unspecified", "undefined", "same", "at-cfa", "val-cfa", "register", "at-expr", "val-expr"}

func (k LocKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("LocKind(%d)", uint8(k))
}

// Loc is one recovery rule. For the CFA only InRegister (register plus
// offset) and ValExpr occur.
type Loc struct {
	kind LocKind
	reg  uint8
	n    uint16 // expression length
	off  int32  // offset, or for expressions their position in Table.buf
}

func (l Loc) Kind() LocKind { return l.kind }

// Reg is the source register of an InRegister rule.
func (l Loc) Reg() int { return int(l.reg) }

// Offset is the offset of AtCFA, ValCFA and InRegister rules, 0 otherwise.
func (l Loc) Offset() int64 {
	if l.isExpr() {
		return 0
	}
	return int64(l.off)
}

func (l Loc) isExpr() bool { return l.kind == AtExpr || l.kind == ValExpr }

func regName(r uint8) string {
	if int(r) < len(regNames) {
		return regNames[r]
	}
	return fmt.Sprintf("r%d", r)
}

// String uses readelf's frames-interp notation: u, s, c-8, v+16, rbx,
// exp, vexp.
func (l Loc) String() string {
	switch l.kind {
	case Undefined, Unspecified:
		return "u"
	case SameValue:
		return "s"
	case AtCFA:
		return fmt.Sprintf("c%+d", l.off)
	case ValCFA:
		return fmt.Sprintf("v%+d", l.off)
	case InRegister:
		if l.off == 0 {
			return regName(l.reg)
		}
		return fmt.Sprintf("%s%+d", regName(l.reg), l.off)
	case AtExpr:
		return "exp"
	case ValExpr:
		return "vexp"
	}
	return l.kind.String()
}

// Slots of the registers a Rule tracks: the callee-saved ones of the x86-64
// psABI (RSP is the CFA itself) and the return address.
const (
	slotRBX = iota
	slotRBP
	slotR12
	slotR13
	slotR14
	slotR15
	slotRA
	nSlots
)

var slotRegs = [nSlots]uint8{RegRBX, RegRBP, RegR12, RegR13, RegR14, RegR15, RegRA}

// slotOf maps a DWARF register number to its slot, or -1 if untracked.
func slotOf(reg uint64) int {
	switch reg {
	case RegRBX:
		return slotRBX
	case RegRBP:
		return slotRBP
	case RegR12, RegR13, RegR14, RegR15:
		return slotR12 + int(reg-RegR12)
	}
	return -1
}

// Rule is the unwind rule in force at one pc: how to compute the CFA and
// recover the return address and the callee-saved registers. It is a small
// comparable value, so callers can memoize it per pc.
type Rule struct {
	cfa    Loc
	regs   [nSlots]Loc
	signal bool
	// tab holds the bytes of expression rules. It is nil when no rule is an
	// expression, so plain Rules compare equal across tables.
	tab *Table
}

// CFA returns the rule computing the canonical frame address: the caller's
// RSP just before its call instruction.
func (r Rule) CFA() Loc { return r.cfa }

// Reg returns the rule for DWARF register n. It is Unspecified for
// registers a Rule does not track (the caller-saved ones and RSP).
func (r Rule) Reg(n int) Loc {
	if n == RegRA {
		return r.regs[slotRA]
	}
	if s := slotOf(uint64(n)); s >= 0 {
		return r.regs[s]
	}
	return Loc{}
}

// Signal reports that the frame is a signal trampoline ('S' augmentation).
// Its caller's pc is then the interrupted instruction itself, to be looked
// up as is: for any other frame the caller's pc is a return address, and
// its rule is that of pc-1, which is still inside the call.
func (r Rule) Signal() bool { return r.signal }

// String renders the rule like a readelf frames-interp row:
// "cfa=rsp+16 rbx=c-16 ra=c-8".
func (r Rule) String() string {
	var b strings.Builder
	b.WriteString("cfa=")
	switch r.cfa.kind {
	case InRegister:
		fmt.Fprintf(&b, "%s%+d", regName(r.cfa.reg), r.cfa.off)
	case ValExpr:
		b.WriteString("exp")
	default:
		b.WriteString(r.cfa.String())
	}
	for s, l := range r.regs {
		if l.kind != Unspecified {
			fmt.Fprintf(&b, " %s=%s", regNames[slotRegs[s]], l)
		}
	}
	if r.signal {
		b.WriteString(" signal")
	}
	return b.String()
}

// expr returns the bytes of an expression rule.
func (r *Rule) expr(l Loc) []byte {
	if r.tab == nil {
		return nil
	}
	start := int(l.off)
	end := start + int(l.n)
	if start < 0 || end > len(r.tab.buf) {
		return nil
	}
	return r.tab.buf[start:end]
}

// Rule returns the rule in force at pc, a link-time virtual address of the
// module: the CIE's initial instructions and then the FDE's, executed up to
// pc. It reports false when no FDE covers pc, when an instruction before pc
// cannot be executed, or when no CFA rule results.
//
// For a caller frame, pass the return address minus one (unless the callee
// was a signal frame): a call to a noreturn function may be the last
// instruction of its function, leaving the return address outside it.
func (t *Table) Rule(pc uint64) (Rule, bool) {
	i := t.find(pc)
	if i < 0 {
		return Rule{}, false
	}
	var m machine
	if m.start(t, &t.fdes[i], pc) == runBad {
		return Rule{}, false
	}
	return m.rule()
}
