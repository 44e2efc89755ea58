package main

import (
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

// unwindUser replaces the user frames of b.frames (from nk on, where the
// frame-pointer chain fp was symbolized) with the stack unwound in user
// space from the sample's stack copy, continued by fp where the two meet.
// It keeps the frame-pointer stack only when that one reaches a root and
// the unwound one does not: CFI is exact where it exists, while a
// frame-pointer walk skips the caller of every frameless function.
func (b *builder) unwindUser(r *sampler.Record, fp []uint64, nk int) []symbol.Frame {
	var regs symbol.Regs
	valid := r.DWARFRegs(regs[:])
	if nk < len(b.frames) && len(b.entries) > 0 {
		// One byte past a probed entry (the trap reports that IP): the
		// registers are still the entry's.
		if f := b.frames[nk]; !b.entries[entryKey{f.Module, f.Addr}] && b.entries[entryKey{f.Module, f.Addr - 1}] {
			regs[symbol.RegPC]--
		}
	}
	limit := 0
	if !b.dwarf {
		// --unwind fp: the copy is for the leaf's caller; past it the
		// kernel's chain is right wherever the two meet.
		limit = fpUnwindFrames
	}
	pcs, stop := b.res.UnwindUser(int(r.PID), &regs, valid, r.Stack, limit, b.pcs[:0])
	b.pcs = pcs
	if len(pcs) == 0 {
		return b.frames
	}
	b.merged = mergeStacks(pcs, stop, fp, b.merged[:0])
	if slices.Equal(b.merged, fp) {
		// The frame-pointer chain was right (the common case in code
		// built with frame pointers): its frames are already symbolized.
		return b.frames
	}
	alt := append(b.alt[:0], b.frames[:nk]...)
	for i, pc := range b.merged {
		if i > 0 {
			pc--
		}
		alt = b.res.Lookup(int(r.PID), pc, alt)
	}
	rooted := stop == symbol.StopRoot
	if !rooted && classify(alt, len(b.merged)) != "" && classify(b.frames, len(fp)) == "" {
		b.alt = alt
		return b.frames
	}
	b.alt, b.frames = b.frames, alt
	b.userDepth = len(b.merged)
	b.copyStop = b.dwarf && stop == symbol.StopCopy && len(b.merged) == len(pcs)
	b.rooted = rooted
	return b.frames
}

// mergeStacks is the user stack of a sample: the pcs unwound from its stack
// copy (innermost first), and, when they ended before the outermost frame,
// the rest of the kernel's frame-pointer chain fp after the deepest return
// address the two share. fp's own first entries are not trusted: they skip
// the callers of frameless functions, which the unwound pcs have.
func mergeStacks(pcs []uint64, stop symbol.UnwindStop, fp, dst []uint64) []uint64 {
	dst = append(dst, pcs...)
	if stop == symbol.StopRoot || len(fp) < 2 {
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
