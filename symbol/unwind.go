package symbol

import (
	"debug/elf"
	"encoding/binary"
	"io"
	"strconv"
	"unsafe"

	"github.com/cctop/cctop/symbol/cfi"
)

// Regs are a thread's user registers in DWARF numbering (x86-64: 0 rax,
// 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15), with the
// pc in RegPC, the return-address column.
type Regs = [cfi.NumRegs]uint64

// Registers UnwindUser needs by name.
const (
	RegFP = cfi.RegRBP
	RegSP = cfi.RegRSP
	RegPC = cfi.RegRA
)

// UnwindStop says why UnwindUser stopped.
type UnwindStop uint8

const (
	// StopRoot: the outermost frame, which CFI marks by an undefined
	// return address (_start, clone3's child) or Go's tables by the
	// function that starts a goroutine.
	StopRoot UnwindStop = iota
	// StopCopy: the next frame lies beyond the copied stack.
	StopCopy
	// StopNoInfo: a pc with no unwind information (no CFI, no Go table)
	// in a function that keeps no frame pointer, or with no frame
	// pointer to follow.
	StopNoInfo
	// StopBad: the unwind went wrong (a stack pointer that does not
	// grow, a zero or unreadable register).
	StopBad
	// StopDepth: maxUnwindFrames frames.
	StopDepth
	// StopFPCheck: a pc with no unwind information whose frame pointer
	// failed validation (fpStep): it points below the stack pointer or
	// off alignment, or the return address it leads to follows no call.
	StopFPCheck
	// StopUnmapped: a pc in no mapping of the process (garbage, or code
	// of a mapping cctop has not heard of) or in the uprobes' single-step
	// page.
	StopUnmapped
	numStops
)

// String says why an unwind stopped, as completeness reports put it.
func (s UnwindStop) String() string {
	switch s {
	case StopRoot:
		return "outermost frame"
	case StopCopy:
		return "beyond the stack copy"
	case StopNoInfo:
		return "no CFI"
	case StopBad:
		return "bad unwind step"
	case StopDepth:
		return "frame limit"
	case StopFPCheck:
		return "no CFI, frame pointer rejected"
	case StopUnmapped:
		return "pc in no mapping"
	}
	return "stop " + strconv.Itoa(int(s))
}

// uprobesPath is the mapping in which uprobes execute the instructions
// they displaced (the XOL area).
const uprobesPath = "[uprobes]"

// maxUnwindFrames bounds a user stack, twice the kernel's default
// perf_event_max_stack: a copied stack of recursion can be deep.
const maxUnwindFrames = 256

// unwindInfo is what a module offers for unwinding.
type unwindInfo struct {
	cfi *cfi.Table // nil without .eh_frame/.debug_frame
	// debug is the .debug_frame of the separate debug file, asked where
	// cfi does not cover a pc (nil without one).
	debug *cfi.Table
	go_   *goTable // nil for non-Go modules
	// rules memoizes the CFI rule per module-relative pc, misses included.
	rules      map[uint64]cachedRule
	rulesBytes int64 // what rules holds, counted in acct
	acct       *acct // the module's
}

type cachedRule struct {
	rule cfi.Rule
	ok   bool
}

// loadUnwind reads the call frame information of an ELF image. It is
// separate from loadELF's names: a binary without symbols can still have
// CFI, and this is all that unwinding needs.
//
// With lines false (names only: an agent), a Go module's .debug_frame is
// left unread: goStep unwinds its Go code from the pclntab.
func loadUnwind(r io.ReaderAt, mod *module, lines bool) {
	u := &unwindInfo{rules: make(map[uint64]cachedRule), acct: &mod.acct}
	for _, s := range mod.sources {
		if g, ok := s.(*goTable); ok {
			u.go_ = g
		}
	}
	mod.acct.add(int64(unsafe.Sizeof(*u)))
	if f, err := elf.NewFile(r); err == nil {
		load := cfi.Load
		if u.go_ != nil && !lines {
			load = cfi.LoadEH
		}
		if t, err := load(f); err == nil && t.Len() > 0 {
			u.cfi = t
			mod.acct.add(t.Bytes())
		}
	}
	// The debug file's table was counted when loadELF read it.
	u.debug, mod.debugCFI = mod.debugCFI, nil
	if u.cfi == nil {
		u.cfi, u.debug = u.debug, nil
	}
	mod.unwind = u
}

