package symbol

import "github.com/cctop/cctop/symbol/cfi"

// Unwinding code that has neither CFI nor Go tables: hand-written assembly
// kernels (MKL, OpenBLAS), JIT code, libraries built without unwind
// tables. Such code keeps a frame pointer only by convention, and a frame
// pointer taken on trust where there is none gives frames that never ran
// (a stale RBP of some outer frame skips the frames between, a data value
// in RBP gives garbage). So every step here is checked, and a step that
// fails stops the unwind with a reason (StopNoInfo, StopFPCheck) rather
// than produce frames. The rules, and where the well-known unwinders
// differ (as we read their x86-64 code):
//
//   - The saved RBP must lie at or above the stack pointer, 8-aligned,
//     within the stack copy. framehop requires the new SP (RBP+16) above
//     the old one; libunwind's Gstep.c, guessing a frame pointer where it
//     has no CFI, requires RBP above the CFA but at most 0x4000 bytes
//     above it; perf's libdw unwinding (elfutils' x86_64 fallback) only
//     checks RBP against SP. We take the common part and leave out
//     libunwind's 16 KiB cap: kernels with large on-stack buffers have
//     bigger frames, and the copy bounds the walk anyway.
//   - The chain grows upwards: each frame-pointer step starts at or above
//     the SP the previous one produced (RBP+16), so consecutive steps
//     cannot loop. As libunwind notes, the saved RBP (the caller's) is not
//     checked against this RBP: the caller may use RBP as a plain
//     register, and its CFI then unwinds it without looking at it.
//   - The return address must follow a call instruction (callBefore), read
//     from the module's file. None of the three checks this (as we read
//     them), and so they accept garbage stacks through code that keeps no
//     frame pointer. A direct call must moreover target the function that
//     holds the frame's pc, where the target is a known function's start
//     (afterCall): a frame pointer that skipped frames returns to a call
//     of some outer function. A return address in no mapping is garbage; one in memory
//     with no file (JIT code) is not checked. The return address of a
//     signal handler is the signal trampoline, which follows no call: its
//     CFI marks it as a signal frame, and it is accepted as such.
//   - Where the symbol table knows the function (most libraries keep
//     .dynsym/.symtab even without unwind tables), its first instructions
//     say whether it sets up a frame pointer at all (push %rbp; mov
//     %rsp,%rbp, after an endbr64). One that does not is not unwound by
//     its frame pointer: RBP is its caller's, and following it would skip
//     frames (framehop instead guesses from instruction analysis of the
//     current function; libunwind and libdw do not look). The exact pcs of
//     a function's first instruction or of a ret need no frame pointer: the
//     return address is at SP. In a frame-pointer function, a pc between
//     push %rbp and mov %rsp,%rbp has the return address above the pushed
//     RBP. A sampled pc in a function without a frame pointer whose SP is
//     aligned as at a call may be a leaf that has touched nothing: its
//     return address at SP is taken if it follows a call (a leaf of
//     -fno-omit-frame-pointer code without CFI: gcc omits the frame
//     pointer of leaves).

// noCFIStep unwinds a frame at lookup (in mapping m) that has no CFI and
// no Go table. exact says lookup is the pc itself rather than a return
// address minus one: only then can it sit in a prologue or on a ret.
func (r *Resolver) noCFIStep(pid int, p *proc, m *mapping, lookup uint64, exact bool, cur *cfi.Regs, mem *stackMem) (UnwindStop, bool) {
	var addr, start uint64
	known := false
	if m.mod != nil {
		if a, ok := offsetToVaddr(m.mod.segs, lookup-m.Start+m.Offset); ok {
			addr = a
			start, known = m.mod.funcStart(a)
		}
	}
	if known && exact {
		var op [1]byte
		if r.readCode(pid, m, lookup, op[:]) && op[0] == 0xc3 {
			return r.returnStep(pid, p, lookup, cur, mem, 0)
		}
	}
	if known {
		var pro [8]byte
		if r.readCode(pid, m, lookup-(addr-start), pro[:]) {
			push, fp := fpPrologue(pro[:])
			off := addr - start
			switch {
			case exact && off <= uint64(push):
				// At the entry (or the push, after an endbr64): the
				// return address is at SP, RBP is still the caller's.
				return r.returnStep(pid, p, lookup, cur, mem, 0)
			case fp && exact && off == uint64(push)+1:
				// RBP pushed, not yet set.
				return r.returnStep(pid, p, lookup, cur, mem, 8)
			case !fp && r.pastSetup(pid, m, lookup, start, addr):
				// A function that sets its frame pointer up after some
				// checks (a runtime's builtin, a shrink-wrapped
				// function), at a pc past that setup: the frame pointer
				// is its own, so a return address after a call of some
				// other function is a tail call's (V8's builtins jump
				// from one to the next), not a frame skipped.
				return r.fpStep(pid, p, 0, cur, mem)
			case !fp && exact && cur.R[RegSP]%16 == 8:
				// A function without a frame pointer, interrupted with
				// the stack as a call leaves it (the ABI keeps SP 16-byte
				// aligned at calls, so a function that pushed or
				// reserved anything has SP%16 == 0 unless it pushed an
				// odd number of words). Leaves of -fno-omit-frame-pointer
				// code without CFI are this case. The return address is
				// at SP if the function has touched nothing: taken when
				// it follows a call. A frame that is not a leaf (its pc a
				// return address) has always moved SP and is not tried.
				if stop, ok := r.returnStep(pid, p, lookup, cur, mem, 0); ok {
					return stop, ok
				}
				return StopNoInfo, false
			case !fp:
				return StopNoInfo, false
			}
		}
	}
	if m.anon {
		if stop, ok, done := r.stubStep(pid, p, m, lookup, exact, cur, mem); done {
			return stop, ok
		}
	}
	return r.fpStep(pid, p, lookup, cur, mem)
}

