package symbol

import "github.com/cctop/cctop/symbol/cfi"

// Whether the kernel's frame-pointer chain is right at a frame: it takes
// each caller from the frame record that RBP points at, which is right
// exactly where the frame's function keeps RBP as its frame pointer, as
// its CFI says (CFA = RBP+16, RBP saved at CFA-16, the return address at
// CFA-8). A function whose CFI finds its caller from RSP instead (built
// without frame pointers, or a leaf) leaves RBP as its caller's, or uses
// it as a plain register: past it the chain skips frames or is garbage,
// and only the stack copy, unwound with CFI, finds the callers. This is
// what the engine's unwinding plan asks of each frame to decide which
// threads need a large copy.

// FPStep says how a frame's caller is found at one pc.
type FPStep uint8

const (
	// FPNoInfo: no CFI or Go table covers the pc (JIT code, hand-written
	// assembly, no mapping): the unwinder would follow the frame pointer
	// too, validated, and a larger copy finds nothing more.
	FPNoInfo FPStep = iota
	// FPKept: the function keeps its frame pointer there; the chain's
	// next entry is its caller.
	FPKept
	// FPLost: CFI finds the caller without the frame pointer: the chain's
	// next entries are wrong.
	FPLost
	// FPClobbered: as FPLost, and the function saves RBP to use it as a
	// plain register: at the sampled pc the chain is garbage from its
	// first entry on, where a leaf that leaves RBP alone only skips its
	// caller.
	FPClobbered
)

// FrameStep says how pid's frame at pc finds its caller. exact is false
// for a return address (the call's rule, at pc-1, applies), true for a
// sampled pc. module is the frame's module's base name where it has one.
func (r *Resolver) FrameStep(pid int, pc uint64, exact bool) (step FPStep, module string) {
	lookup := pc
	if !exact {
		lookup--
	}
	c := r.fpSteps.slot(pid, lookup)
	if c.pc == lookup && c.pid == uint32(pid) && c.mod != nil && c.gen == r.gen {
		return c.step, c.mod.base
	}
	gen := r.gen
	step, mod := r.frameStep(pid, lookup)
	if mod != nil && r.gen == gen {
		*r.fpSteps.slot(pid, lookup) = fpStepEntry{pc: lookup, gen: gen, pid: uint32(pid), mod: mod, step: step}
	}
	if mod == nil {
		return step, ""
	}
	return step, mod.base
}

// frameStep is FrameStep's answer for lookup, found anew, and the module
// it is in (nil for none).
func (r *Resolver) frameStep(pid int, lookup uint64) (FPStep, *module) {
	p := r.procs[pid]
	if p == nil {
		return FPNoInfo, nil
	}
	m := p.find(lookup)
	if m == nil {
		return FPNoInfo, nil
	}
	mod := r.attach(pid, m)
	if mod == nil || mod.unwind == nil {
		return FPNoInfo, nil
	}
	addr, ok := offsetToVaddr(mod.segs, lookup-m.Start+m.Offset)
	if !ok {
		return FPNoInfo, mod
	}
	u := mod.unwind
	if u.go_ != nil {
		if _, ok := u.go_.spDelta(addr); ok {
			// Go keeps a frame pointer in every function with a frame
			// (amd64 and arm64 since Go 1.7 and 1.12); its .debug_frame
			// says CFA = RSP+n all the same.
			return FPKept, mod
		}
	}
	if rule, ok := u.rule(addr); ok {
		return ruleStep(&rule), mod
	}
	return FPNoInfo, mod
}

// fpStepEntry is FrameStep's answer for pc in pid, in module mod (nil: an
// empty slot), good while the resolver's generation is gen. Its own cache,
// not the CFI rules' (stepCache): a Go frame's answer is not its rule's.
type fpStepEntry struct {
	pc   uint64
	gen  uint64
	pid  uint32
	step FPStep
	mod  *module
}

type fpStepCache = pcCache[fpStepEntry]

// ruleStep is what a CFI rule says of the frame pointer.
func ruleStep(rule *cfi.Rule) FPStep {
	cfa, bp, ra := rule.CFA(), rule.Reg(cfi.RegRBP), rule.Reg(cfi.RegRA)
	if cfa.Kind() == cfi.InRegister && cfa.Reg() == cfi.RegRBP && cfa.Offset() == 16 &&
		bp.Kind() == cfi.AtCFA && bp.Offset() == -16 && ra.Kind() == cfi.AtCFA && ra.Offset() == -8 && !rule.Signal() {
		return FPKept
	}
	if bp.Kind() == cfi.AtCFA && !(cfa.Kind() == cfi.InRegister && cfa.Reg() == cfi.RegRSP && cfa.Offset() <= 16) {
		// Saved to be used: RBP may hold anything now. Not at CFA =
		// RSP+16 or +8: right after a prologue's push %rbp, or after
		// the epilogue's pop (GCC leaves the rule of the save in
		// force), it holds the caller's frame pointer.
		return FPClobbered
	}
	return FPLost
}