func (u *unwindInfo) rule(addr uint64) (cfi.Rule, bool) {
	if u.cfi == nil {
		return cfi.Rule{}, false
	}
	c, hit := u.rules[addr]
	if !hit {
		c.rule, c.ok = u.cfi.Rule(addr)
		if !c.ok && u.debug != nil {
			c.rule, c.ok = u.debug.Rule(addr)
		}
		if len(u.rules) >= u.acct.maxAddrs() {
			// A new map, not clear: see module.frames.
			u.acct.add(-u.rulesBytes)
			u.rules, u.rulesBytes = make(map[uint64]cachedRule), 0
		}
		u.rules[addr] = c
		u.rulesBytes += ruleEntry
		u.acct.add(ruleEntry)
	}
	return c.rule, c.ok
}

// stackMem reads words of a copied user stack that began at sp.
type stackMem struct {
	sp     uint64
	stack  []byte
	beyond bool   // a read went past the end of the copy
	hi     uint64 // the end of the highest read, from sp
}

func (m *stackMem) read(addr uint64) (uint64, bool) {
	if addr < m.sp {
		return 0, false
	}
	off := addr - m.sp
	if off > uint64(len(m.stack)) || uint64(len(m.stack))-off < 8 {
		m.beyond = true
		return 0, false
	}
	m.hi = max(m.hi, off+8)
	return binary.LittleEndian.Uint64(m.stack[off:]), true
}

// UnwindUser unwinds pid's user stack from the registers and the copy of
// the stack (from regs[RegSP] up) taken with a sample. It appends the pcs
// to dst, innermost first: the sampled pc, then return addresses, the way
// the kernel's callchain lists them.
//
// Each frame is unwound with what its module offers for that pc, so one
// stack can hand over between modules of different kinds and back: CFI
// (.eh_frame, .debug_frame, also from a separate debug file) where it
// covers the pc, the pclntab's SP deltas for Go code, else the frame
// pointer, validated first (fpstep.go): code with neither (hand-written
// assembly, JIT code) keeps one only by convention.
//
// At most limit pcs are appended (maxUnwindFrames when limit is 0 or
// larger), ending with StopDepth.
func (r *Resolver) UnwindUser(pid int, regs *Regs, valid uint64, stack []byte, limit int, dst []uint64) ([]uint64, UnwindStop) {
	r.mods.clock++
	mem := stackMem{sp: regs[RegSP], stack: stack}
	dst, stop := r.unwindUser(pid, regs, valid, &mem, limit, dst)
	r.stackUsed = int(mem.hi)
	if r.mods.overBudget() {
		r.trim()
	}
	return dst, stop
}

func (r *Resolver) unwindUser(pid int, regs *Regs, valid uint64, mem *stackMem, limit int, dst []uint64) ([]uint64, UnwindStop) {
	if limit <= 0 || limit > maxUnwindFrames {
		limit = maxUnwindFrames
	}
	const need = 1<<RegPC | 1<<RegSP
	if valid&need != need {
		return dst, StopBad
	}
	p := r.procs[pid]
	cur := cfi.Regs{R: *regs, Valid: uint32(valid)}
	signal := true // the sampled pc is not a return address
	for depth := 0; ; depth++ {
		pc := cur.R[RegPC]
		dst = append(dst, pc)
		if depth == limit-1 {
			return dst, StopDepth
		}
		lookup := pc
		if !signal {
			// A return address follows its call, which may be the
			// function's last instruction: the call's own rule is at pc-1.
			lookup--
		}
		sp := cur.R[RegSP]
		stop, ok := r.step(pid, p, lookup, &cur, mem, &signal)
		if !ok {
			if mem.beyond {
				return dst, StopCopy
			}
			return dst, stop
		}
		if cur.R[RegSP] <= sp && !signal {
			// The caller's frame is above the callee's: anything else is
			// a loop or garbage.
			return dst, StopBad
		}
	}
}

// StackUsed is how many bytes of its stack copy the last UnwindUser read:
// from the sampled SP to the end of the highest word, the copy a stack as
// deep needs.
func (r *Resolver) StackUsed() int { return r.stackUsed }