// pastSetup reports whether lookup, at module address addr in the
// function that starts at start, lies past the function's first frame
// setup (findSetup), which is not at its start. The answer per function
// is cached with the module's code.
func (r *Resolver) pastSetup(pid int, m *mapping, lookup, start, addr uint64) bool {
	mod := m.mod
	if mod == nil || addr < start {
		return false
	}
	cc := mod.codeCache()
	setup, ok := cc.setups[start]
	if !ok {
		setup = noSetup
		end := start + maxSetupScan
		if _, e, ok := mod.funcRange(addr); ok && e > start {
			end = min(end, e)
		}
		code := make([]byte, 0, 4096)
		fstart := lookup - (addr - start)
		for at := uint64(0); at < end-start && setup == noSetup; {
			n := min(uint64(4096), end-start-at)
			// Overlap the pieces by 3 bytes so that no setup is cut.
			code = code[:n]
			if !r.readCode(pid, m, fstart+at, code) {
				break
			}
			if i := findSetup(code); i != noSetup {
				setup = int32(at) + int32(i)
			}
			if n <= 3 {
				break
			}
			at += n - 3
		}
		if len(cc.setups) >= maxSetups {
			mod.acct.add(-int64(len(cc.setups)) * setupEntry)
			cc.setups = nil
		}
		if cc.setups == nil {
			cc.setups = make(map[uint64]int32)
		}
		cc.setups[start] = setup
		mod.acct.add(setupEntry)
	}
	// The mov %rsp,%rbp ends 4 bytes past the setup's start.
	return setup > 0 && addr >= start+uint64(setup)+4
}

// jitHeadBytes is how much of a JIT function's start stubStep reads: a
// stub whole, or the checks V8's optimized code makes before it sets its
// frame up.
const jitHeadBytes = 256

// stubStep unwinds a frame in anonymous memory at lookup whose start a
// perf map or jitdump gives, from the code at that start: a stub's
// prologue (stubFrame), or a frame setup (findSetup) that lookup is past,
// where the frame pointer is the function's own. done is false where it
// cannot tell.
func (r *Resolver) stubStep(pid int, p *proc, m *mapping, lookup uint64, exact bool, cur *cfi.Regs, mem *stackMem) (stop UnwindStop, ok, done bool) {
	start, found := r.jitStart(pid, p, lookup)
	if !found || start < m.Start || lookup < start {
		return 0, false, false
	}
	pc := lookup - start
	if !exact {
		pc++ // the return address
	}
	var code [jitHeadBytes]byte
	n := min(uint64(jitHeadBytes), m.Limit-start)
	if !r.readCode(pid, m, start, code[:n]) {
		return 0, false, false
	}
	if pc <= maxStubBytes {
		if s, known := stubFrame(code[:min(n, maxStubBytes)], int(pc), exact); known && !s.fp {
			return r.stubReturn(pid, p, s, cur, mem)
		}
	}
	// Code that sets its frame pointer up at its start (V8's, the JVM's
	// with -XX:+PreserveFramePointer, a stub's) or after a few checks
	// (V8's optimized code first tests whether it was marked for
	// deoptimization), past the setup: the frame pointer is its own, and
	// a return address after a call of another function is a tail
	// call's (V8's builtins jump to the code they call), as in pastSetup.
	if setup := findSetup(code[:n]); setup != noSetup && pc >= uint64(setup)+4 {
		stop, ok = r.fpStep(pid, p, 0, cur, mem)
		return stop, ok, true
	}
	return 0, false, false
}

