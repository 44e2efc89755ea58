package main

import (
	"slices"
	"time"

	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
)

// armer places counting uprobes on the hottest functions of the live
// profile when there is no hardware call counter (--calls auto): first after
// a short warm-up, then again whenever the hot set changes.
type armer struct {
	plan    *countingPlan
	start   time.Time
	lastArm time.Time
	armed   []string
	warmup  time.Duration
	rearm   time.Duration
}

func newArmer(plan *countingPlan) *armer {
	return &armer{plan: plan, start: time.Now(), warmup: 300 * time.Millisecond, rearm: 5 * time.Second}
}

// due reports whether the counters should be (re)armed now.
func (a *armer) due(b *builder) bool {
	if a.plan == nil || !a.plan.auto {
		return false
	}
	now := time.Now()
	if a.armed == nil {
		return now.Sub(a.start) >= a.warmup && b.samples >= 50
	}
	if now.Sub(a.lastArm) < a.rearm {
		return false
	}
	a.lastArm = now // look again in rearm, whatever this look finds
	return !slices.Equal(names(a.pick(b)), a.armed)
}

// pick chooses the targets from the profile so far.
func (a *armer) pick(b *builder) []hpm.Target {
	var flat []hpm.FuncSample
	for _, f := range b.tree.Flat() {
		fn := b.tree.Func(f.Func)
		flat = append(flat, hpm.FuncSample{Name: fn.Name, Module: fn.Module, Self: f.Self.Samples})
	}
	return hpm.HottestFunctions(flat, autoK)
}

// arm re-opens the events with counters on targets.
func (a *armer) arm(sess *sampler.Session, b *builder, targets []hpm.Target) error {
	targets, entries := placeProbes(targets)
	members := make([]sampler.EventSpec, len(targets))
	for i, t := range targets {
		members[i] = t.Spec()
	}
	if err := sess.Reconfigure(members, b.handle); err != nil {
		return err
	}
	a.lastArm = time.Now()
	a.armed = names(targets)
	a.plan.targets = targets
	a.plan.entries = entries
	b.entries = a.plan.entries
	if b.weights != nil {
		b.weights.reset(sess.Generation())
	}
	return nil
}

func names(ts []hpm.Target) []string {
	n := make([]string, len(ts))
	for i, t := range ts {
		n[i] = t.Func
	}
	slices.Sort(n)
	return n
}
