package engine

import (
	"encoding/binary"
	"slices"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// fpUnwindFrames bounds the CFI unwinding of --unwind fp's small stack
// copies: the leaf, its caller, and one frame to meet the kernel's chain.
const fpUnwindFrames = 3

// truncStackCopy is why a DWARF-unwound stack stopped short of a root when
// the frame it needed lay beyond the copied stack.
const truncStackCopy = "deeper than the stack copy (raise --stack-size)"

// truncSmallCopy is why a stack taken with the learning plan's small copy
// stopped: at a frame that keeps no frame pointer, before its thread's
// samples took the large copy.
const truncSmallCopy = "a frame without a frame pointer, before its thread took large stack copies"

// unwindUser appends to b.frames (which holds nk kernel frames) the user
// stack unwound from the sample's stack copy, continued by the kernel's
// frame-pointer chain fp where the two meet. It takes fp alone only when
// that reaches a root and the unwound stack does not: CFI is exact where
// it exists, while a frame-pointer walk skips the caller of every
// frameless function. fp is symbolized only when it is the answer or the
// unwound stack falls short, not for every sample of code without frame
// pointers, where it is garbage.
func (b *builder) unwindUser(r *sampler.Record, fp []uint64, nk int) []symbol.Frame {
	pid := int(r.PID)
	var regs symbol.Regs
	valid := r.DWARFRegs(regs[:])
	if len(b.entries) > 0 {
		// One byte past a probed entry (the trap reports that IP): the
		// registers are still the entry's, unless the probed instruction
		// was a one-byte push %rbp that the kernel has emulated, which
		// leaves RBP as the word at SP: then the pc is right as it is,
		// and so is the CFI for it.
		b.alt = b.res.Lookup(pid, regs[symbol.RegPC], b.alt[:0])
		if f := b.alt[0]; !b.entries[entryKey{f.Module, f.Addr}] && b.entries[entryKey{f.Module, f.Addr - 1}] && !pushedFP(r.Stack, &regs, valid) {
			regs[symbol.RegPC]--
		}
	}
	large := b.dwarf
	// The plan learns from the samples its events took; the wait probes'
	// stacks, read from /proc, have the configured (large) copy.
	learning := b.copies != nil && r.StackSize > 0 && !r.Probed
	if learning {
		large = b.copies.isLarge(r)
	}
	limit := 0
	if !large {
		// A small copy (--unwind fp's, or the learning plan's): the copy is
		// for the leaf's caller; past it the kernel's chain is right
		// wherever the two meet.
		limit = fpUnwindFrames
	}
	pcs, stop := b.res.UnwindUser(pid, &regs, valid, r.Stack, limit, b.pcs[:0])
	b.pcs = pcs
	if learning {
		// What the copy held of the stack: a full copy that the
		// unwinding ran off the end of was too small for it.
		b.copySample = copySample{size: int(r.StackSize), used: b.res.StackUsed(),
			overran: large && stop == symbol.StopCopy && len(r.Stack) >= int(r.StackSize)}
	}
	if len(pcs) == 0 {
		if learning {
			b.copies.observe(r.TID, b.copySample)
		}
		return b.userFrames(r, fp, b.frames)
	}
	// Where the unwinder found the frame pointer unusable (code with no
	// CFI that keeps none, or one that failed validation), the kernel's
	// chain, which follows the same frame pointer unchecked, has only
	// wrong frames past that point: skipped callers at best. --unwind fp
	// asked for that chain, and keeps it.
	// The learning plan's small copies trust it as large ones do: it
	// checks the chain, and must not take it past such a frame.
	trustFP := (!large && !learning) || (stop != symbol.StopNoInfo && stop != symbol.StopFPCheck)
	var from int
	b.merged, from = mergeStacks(pcs, stop, fp, trustFP, b.merged[:0])
	b.stop, b.haveStop = stop, len(b.merged) == len(pcs)
	if learning && b.learn(r, pid, large, stop, from) {
		// Cut where the chain went wrong: what the kernel's chain has
		// past that frame is not its callers.
		b.stop, b.haveStop = symbol.StopCopy, true
	}
	if slices.Equal(b.merged, fp) {
		// The frame-pointer chain was right (the common case in code
		// built with frame pointers).
		return b.userFrames(r, fp, b.frames)
	}
	unwound := b.frames
	for i, pc := range b.merged {
		if i > 0 {
			pc--
		}
		unwound = b.res.Lookup(pid, pc, unwound)
	}
	rooted := stop == symbol.StopRoot
	if !rooted && trustFP && !b.smallCut && classify(unwound, len(b.merged)) != "" {
		alt := b.userFrames(r, fp, append(b.alt[:0], unwound[:nk]...))
		if classify(alt, len(fp)) == "" {
			b.alt = unwound
			b.haveStop = false
			return alt
		}
		b.alt = alt
	}
	b.userDepth = len(b.merged)
	b.copyStop = large && stop == symbol.StopCopy && len(b.merged) == len(pcs)
	b.rooted = rooted
	return unwound
}

// mergeStacks is the user stack of a sample: the pcs unwound from its stack
// copy (innermost first), and, when they ended before the outermost frame,
// the rest of the kernel's frame-pointer chain fp after the deepest return
// address the two share. fp's own first entries are not trusted: they skip
// the callers of frameless functions, which the unwound pcs have. Without
// trustFP, fp is not used at all: the unwinder stopped because the frame
// pointer there is unusable, and fp past that point is wrong.
//
// from is the index in the result of the last frame the unwinder gave
// whose callers come from fp (their soundness depends on that frame's and
// the following ones' frame pointers), -1 when fp was not used.
func mergeStacks(pcs []uint64, stop symbol.UnwindStop, fp []uint64, trustFP bool, dst []uint64) (merged []uint64, from int) {
	dst = append(dst, pcs...)
	if stop == symbol.StopRoot || len(fp) < 2 || !trustFP {
		return dst, -1
	}
	for i := len(pcs) - 1; i >= 1; i-- {
		for j := 1; j < len(fp); j++ {
			if fp[j] == pcs[i] {
				return append(dst[:i+1], fp[j+1:]...), i
			}
		}
	}
	if len(pcs) == 1 {
		// Nothing unwound past the sampled pc (no CFI there, as in JIT
		// code): the frame-pointer chain is all there is.
		return append(dst[:0], fp...), 0
	}
	return dst, -1
}

// learn checks the sample's stack for the learning plan (copyplan.go):
// whether it needed the large copy, that is whether some frame whose
// caller comes (or, on a large copy, would have come) from the kernel's
// frame-pointer chain keeps no frame pointer by its CFI. On a small copy
// such a stack is cut after that frame, b.merged shortened, and learn
// reports true.
func (b *builder) learn(r *sampler.Record, pid int, large bool, stop symbol.UnwindStop, from int) bool {
	b.smallCut = false
	stack := b.merged
	if large {
		// As the small copy would have: its first frames unwound from
		// the copy, the rest from the chain, which meets them where it
		// is right, after the leaf's caller at the latest: a frame after
		// the leaf without a frame pointer, or a leaf that uses RBP as a
		// plain register, would have made it wrong.
		from = min(1, len(stack)-1)
		if st, mod := b.res.FrameStep(pid, stack[0], true); st == symbol.FPClobbered {
			b.copySample.needed, b.copySample.module = true, mod
			b.copies.observe(r.TID, b.copySample)
			return false
		}
	}
	needed, module := false, ""
	if from < 0 {
		// The chain was not used: the copy's unwinding ran out before
		// the stack did (a small copy's frame limit, or its end).
		if !large && (stop == symbol.StopDepth || stop == symbol.StopCopy) {
			_, module = b.res.FrameStep(pid, stack[len(stack)-1], len(stack) == 1)
			needed = true
		}
	} else {
		// The outermost frame too: a chain that ends in a frame
		// without a frame pointer ended because of it.
		for k := from; k < len(stack); k++ {
			st, mod := b.res.FrameStep(pid, stack[k], k == 0)
			lost := st == symbol.FPLost || st == symbol.FPClobbered
			if !lost {
				continue
			}
			if b.rootFrame(pid, stack[k], k == 0) {
				// A thread's first frames (start_thread, the C
				// library's start of main) keep none, and the chain
				// stops there; CFI goes on to _start or clone3. A
				// large copy's stack teaches those bottom frames,
				// which a small copy's then gets (the same context,
				// not one a frame short); one whose bottom is not
				// known yet needed the large copy.
				if large {
					if k+1 < len(stack) {
						b.copies.keepBottom(uint32(pid), stack[k], stack[k+1:])
					}
				} else if k == len(stack)-1 {
					if rest, known := b.copies.bottom(uint32(pid), stack[k]); known {
						b.merged = append(b.merged, rest...)
					} else {
						needed, module = true, mod
					}
				}
				break
			}
			needed, module = true, mod
			if !large {
				b.merged = b.merged[:k+1]
				b.smallCut = true
			}
			break
		}
	}
	b.copySample.needed, b.copySample.module = needed, module
	b.copies.observe(r.TID, b.copySample)
	if b.smallCut {
		b.copies.cut++
	}
	return b.smallCut
}

// rootFrame says whether the function at pc (a return address unless
// exact) is where a thread's stack begins (rootFuncs).
func (b *builder) rootFrame(pid int, pc uint64, exact bool) bool {
	if !exact {
		pc--
	}
	b.learnFrames = b.res.Lookup(pid, pc, b.learnFrames[:0])
	n := len(b.learnFrames)
	return n > 0 && rootFuncs[b.learnFrames[n-1].Func]
}

// pushedFP reports whether the word at the top of a sample's stack copy is
// its RBP: a push %rbp has just run.
func pushedFP(stack []byte, regs *symbol.Regs, valid uint64) bool {
	return len(stack) >= 8 && valid&(1<<symbol.RegFP) != 0 && binary.LittleEndian.Uint64(stack) == regs[symbol.RegFP]
}