// stubReturn unwinds a stub's frame that stubFrame measured: the return
// address is s.frame above SP.
func (r *Resolver) stubReturn(pid int, p *proc, s stub, cur *cfi.Regs, mem *stackMem) (stop UnwindStop, ok, done bool) {
	sp := cur.R[RegSP]
	ra, rok := mem.read(sp + s.frame)
	if !rok || ra == 0 || !r.afterCall(pid, p, ra, 0) {
		return StopFPCheck, false, true
	}
	var out cfi.Regs
	out.Set(RegPC, ra)
	out.Set(RegSP, sp+s.frame+8)
	if s.savedRBP {
		if bp, ok := mem.read(sp + s.rbp); ok {
			out.Set(RegFP, bp)
		}
	} else if bp, ok := cur.Get(RegFP); ok {
		out.Set(RegFP, bp)
	}
	*cur = out
	return 0, true, true
}

// fpPrologue looks at a function's first bytes: the offset of its push
// %rbp (0, or 4 after endbr64), and whether it is followed by mov
// %rsp,%rbp (48 89 e5 or 48 8b ec), i.e. the function keeps a frame
// pointer. Without the push, push is the offset of the first instruction
// after an endbr64.
func fpPrologue(b []byte) (push int, fp bool) {
	if len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa {
		push = 4
	}
	b = b[push:]
	if len(b) < 4 || b[0] != 0x55 || b[1] != 0x48 {
		return push, false
	}
	return push, b[2] == 0x89 && b[3] == 0xe5 || b[2] == 0x8b && b[3] == 0xec
}

// returnStep unwinds the frame at pc whose return address is at SP+below,
// with the caller's RBP at SP (below 8: RBP pushed) or still in RBP
// (below 0).
func (r *Resolver) returnStep(pid int, p *proc, pc uint64, cur *cfi.Regs, mem *stackMem, below uint64) (UnwindStop, bool) {
	sp := cur.R[RegSP]
	ra, ok := mem.read(sp + below)
	if !ok || ra == 0 {
		return StopFPCheck, false
	}
	var out cfi.Regs
	out.Set(RegPC, ra)
	out.Set(RegSP, sp+below+8)
	if below == 8 {
		bp, _ := mem.read(sp)
		out.Set(RegFP, bp)
	} else if bp, ok := cur.Get(RegFP); ok {
		out.Set(RegFP, bp)
	}
	if !r.afterCall(pid, p, ra, pc) {
		return StopFPCheck, false
	}
	*cur = out
	return 0, true
}

// fpStep unwinds the frame at pc by its frame pointer, validated: the caller's return address
// is above the saved frame pointer it points at. pc is 0 where the frame is
// known to own its frame pointer, and a direct call before the return
// address need not target the frame's function (afterCall).
func (r *Resolver) fpStep(pid int, p *proc, pc uint64, cur *cfi.Regs, mem *stackMem) (UnwindStop, bool) {
	bp, ok := cur.Get(RegFP)
	if !ok || bp == 0 {
		return StopNoInfo, false
	}
	if bp < cur.R[RegSP] || bp%8 != 0 {
		return StopFPCheck, false
	}
	next, ok1 := mem.read(bp)
	ra, ok2 := mem.read(bp + 8)
	if !ok1 || !ok2 || ra == 0 {
		return StopFPCheck, false
	}
	if !r.afterCall(pid, p, ra, pc) {
		return StopFPCheck, false
	}
	var out cfi.Regs
	out.Set(RegPC, ra)
	out.Set(RegSP, bp+16)
	out.Set(RegFP, next)
	*cur = out
	return 0, true
}

