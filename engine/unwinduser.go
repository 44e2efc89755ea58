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
	limit := 0
	if !b.dwarf {
		// --unwind fp: the copy is for the leaf's caller; past it the
		// kernel's chain is right wherever the two meet.
		limit = fpUnwindFrames
	}
	pcs, stop := b.res.UnwindUser(pid, &regs, valid, r.Stack, limit, b.pcs[:0])
	b.pcs = pcs
	if len(pcs) == 0 {
		return b.userFrames(r, fp, b.frames)
	}
	// Where the unwinder found the frame pointer unusable (code with no
	// CFI that keeps none, or one that failed validation), the kernel's
	// chain, which follows the same frame pointer unchecked, has only
	// wrong frames past that point: skipped callers at best. --unwind fp
	// asked for that chain, and keeps it.
	trustFP := !b.dwarf || (stop != symbol.StopNoInfo && stop != symbol.StopFPCheck)
	b.merged = mergeStacks(pcs, stop, fp, trustFP, b.merged[:0])
	b.stop, b.haveStop = stop, len(b.merged) == len(pcs)
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
	if !rooted && trustFP && classify(unwound, len(b.merged)) != "" {
		alt := b.userFrames(r, fp, append(b.alt[:0], unwound[:nk]...))
		if classify(alt, len(fp)) == "" {
			b.alt = unwound
			b.haveStop = false
			return alt
		}
		b.alt = alt
	}
	b.userDepth = len(b.merged)
	b.copyStop = b.dwarf && stop == symbol.StopCopy && len(b.merged) == len(pcs)
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
func mergeStacks(pcs []uint64, stop symbol.UnwindStop, fp []uint64, trustFP bool, dst []uint64) []uint64 {
	dst = append(dst, pcs...)
	if stop == symbol.StopRoot || len(fp) < 2 || !trustFP {
		return dst
	}
	for i := len(pcs) - 1; i >= 1; i-- {
		for j := 1; j < len(fp); j++ {
			if fp[j] == pcs[i] {
				return append(dst[:i+1], fp[j+1:]...)
			}
		}
	}
	if len(pcs) == 1 {
		// Nothing unwound past the sampled pc (no CFI there, as in JIT
		// code): the frame-pointer chain is all there is.
		return append(dst[:0], fp...)
	}
	return dst
}

// pushedFP reports whether the word at the top of a sample's stack copy is
// its RBP: a push %rbp has just run.
func pushedFP(stack []byte, regs *symbol.Regs, valid uint64) bool {
	return len(stack) >= 8 && valid&(1<<symbol.RegFP) != 0 && binary.LittleEndian.Uint64(stack) == regs[symbol.RegFP]
}
