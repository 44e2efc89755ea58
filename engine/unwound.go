package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cctop/cctop/symbol"
)

// rootFuncs are where a thread's stack begins: a stack whose outermost
// frame is one of them was unwound completely (design §5). C runtimes
// start threads in _start/__libc_start_* and clone/start_thread; Go
// goroutines in runtime.goexit, and the runtime's own stacks (g0, signal
// handling) in mstart, rt0_go, mcall, systemstack and morestack. In a cgo
// binary, threads the C runtime starts enter Go through crosscall1
// (runtime/cgo's assembly, which has no CFI and keeps no frame pointer):
// it calls runtime.mstart, and is as far as the unwinder can go.
var rootFuncs = map[string]bool{
	"_start": true, "__libc_start_main": true, "__libc_start_call_main": true,
	"__libc_start_main_impl": true, "start_thread": true, "clone": true, "clone3": true,
	"__clone": true, "__clone3": true, "__clone_internal": true, "thread_start": true,
	"runtime.goexit": true, "runtime.rt0_go": true, "runtime.mstart": true, "runtime.mstart0": true,
	"runtime.mcall": true, "runtime.systemstack": true, "runtime.morestack": true,
	"runtime.sigtramp": true, "runtime.sigreturn__sigaction": true, "crosscall1": true,
	// kernel threads and a thread's first instant, seen from the kernel
	"ret_from_fork": true, "ret_from_fork_asm": true,
}

// Why a stack stopped short of a root.
const (
	truncNoUser   = "no user-space frames"
	truncUnnamed  = "ends in code with no symbol"
	truncDepth    = "deeper than the kernel's callchain limit"
	truncMidStack = "ends inside a function (a frame without a frame pointer)"
)

// maxChain is the kernel's default perf_event_max_stack.
const maxChain = 127

// completeness counts how many samples' stacks reached a root, and why the
// others did not: by reason, and by where they stop (stops).
type completeness struct {
	complete, truncated uint64
	reasons             map[string]uint64
	stops               map[stopKey]uint64
}

// stopKey is where truncated stacks stop: the module of their outermost
// frame (base name) and why the unwind went no further there.
type stopKey struct{ module, why string }

// Where a stack with no user frames, or whose outermost frame is in no
// module, stops.
const (
	stopNoUser   = "[no user frames]"
	stopNoModule = "[unknown]"
)

// stopModule names the module of the outermost of a stack's user frames,
// by the frame's Module field (never its function name): the base name of
// a file, a pseudo module ("[vdso]", "[jit]") as it is.
func stopModule(user []symbol.Frame) string {
	if len(user) == 0 {
		return stopNoUser
	}
	m := user[len(user)-1].Module
	switch {
	case m == "":
		return stopNoModule
	case m[0] == '[':
		return m
	}
	return symbol.ModuleBase(m)
}

// stopWhy is why the stack being built stops short, given classify's
// reason: the unwinder's own reason when its frames end the stack and it
// knows better (no CFI, a rejected frame pointer, a bad step), else reason.
func (b *builder) stopWhy(reason string) string {
	if b.haveStop {
		switch b.stop {
		case symbol.StopNoInfo, symbol.StopFPCheck, symbol.StopBad, symbol.StopUnmapped:
			return b.stop.String()
		}
	}
	return reason
}

// addStop counts a truncated stack where it stops (after add).
func (c *completeness) addStop(module, why string) {
	if c.stops == nil {
		c.stops = map[stopKey]uint64{}
	}
	c.stops[stopKey{module, why}]++
}

// StopShare is one place truncated stacks stop, with its share of all samples.
type StopShare struct {
	Module, Why string
	Percent     float64
}

func (s StopShare) String() string {
	return fmt.Sprintf("%s: %.1f%% of stacks stop here, %s", s.Module, s.Percent, s.Why)
}

// topStops are the n places where the most truncated stacks stop,
// commonest first.
func (c *completeness) topStops(n int) []StopShare {
	total := float64(c.complete + c.truncated)
	if total == 0 || len(c.stops) == 0 {
		return nil
	}
	keys := make([]stopKey, 0, len(c.stops))
	for k := range c.stops {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b stopKey) int {
		return cmp.Or(cmp.Compare(c.stops[b], c.stops[a]), strings.Compare(a.module, b.module), strings.Compare(a.why, b.why))
	})
	out := make([]StopShare, 0, min(n, len(keys)))
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, StopShare{Module: k.module, Why: k.why, Percent: 100 * float64(c.stops[k]) / total})
	}
	return out
}

// classify says why frames (innermost first) do not reach a root, or "".
func classify(frames []symbol.Frame, userChain int) string {
	if len(frames) == 0 {
		return truncNoUser
	}
	outer := frames[len(frames)-1]
	if rootFuncs[outer.Func] {
		return ""
	}
	switch {
	case userChain == 0:
		return truncNoUser
	case userChain >= maxChain:
		return truncDepth
	case outer.Func == "" || outer.Unnamed:
		return truncUnnamed
	}
	return truncMidStack
}

func (c *completeness) add(reason string) {
	if reason == "" {
		c.complete++
		return
	}
	c.truncated++
	if c.reasons == nil {
		c.reasons = map[string]uint64{}
	}
	c.reasons[reason]++
}

// percent is the share of samples that reached a root, or -1 with none.
func (c *completeness) percent() float64 {
	n := c.complete + c.truncated
	if n == 0 {
		return -1
	}
	return 100 * float64(c.complete) / float64(n)
}

// String is the summary line: the share, then the reasons, commonest first.
func (c *completeness) String() string {
	s := fmt.Sprintf("%.1f%% of samples unwound to a thread's entry", c.percent())
	if c.truncated == 0 {
		return s
	}
	reasons := make([]string, 0, len(c.reasons))
	for r := range c.reasons {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		return cmp.Or(cmp.Compare(c.reasons[b], c.reasons[a]), strings.Compare(a, b))
	})
	n := float64(c.complete + c.truncated)
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%.1f%% %s", 100*float64(c.reasons[r])/n, r)
	}
	return s + "; under [truncated]: " + strings.Join(parts, ", ")
}
