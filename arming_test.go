package main

import (
	"slices"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/hpm"
)

// TestArmerPicksWhatIsHotNow: a function that was hot while the target
// started and has had no sample since is not re-armed; what is hot since
// the last arming is, even when its total is still smaller.
func TestArmerPicksWhatIsHotNow(t *testing.T) {
	b := newBuilder(nil)
	add := func(name string, n int64) {
		id := b.tree.Intern(cct.Func{Name: workloadPkg + name, Module: cctopBin})
		b.tree.Add([]cct.Frame{{Func: id}}, 1, cct.Metrics{Samples: n})
	}
	add("densityPhaseC", 500) // start-up work
	a := newArmer(&countingPlan{auto: true, trigger: triggerTime})
	first := a.pick(b)
	if len(first) == 0 || first[0].Func != workloadPkg+"densityPhaseC" {
		t.Fatalf("first pick %v", names(first))
	}
	// Arm without a session: record what arming records.
	a.seen, a.seenTree = map[hpm.FuncSample]int64{}, b.tree
	for _, f := range flatSamples(b.tree) {
		a.seen[hpm.FuncSample{Name: f.Name, Module: f.Module}] += f.Self
	}
	add("densityLeaf", 100)
	got := names(a.pick(b))
	if !slices.Equal(got, []string{workloadPkg + "densityLeaf"}) {
		t.Errorf("re-arm picks %v, want only the leaf", got)
	}
	// A reset profile is a new tree: its counts are all new.
	nb := newBuilder(nil)
	b = nb
	add("densityPhaseC", 5)
	if got := names(a.pick(b)); !slices.Equal(got, []string{workloadPkg + "densityPhaseC"}) {
		t.Errorf("after a reset: %v", got)
	}
}

// TestArmerKeepsAboutAsHotSet: re-arming stops sampling for a moment, so a
// set that is about as hot as the armed one does not replace it, and one
// clearly hotter does.
func TestArmerKeepsAboutAsHotSet(t *testing.T) {
	b := newBuilder(nil)
	add := func(name string, n int64) {
		id := b.tree.Intern(cct.Func{Name: workloadPkg + name, Module: cctopBin})
		b.tree.Add([]cct.Frame{{Func: id}}, 1, cct.Metrics{Samples: n})
	}
	a := newArmer(&countingPlan{auto: true, trigger: triggerTime})
	a.armed = []string{workloadPkg + "densityPhaseC"}
	add("densityPhaseC", 100)
	add("densityLeaf", 110)
	leaf := []hpm.Target{{Func: workloadPkg + "densityLeaf"}}
	if a.worthIt(b, leaf) {
		t.Error("re-arms for a function 10% hotter")
	}
	add("densityLeaf", 100)
	if !a.worthIt(b, leaf) {
		t.Error("keeps a function half as hot as the new one")
	}
}
