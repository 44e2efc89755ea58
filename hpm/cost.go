package hpm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"time"

	"github.com/cctop/cctop/sampler"
)

// probeTarget is what MeasureUprobeCost probes: out of line, so each call
// really enters it, and trivial, so the difference a probe makes is the
// probe. Being a leaf it has no stack-bound check, so no call can pass its
// entry twice (see AfterStackCheck), and its first instruction (LEAQ) is one
// the kernel single-steps, as it does the CMPQ most Go functions start with.
//
//go:noinline
func probeTarget(i int) int { return i*2 + 1 }

// framedTarget is the same with the prologue of a Go function that may grow
// its stack (the never-taken recursion makes it a non-leaf), for measuring a
// probe placed past the stack-bound check, on the PUSHQ BP.
//
//go:noinline
func framedTarget(i int) int {
	if i < 0 {
		return framedTarget(i + 1)
	}
	return i*2 + 1
}

// costRounds: each variant runs this many times and the fastest counts
// (seven: cctop measures while the target starts, and on two CPUs a round
// in three was slowed by it),
// which keeps a stray preemption or frequency step out of the figure.
const costRounds = 7

// MeasureUprobeCost times iters calls of a trivial Go function without and
// with a counting uprobe on its entry, in this process, and returns the
// difference per call: what one hit costs the target on this machine, a trap
// into the kernel and back and the out-of-line step of the probed
// instruction (about 10 µs in the VM cctop was built on, where that step is
// expensive). It fails where uprobes are not permitted, and if the counter
// missed or doubled any hit.
func MeasureUprobeCost(iters int) (time.Duration, error) {
	return measureChecked(probeTarget, false, iters)
}

// MeasureUprobeCostAfterStackCheck is MeasureUprobeCost for probes placed
// with Target.AfterStackCheck, which the kernel emulates instead of stepping
// (about 0.6 µs a hit in that VM).
func MeasureUprobeCostAfterStackCheck(iters int) (time.Duration, error) {
	return measureChecked(framedTarget, true, iters)
}

// MeasureBreakpointCost is MeasureUprobeCost for a hardware execution
// breakpoint on the function's entry: what a hit of a trial's counter
// costs (sampler.TrialBreakpoints), a debug trap with nothing to step.
func MeasureBreakpointCost(iters int) (time.Duration, error) {
	if iters <= 0 {
		return 0, fmt.Errorf("MeasureBreakpointCost: %d iterations", iters)
	}
	addr := uint64(reflect.ValueOf(probeTarget).Pointer())
	cost, hits, err := timeCounted(probeTarget, iters, func() (*sampler.Counter, error) {
		c, err := sampler.OpenBreakpointCounter(addr, 0)
		if err != nil {
			return nil, fmt.Errorf("hardware breakpoint: %w", err)
		}
		return c, nil
	}, (*sampler.Counter).Close)
	if err != nil {
		return 0, err
	}
	// A signal taken on the instruction (the Go runtime's preemption)
	// can make it trap again when the thread resumes there: a few extra.
	if want := uint64(costRounds * iters); hits < want || hits > want+want/100 {
		return 0, fmt.Errorf("the breakpoint counted %d of %d calls", hits, want)
	}
	return cost, nil
}

func measureChecked(fn func(int) int, afterCheck bool, iters int) (time.Duration, error) {
	cost, hits, err := measureUprobe(fn, afterCheck, iters)
	if err != nil {
		return 0, err
	}
	if want := uint64(costRounds * iters); hits != want {
		return 0, fmt.Errorf("the uprobe counted %d of %d calls", hits, want)
	}
	return cost, nil
}

// measureUprobe does the timing and returns how many hits the counter saw,
// which should be costRounds*iters.
func measureUprobe(fn func(int) int, afterCheck bool, iters int) (cost time.Duration, hits uint64, err error) {
	if iters <= 0 {
		return 0, 0, fmt.Errorf("MeasureUprobeCost: %d iterations", iters)
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return 0, 0, errors.New("MeasureUprobeCost: cannot name its probe target")
	}
	ts, err := ResolveTargets(exe, []string{f.Name()})
	if err != nil {
		return 0, 0, err
	}
	t := ts[0]
	if afterCheck {
		if t, _ = t.AfterStackCheck(); t.Offset == ts[0].Offset && runtime.GOARCH == "amd64" {
			return 0, 0, fmt.Errorf("%s: no Go stack-bound check found at its entry", f.Name())
		}
	}

	return timeCounted(fn, iters, func() (*sampler.Counter, error) {
		c, err := sampler.OpenUprobeCounter(t.Path, t.Offset, 0)
		if err != nil {
			return nil, fmt.Errorf("uprobe on %s: %w", f.Name(), err)
		}
		return c, nil
	}, func(c *sampler.Counter) error {
		// Closing the last event on a uprobe waits for the kernel's grace
		// periods, 70-110 ms here: two such waits were most of what
		// counting added to a short recording's wall time. Nothing calls
		// the probed function again, so the close goes on aside.
		go c.Close()
		return nil
	})
}

// timeCounted times iters calls of fn without and then with the counter
// open opens on it, on this thread, and returns the difference per call and
// the hits the counter saw (costRounds*iters if it missed none); done
// closes the counter.
func timeCounted(fn func(int) int, iters int, open func() (*sampler.Counter, error), done func(*sampler.Counter) error) (time.Duration, uint64, error) {
	// The counter counts this thread only; the calls must stay on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	calls(fn, iters) // fault the code in before timing anything
	without := fastest(fn, iters)
	c, err := open()
	if err != nil {
		return 0, 0, err
	}
	defer done(c)
	with := fastest(fn, iters)
	hits, err := c.Read()
	if err != nil {
		return 0, 0, err
	}
	return (with - without) / time.Duration(iters), hits, nil
}

func fastest(fn func(int) int, iters int) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range costRounds {
		start := time.Now()
		calls(fn, iters)
		best = min(best, time.Since(start))
	}
	return best
}

// calls calls fn iters times. The targets are not inlined, and Go drops no
// call for being pure: each enters the function, result kept or not.
func calls(fn func(int) int, iters int) {
	for i := range iters {
		fn(i)
	}
}
