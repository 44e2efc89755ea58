package engine

import (
	"fmt"
	"runtime"
	"time"

	"github.com/cctop/cctop/sampler"
)

// How many switches out get a stack sample. Each one costs the target a
// copy of its user stack in the kernel, at the switch, and cctop an unwind:
// a program that switches 300,000 times a second cannot have them all. The
// switches themselves are recorded every one (a small record each), so the
// time off the CPU stays exact per thread; only the stacks are sampled, one
// switch in N (Config.SwitchPeriod), N kept so that the stack samples stay
// near a budget. N changes as the target's rate does, checked every
// periodEvery, and only when it is off by more than twice: each change
// reopens the events. N is a prime, so that a program's own pattern of
// waits of any shorter length does not lock onto the sampled switches (see
// offcpu.go on how unsampled intervals are weighed).

// switchBudgetPerCPU is the switch stacks a second the budget allows per
// CPU: as many as a 1 kHz clock samples a busy CPU.
const switchBudgetPerCPU = 1000

// periodEvery is how often the switch rate is looked at, and periodFirst
// when it is first: a target switching a million times a second must not
// pay for every switch's stack for long.
const (
	periodEvery = 2 * time.Second
	periodFirst = 200 * time.Millisecond
)

// switchRate keeps the period of switch samples in line with the target's
// switch rate.
type switchRate struct {
	budget   float64 // stack samples a second
	lastAt   time.Time
	lastSw   uint64
	changes  int
	looked   bool // the rate was looked at once
}

func newSwitchRate(cpus int) *switchRate {
	return &switchRate{budget: float64(switchBudgetPerCPU * max(cpus, 1))}
}

// defaultSwitchRate is the budget of this machine.
func defaultSwitchRate() *switchRate { return newSwitchRate(runtime.NumCPU()) }

// want is the period for a rate of switches a second under the budget, or
// cur when cur is within a factor of two of it.
func (r *switchRate) want(rate float64, cur uint64) uint64 {
	ideal := uint64(1)
	if rate > r.budget {
		ideal = nextPrime(uint64(rate/r.budget + 0.5))
	}
	cur = max(cur, 1)
	if ideal <= 2*cur && cur <= 2*ideal {
		return cur
	}
	return ideal
}

// nextPrime is the smallest prime >= n (n >= 1; 1 stays 1: every switch).
func nextPrime(n uint64) uint64 {
	if n <= 1 {
		return 1
	}
	for !prime(n) {
		n++
	}
	return n
}

// govern looks at the switch rate when due and reopens sess's events with
// a new period when it is off. It returns a note when it changed it.
func (r *switchRate) govern(sess *sampler.Session, b *builder, now time.Time) string {
	cfg := sess.Config()
	if !cfg.OffCPU || b.off == nil || b.off.probes {
		r.lastAt = time.Time{}
		return ""
	}
	sw := sess.Stats().Switches
	if r.lastAt.IsZero() {
		r.lastAt, r.lastSw = now, sw
		return ""
	}
	dt := now.Sub(r.lastAt)
	if dt < periodEvery && (r.looked || dt < periodFirst) {
		return ""
	}
	r.looked = true
	rate := float64(sw-r.lastSw) / dt.Seconds()
	r.lastAt, r.lastSw = now, sw
	cur := max(cfg.SwitchPeriod, 1)
	n := r.want(rate, cur)
	if n == cur {
		return ""
	}
	drained, err := sess.ReconfigureWith(func(c *sampler.Config) { c.SwitchPeriod = n })
	b.handle(drained)
	if w := b.weights; w != nil {
		w.reset(sess.Generation())
	}
	if err != nil {
		return fmt.Sprintf("off-CPU: switch samples stay at one in %d: %v", cur, err)
	}
	r.changes++
	return fmt.Sprintf("off-CPU: %.0f switches/s, a stack sample every %d (budget %.0f stacks/s; the time off the CPU stays exact)", rate, n, r.budget)
}
