package main

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
// handling) in mstart, rt0_go, mcall, systemstack and morestack.
var rootFuncs = map[string]bool{
	"_start": true, "__libc_start_main": true, "__libc_start_call_main": true,
	"__libc_start_main_impl": true, "start_thread": true, "clone": true, "clone3": true,
	"__clone": true, "__clone3": true, "__clone_internal": true, "thread_start": true,
	"runtime.goexit": true, "runtime.rt0_go": true, "runtime.mstart": true, "runtime.mstart0": true,
	"runtime.mcall": true, "runtime.systemstack": true, "runtime.morestack": true,
	"runtime.sigtramp": true, "runtime.sigreturn__sigaction": true,
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
// others did not.
type completeness struct {
	complete, truncated uint64
	reasons             map[string]uint64
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
