package engine

import (
	"os"
	"runtime"
)

// How many Ps (GOMAXPROCS) the runtime keeps while the live view or the
// agent samples. A live view is mostly idle: a batch every quarter second,
// a frame every second; an agent, a window a minute. Each
// wake of a goroutine with an idle P about starts another thread that
// looks for work and finds none, and each collection starts an idle mark
// worker on every idle P: on this 2-CPU VM, `cctop top` on the density
// workload used 15% less CPU with one P than with two (BENCHMARKS.md,
// issue 34), and on a server of 64 CPUs the runtime would have 64 Ps to
// wake. So the view runs on one P while its work is light, and on more
// (up to procsBusy, never above what the runtime chose at start) while it
// is heavy: the first seconds' symbol loads, a host's worth of samples.

// procsBusy is the most Ps a busy live view gets: its pipeline is the
// reader, the aggregator and the collector's workers; the symbol loads
// take a few modules at a time.
const procsBusy = 4

// Shares of one core, over a judgement's second, of cctop's CPU time:
// above procsHeavy the view gets procsBusy Ps at once, below procsLight
// for procsQuiet judgements in a row it goes back to one.
const (
	procsHeavy = 0.5
	procsLight = 0.2
	procsQuiet = 3
)

// procGovernor sets GOMAXPROCS from what cctop's CPU time was over the
// last second. It is used from the aggregator's goroutine only.
type procGovernor struct {
	max   int  // what the runtime chose at start: never more
	cur   int  // what it set last
	off   bool // GOMAXPROCS was set by the user, or no CPU clock: left alone
	at    uint64
	cpu   uint64
	quiet int // light judgements in a row
	// held reports whether a part of cctop holds a P of its own (the
	// Python poller, which sleeps in the kernel keeping it): then the
	// rest must not have fewer than two.
	held func() bool
	// set and clock are runtime.GOMAXPROCS and the process's CPU clock;
	// tests replace them.
	set   func(int) int
	clock func() uint64
}

// pyHoldsP reports whether the builder's Python poller holds a P of its
// own (python.Poller.HoldsP), for the governor of a live view or agent,
// whose builder a reset or a window's cut replaces.
func (b *builder) pyHoldsP() bool {
	return b.py != nil && b.py.poller != nil && b.py.poller.HoldsP()
}

func newProcGovernor(held func() bool) *procGovernor {
	g := &procGovernor{held: held, set: runtime.GOMAXPROCS, clock: processCPU}
	g.max = g.set(0)
	g.cur = g.max
	g.off = os.Getenv("GOMAXPROCS") != "" || g.clock() == 0
	return g
}

// judge looks at the second since the last judgement (now: monotonic ns)
// and sets the Ps for the next.
func (g *procGovernor) judge(now uint64) {
	if g == nil || g.off {
		return
	}
	if g.at == 0 {
		g.at, g.cpu = now, g.clock()
		return
	}
	if now-g.at < 1e9 {
		return
	}
	cpu := g.clock()
	share := float64(cpu-g.cpu) / float64(now-g.at)
	g.at, g.cpu = now, cpu
	want := g.cur
	switch {
	case share > procsHeavy:
		want, g.quiet = procsBusy, 0
	case share < procsLight:
		if g.quiet++; g.quiet >= procsQuiet {
			want = 1
		}
	default:
		g.quiet = 0
	}
	if g.held != nil && g.held() {
		want = max(want, 2)
	}
	want = min(want, g.max)
	// Read, not remembered: the Python poller raises and lowers it too.
	if want != g.set(0) {
		g.set(want)
	}
	g.cur = want
}
