package engine

import (
	"fmt"
	"runtime"
	"time"

	"github.com/cctop/cctop/sampler"
)

// Where off-CPU stacks come from as the target's switch rate changes.
//
// A switch sample costs the target a copy of its user stack in the kernel,
// at the switch, and cctop an unwind: a program that switches 300,000 times
// a second ran at a quarter of its speed with every switch sampled. The
// switch records stay, every one (a small record each), so that the time off
// the CPU stays exact per thread; above a budget of stacks a second the
// stacks come from the wait probes instead, which read blocked threads'
// stacks from /proc at a fixed rate whatever the switch rate (time samples
// of the waits: see offcpu.go). Below a quarter of the budget the switch
// samples come back. The switch group is turned off and on with an ioctl
// that reaches every thread's inherited event: reopening the events instead
// would open them per thread, which costs a switch-heavy target half its
// speed for the rest of the run (the scheduler no longer swaps the threads'
// cloned contexts). Sampling one switch in N does not do either: the waits
// that matter are few and long among many short ones, and one in N misses
// them; time samples do not.

// switchBudgetPerCPU is the switch stacks a second the budget allows per
// CPU: twice what a 1 kHz clock samples a busy CPU. A stack copy in the
// kernel takes the target a few µs, the unwind cctop some more: at the
// budget, well under 1% of the target's CPU and a few % of cctop's.
const switchBudgetPerCPU = 2000

// How often the switch rate is looked at, and when first: a target
// switching a million times a second must not pay for every switch's stack
// for long.
const (
	rateEvery = time.Second
	rateFirst = 200 * time.Millisecond
)

// switchRate turns switch samples off when switches outrun the budget, and
// on again when they fall well under it.
type switchRate struct {
	budget float64 // stack samples a second
	lastAt time.Time
	lastSw uint64
	looked bool // the rate was looked at once
	off    bool // switch samples turned off for the rate (as they start)
}

func newSwitchRate(cpus int) *switchRate {
	return &switchRate{budget: float64(switchBudgetPerCPU * max(cpus, 1)), off: true}
}

// defaultSwitchRate is the budget of this machine.
func defaultSwitchRate() *switchRate { return newSwitchRate(runtime.NumCPU()) }

// restart looks at the rate again soon, as at the start: switches have
// just begun to be recorded, with the switch samples off.
func (r *switchRate) restart() { r.lastAt, r.looked, r.off = time.Time{}, false, true }

// decide says whether switch samples should be on at rate switches a
// second, given whether they are now: off above the budget, on again under
// half of it, as they are in between.
func (r *switchRate) decide(rate float64, on bool) bool {
	switch {
	case on && rate > r.budget:
		return false
	case !on && rate < r.budget/2:
		return true
	}
	return on
}

// govern looks at the switch rate when due and turns sess's switch samples
// off or on. It returns a note when it did.
func (r *switchRate) govern(sess *sampler.Session, b *builder, now time.Time) string {
	cfg := sess.Config()
	if !cfg.OffCPU || b.off == nil {
		r.lastAt = time.Time{}
		return ""
	}
	if !sess.SwitchSamplesAllowed() {
		return "" // the probes by necessity (no kernel samples), not for the rate
	}
	r.off = !sess.SwitchSamplesOn()
	sw := sess.Stats().Switches
	if r.lastAt.IsZero() {
		r.lastAt, r.lastSw = now, sw
		return ""
	}
	dt := now.Sub(r.lastAt)
	if dt < rateEvery && (r.looked || dt < rateFirst) {
		return ""
	}
	r.looked = true
	rate := float64(sw-r.lastSw) / dt.Seconds()
	r.lastAt, r.lastSw = now, sw
	on := !r.off
	want := r.decide(rate, on)
	if want == on {
		return ""
	}
	if err := sess.SetSwitchSamples(want); err != nil {
		return fmt.Sprintf("off-CPU: switch samples stay %s: %v", onOff(on), err)
	}
	r.off = !want
	if want {
		return fmt.Sprintf("off-CPU: %.0f switches/s: a stack sample at every switch (budget %.0f a second)", rate, r.budget)
	}
	return fmt.Sprintf("off-CPU: %.0f switches/s is more than %.0f stacks/s can follow: stacks are read from /proc at %d Hz instead (the time off the CPU stays exact)",
		rate, r.budget, sampler.DefaultProbeHz)
}
