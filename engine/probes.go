package engine

import (
	"strings"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/symbol"
)

// probesFrame stands for the kernel frames of a sample taken while the
// kernel handled one of cctop's counting uprobes (cct.ProbesName). Its
// Module is the kernel's: the time is kernel time, spent on the target's
// thread, and kernel frames count no calls (the TUI leaves their calls
// column blank, and automatic counting never picks them to probe). It has
// no address: one location in pprof for all of them.
var probesFrame = symbol.Frame{Func: cct.ProbesName, Module: symbol.KernelModule}

// probePath reports whether the kernel part of a sample's stack, kernel
// leaf first, is the kernel handling a uprobe: its outermost frame, the
// kernel's entry from user space, is the int3 or debug trap (a uprobe is an
// int3; the instruction it replaced may be single-stepped after it, which
// traps to the debug handler), or one of its frames is uprobe core code
// (the trap is not always on the chain, e.g. the return probe trampoline
// enters by a syscall). Compiler suffixes (.isra.0, .part.0, .cold) are
// ignored.
func probePath(kernel []symbol.Frame) bool {
	if len(kernel) == 0 {
		return false
	}
	if trapEntry(kernelName(kernel[len(kernel)-1].Func)) {
		return true
	}
	for _, f := range kernel {
		if uprobeCore(kernelName(f.Func)) {
			return true
		}
	}
	return false
}

// kernelName is a kernel symbol without the suffix the compiler gives the
// clones it makes ("handle_swbp.isra.0", "foo.part.0", "foo.cold"): kernel C
// names have no dot of their own.
func kernelName(name string) string {
	if i := strings.IndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

// trapEntry: the kernel's entries for the breakpoint (int3) and debug
// (single-step) traps, across kernel versions (x86: asm_exc_int3 and
// exc_int3 since 5.9, int3 and do_int3 before; the debug trap likewise).
func trapEntry(name string) bool {
	switch name {
	case "asm_exc_int3", "exc_int3", "int3", "do_int3", "do_int3_user",
		"asm_exc_debug", "exc_debug", "exc_debug_user", "noist_exc_debug", "debug":
		return true
	}
	return false
}

// uprobeCore: the kernel's uprobe functions that run for a hit (and the
// uretprobe trampoline's), from the trap to the perf or trace handlers.
func uprobeCore(name string) bool {
	switch name {
	case "uprobe_notify_resume", "handle_swbp", "handle_singlestep",
		"uprobe_handle_trampoline", "handle_trampoline",
		"uprobe_pre_sstep_notifier", "uprobe_post_sstep_notifier", "arch_uprobe_exception_notify",
		"__x64_sys_uretprobe", "__do_sys_uretprobe",
		"uprobe_dispatcher", "uretprobe_dispatcher":
		return true
	}
	return false
}

// foldProbes replaces the nk kernel frames at the start of b.frames with
// probesFrame when they are the handling of a counting probe, and returns
// how many kernel frames there are now, and whether it folded them (the
// caller counts the sample then). It folds only once cctop has placed
// counting uprobes in this session (b.entries, which keeps the probes of
// earlier armings: the kernel unregisters a probe a while after its events
// close, and the trap stays until then). Before that, or without them, an
// int3 is somebody else's (a debugger's breakpoint, another tool's probe)
// and its frames stay as they are. While they are armed, another tool's
// uprobes on the same target fold too: their kernel paths are the same.
func (b *builder) foldProbes(nk int) (int, bool) {
	if len(b.entries) == 0 || !probePath(b.frames[:nk]) {
		return nk, false
	}
	b.frames = append(b.frames[:0], probesFrame)
	return 1, true
}

// xolModule is the page where the kernel runs, out of line, the instruction a
// uprobe replaced (/proc/PID/maps names it so).
const xolModule = "[uprobes]"

// foldXOL folds into [cctop probes] a sample taken while the target ran, in
// the [uprobes] page, the instruction one of cctop's probes displaced (its
// user leaf, frames[nk]), with the kernel frames above it: that too is
// time spent because cctop counts. It works on b.stack, built from b.frames,
// which stay as they were for the completeness checks.
func (b *builder) foldXOL(nk int) {
	if len(b.entries) == 0 || nk >= len(b.frames) || b.frames[nk].Module != xolModule {
		return
	}
	if nk != 1 || b.frames[0].Func != cct.ProbesName {
		b.probeSamples++ // not counted by foldProbes
	}
	b.probe = true
	probes := cct.Frame{Func: b.intern(probesFrame)}
	b.stack = append(append(b.stack[:0], probes), b.stack[nk+1:]...)
}

// probeShare is the share of the builder's samples, in percent, taken while
// the kernel handled a counting probe; -1 when none was folded and no probe
// is armed (armed: the counting plan's probes now).
func (b *builder) probeShare(armed bool) float64 {
	switch {
	case b.probeSamples == 0 && !armed:
		return -1
	case b.samples == 0:
		return 0
	}
	return 100 * float64(b.probeSamples) / float64(b.samples)
}