// xolStep unwinds a sampled pc in the uprobes' single-step page, or in no
// mapping at all. A uprobe at a function's entry runs the instruction it
// replaced there, and a sample taken then (the kernel reports it in the
// debug exception's return to user space) sees the function's entry state
// after that one instruction: the return address at SP (endbr64, a mov)
// or above one pushed register (push %rbp, push %rbx...). Either word is
// taken if it follows a call. A function whose first instruction reserves
// its frame (sub $N,%rsp) is not unwound: the words above SP are stale
// locals, stale return addresses among them.
func (r *Resolver) xolStep(pid int, p *proc, cur *cfi.Regs, mem *stackMem) (UnwindStop, bool) {
	if p == nil {
		return StopUnmapped, false
	}
	sp := cur.R[RegSP]
	for _, below := range []uint64{0, 8} {
		ra, ok := mem.read(sp + below)
		if !ok || ra == 0 || !r.afterCall(pid, p, ra, 0) {
			continue
		}
		if m := p.find(ra - 1); m == nil || m.Path == uprobesPath || !m.loaded || m.mod == nil || len(m.mod.segs) == 0 {
			continue // not code read from a file: no call was checked
		}
		var out cfi.Regs
		out.Set(RegPC, ra)
		out.Set(RegSP, sp+below+8)
		if bp, ok := cur.Get(RegFP); ok {
			out.Set(RegFP, bp) // one instruction cannot have set it
		}
		*cur = out
		return 0, true
	}
	mem.beyond = false
	return StopUnmapped, false
}

// afterCall reports whether ra can be the return address of the frame
// whose code is at pc, in pid: it follows a call instruction, or is a
// signal frame's. A direct call whose target is the start of a known
// function that does not hold pc called some other frame: the frame
// pointer skipped frames (the caller of a function without one), and the
// step is wrong. A target that is no known function's start (a PLT stub,
// stripped code) says nothing, nor does anything when pc is 0 (unknown). With no mappings known for pid there is
// nothing to check against; in memory with no file behind it (JIT code)
// the code is not read.
func (r *Resolver) afterCall(pid int, p *proc, ra, pc uint64) bool {
	if p == nil || len(p.maps) == 0 {
		return true
	}
	m := p.find(ra - 1)
	if m == nil {
		return false
	}
	n := min(uint64(maxCallLen), ra-m.Start)
	var buf [maxCallLen]byte
	if !r.readCode(pid, m, ra-n, buf[:n]) {
		return true
	}
	if rel, ok := directCall(buf[:n]); ok {
		target := ra + uint64(int64(rel))
		if start, end, known := r.funcAt(pid, p, target); pc != 0 && known && start == target && (pc < start || pc >= end) {
			return false
		}
	}
	if callBefore(buf[:n]) {
		return true
	}
	if m.anon && jumpBefore(buf[:n]) {
		// JIT code (read from memory): a return address a runtime
		// pushed before jumping (jumpBefore).
		return true
	}
	// A signal handler returns to the signal trampoline (__restore_rt),
	// whose CFI marks a signal frame starting the byte before it.
	if m.mod != nil && m.mod.unwind != nil {
		if a, ok := offsetToVaddr(m.mod.segs, ra-1-m.Start+m.Offset); ok {
			if rule, ok := m.mod.unwind.rule(a); ok && rule.Signal() {
				return true
			}
		}
	}
	return false
}

// funcAt is the extent, in pid's address space, of the function symbol
// that holds addr.
func (r *Resolver) funcAt(pid int, p *proc, addr uint64) (start, end uint64, ok bool) {
	m := p.find(addr)
	if m == nil {
		return 0, 0, false
	}
	mod := r.attach(pid, m)
	if mod == nil {
		return 0, 0, false
	}
	a, ok := offsetToVaddr(mod.segs, addr-m.Start+m.Offset)
	if !ok {
		return 0, 0, false
	}
	s, e, ok := mod.funcRange(a)
	if !ok {
		return 0, 0, false
	}
	return addr - (a - s), addr + (e - a), true
}

// funcStart is the start of the function symbol that holds addr.
func (mod *module) funcStart(addr uint64) (uint64, bool) {
	start, _, ok := mod.funcRange(addr)
	return start, ok
}

// funcRange is the extent [start, end) of the function symbol that holds
// addr (end may be far past a zero-size symbol's code).
func (mod *module) funcRange(addr uint64) (start, end uint64, ok bool) {
	for _, s := range mod.sources {
		var t symtab
		switch s := s.(type) {
		case *goTable:
			if s.covers(addr) {
				return s.funcRange(addr)
			}
			continue
		case symtab:
			t = s
		case *dwarfSource:
			t = s.syms
		default:
			continue
		}
		if sy, ok := t.holding(addr); ok {
			return sy.start, sy.end, true
		}
	}
	return 0, 0, false
}

// holding is the symbol that holds addr.
func (t symtab) holding(addr uint64) (sym, bool) {
	lo, hi := 0, len(t)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if t[h].start <= addr {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo == 0 || addr >= t[lo-1].end {
		return sym{}, false
	}
	return t[lo-1], true
}