// step unwinds one frame whose code is at lookup. *signal says on entry
// whether lookup is an exact pc (the sampled one, or one a signal frame
// saved) rather than a return address minus one, and on return whether
// the caller's pc is exact.
func (r *Resolver) step(pid int, p *proc, lookup uint64, cur *cfi.Regs, mem *stackMem, signal *bool) (UnwindStop, bool) {
	var e *stepEntry
	gen := r.gen
	if p != nil {
		e = r.steps.slot(pid, lookup)
		if e.pc == lookup && e.pid == uint32(pid) && e.mod != nil && e.gen == gen {
			r.mods.clock++
			e.mod.used = r.mods.clock // the budget's LRU order sees the use
			*signal = false
			return applyRule(&e.rule, cur, mem, signal)
		}
	}
	var m *mapping
	if p != nil {
		m = p.find(lookup)
	}
	var u *unwindInfo
	var addr uint64
	var umod *module
	if m != nil {
		if mod := r.attach(pid, m); mod != nil && mod.unwind != nil {
			if a, ok := offsetToVaddr(mod.segs, lookup-m.Start+m.Offset); ok {
				u, addr, umod = mod.unwind, a, mod
			}
		}
	}
	exact := *signal
	*signal = false
	if u != nil {
		if rule, ok := u.rule(addr); ok {
			if e != nil && r.gen == gen {
				*e = stepEntry{pc: lookup, gen: gen, pid: uint32(pid), mod: umod, rule: rule}
			}
			return applyRule(&rule, cur, mem, signal)
		}
		if g := u.go_; g != nil {
			if g.topFrame(addr) {
				return StopRoot, false
			}
			if delta, ok := g.spDelta(addr); ok {
				return goStep(cur, mem, delta)
			}
		}
	}
	if m != nil && m.anon {
		// JIT code: the unwinding information its jitdump gives, if any
		// (not cached: the code at pc depends on the sample's time).
		if rule, ok := r.jitDumpRule(p, lookup); ok {
			return applyRule(&rule, cur, mem, signal)
		}
	}
	if m == nil || m.Path == uprobesPath {
		// In no mapping at all: the pc is garbage, not JIT code. Or in
		// the page where uprobes single-step the instruction they
		// displaced (a sample there may see that page before cctop
		// hears of it).
		if exact {
			return r.xolStep(pid, p, cur, mem)
		}
		return StopUnmapped, false
	}
	return r.noCFIStep(pid, p, m, lookup, exact, cur, mem)
}

// applyRule steps cur to its caller's registers with a frame's CFI rule.
func applyRule(rule *cfi.Rule, cur *cfi.Regs, mem *stackMem, signal *bool) (UnwindStop, bool) {
	if rule.Reg(cfi.RegRA).Kind() == cfi.Undefined {
		return StopRoot, false
	}
	if !rule.Step(cur, mem.read) {
		return StopBad, false
	}
	*signal = rule.Signal()
	return 0, true
}

// stepSlots is the size of the resolver's cache of CFI rules by pid and
// pc, direct-mapped as the engine's symbol cache is: a stack unwound with
// CFI looks a rule up per frame, and the mapping search, module and rule
// map behind it were most of the unwinding.
const (
	stepBits  = 12
	stepSlots = 1 << stepBits
)

// stepEntry is a cached rule for pc in pid, of module mod (nil: an empty
// slot), good while the resolver's generation is gen (Generation): an
// entry of an older one is stale, as in Lookup's cache.
type stepEntry struct {
	pc   uint64
	gen  uint64
	pid  uint32
	mod  *module
	rule cfi.Rule
}

type stepCache = pcCache[stepEntry]

// pcCache is a direct-mapped cache of stepSlots entries by pid and pc,
// made on first use.
type pcCache[T any] struct {
	slots *[stepSlots]T
}

// slot is the entry for pc in pid.
func (c *pcCache[T]) slot(pid int, pc uint64) *T {
	if c.slots == nil {
		c.slots = new([stepSlots]T)
	}
	return &c.slots[pcSlot(pid, pc, stepBits)]
}

// goStep unwinds a Go frame: the pclntab's SP delta locates the return
// address; the caller's frame pointer, when this frame saved it, sits just
// below.
func goStep(cur *cfi.Regs, mem *stackMem, delta int64) (UnwindStop, bool) {
	if delta < 0 {
		return StopBad, false
	}
	cfa := cur.R[RegSP] + uint64(delta) + 8
	ra, ok := mem.read(cfa - 8)
	if !ok || ra == 0 {
		return StopBad, false
	}
	var out cfi.Regs
	out.Set(RegPC, ra)
	out.Set(RegSP, cfa)
	if bp, ok := cur.Get(RegFP); ok {
		out.Set(RegFP, bp)
	}
	if delta >= 8 {
		if bp, ok := mem.read(cfa - 16); ok {
			out.Set(RegFP, bp)
		}
	}
	*cur = out
	return 0, true
}
