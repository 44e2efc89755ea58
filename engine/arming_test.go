package engine

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/hpm"
)

// TestArmerPicksWhatIsHotNow: a function that was hot while the target
// started and has had no sample since is not re-armed; what is hot since
// the last arming is, even when its total is still smaller.
func TestArmerPicksWhatIsHotNow(t *testing.T) {
	b := newBuilder(nil)
	add := func(name string, n int64) { addSelf(b, name, n) }
	add("densityPhaseC", 500) // start-up work
	a := newArmer(&Plan{auto: true, trigger: triggerTime}, nil)
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
	add := func(name string, n int64) { addSelf(b, name, n) }
	a := newArmer(&Plan{auto: true, trigger: triggerTime}, nil)
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

// TestArmerJudgesTrial: from a trial's counts, the hottest targets whose
// projected cost fits half the budget together are kept; a target that
// would cost more is banned and named, demangled and short, in a note with
// its call rate; a round that keeps nothing twice gives up. The rates are
// those of the thread without the trial's probes: half its CPU time went
// to the dearest one's traps, so the others' calls came in the other half.
func TestArmerJudgesTrial(t *testing.T) {
	a := newArmer(&Plan{auto: true, trigger: triggerTime, cost: time.Microsecond, budget: 0.05}, nil)
	targets := []hpm.Target{
		{Func: workloadPkg + "first"}, // 500 calls at 1 µs in the 48.5 ms the probes left: 1%
		{Func: "_ZN3foo3barEv"},       // 50,000 calls: 50 ms, half the trial's CPU
		{Func: workloadPkg + "cheap"}, // 250 calls: 0.5%
		{Func: workloadPkg + "third"}, // 750: 1.5%, past half the budget with the others
	}
	// One window for all, as a uprobe trial counts: 51.5 ms of its 100 ms
	// went to the traps at 1 µs a hit.
	clean := cleanCPU(500+50000+250+750, 100*time.Millisecond, 1000)
	if clean != 48.5e6 {
		t.Errorf("clean CPU %.0f ns, want 48.5 ms", clean)
	}
	var counts []trialCount
	for _, h := range []uint64{500, 50000, 250, 750} {
		counts = append(counts, trialCount{hits: h, clean: clean})
	}
	keep := a.judge(targets, counts)
	if got := names(keep); !slices.Equal(got, []string{workloadPkg + "cheap", workloadPkg + "first"}) {
		t.Errorf("kept %v", got)
	}
	if !a.banned["_ZN3foo3barEv"] || !a.banned[workloadPkg+"third"] || a.banned[workloadPkg+"cheap"] {
		t.Errorf("banned %v", a.banned)
	}
	// 0.75 ms in the 48.5 ms the probes left (1.546%), as a share of the
	// CPU with the two probes: 1.523%.
	if a.projected < 0.0151 || a.projected > 0.0153 {
		t.Errorf("projected %.4f, want 0.0152", a.projected)
	}
	if len(a.notes) != 1 || !strings.Contains(a.notes[0], "foo::bar (1031 calls per ms of CPU: 51%)") ||
		!strings.Contains(a.notes[0], "workload.third (15 calls per ms") || strings.Contains(a.notes[0], "_ZN") {
		t.Errorf("notes %q", a.notes)
	}
	// Nothing affordable, twice: counting gives up.
	b := newArmer(&Plan{auto: true, trigger: triggerTime, cost: time.Microsecond, budget: 0.05}, nil)
	for range 2 {
		if keep := b.judge(targets[1:2], []trialCount{{hits: 100000, clean: cleanCPU(100000, 100*time.Millisecond, 1000)}}); len(keep) != 0 {
			t.Fatalf("kept %v", names(keep))
		}
	}
	if !b.giveUp || !slices.Contains(b.notes, tooHotNote) {
		t.Errorf("gave up %v, notes %q", b.giveUp, b.notes)
	}
}

// TestCleanCPU: a window the traps took whole leaves 1% of it, not less:
// a hit cost measured a little high must not make the rate infinite.
func TestCleanCPU(t *testing.T) {
	if got := cleanCPU(2000, 20*time.Millisecond, 9000); got != 2e6 {
		t.Errorf("2000 hits at 9 µs in 20 ms: clean %.0f ns, want 2 ms", got)
	}
	if got := cleanCPU(3000, 20*time.Millisecond, 9000); got != 0.2e6 {
		t.Errorf("over-booked window: clean %.0f ns, want 1%% of it", got)
	}
	if r := (trialCount{hits: 5}).rate(); !math.IsInf(r, 1) {
		t.Errorf("a count with no CPU measured has rate %v", r)
	}
}

// TestArmerDropsDearest: over budget, the probes that cost most since they
// were armed are banned (at least the dearest), and the re-arm due then
// keeps the others and tries nothing new.
func TestArmerDropsDearest(t *testing.T) {
	a := newArmer(&Plan{auto: true, trigger: triggerTime, budget: 0.05}, nil)
	a.targets = []hpm.Target{{Func: "cheap"}, {Func: "dear"}, {Func: "middling"}}
	w := newWeighing(triggerTime, nil, 0)
	w.costs = []float64{600, 9000, 600}
	w.hits = []uint64{0, 10, 5000, 4000} // 6 µs, 45 ms, 2.4 ms
	a.dropDear(w)
	if !a.banned["dear"] || a.banned["cheap"] || a.banned["middling"] {
		t.Errorf("banned %v, want only the dearest (the middling one cost under a sixth)", a.banned)
	}
	if got := names(a.next(newBuilder(nil))); !slices.Equal(got, []string{"cheap", "middling"}) {
		t.Errorf("the re-arm after the drop arms %v", got)
	}
	if a.dropping {
		t.Error("still dropping after the re-arm took the kept probes")
	}
	if len(a.notes) != 1 || !strings.Contains(a.notes[0], "counting calls to dear cost") {
		t.Errorf("notes %q", a.notes)
	}
}

// TestArmerGivesUpOnce: the second round over budget gives up, says so
// once, and the re-arm then takes every probe out, the kept ones too.
func TestArmerGivesUpOnce(t *testing.T) {
	a := newArmer(&Plan{auto: true, trigger: triggerTime, budget: 0.05}, nil)
	a.targets = []hpm.Target{{Func: "cheap"}, {Func: "dear"}}
	w := newWeighing(triggerTime, nil, 0)
	w.costs = []float64{600, 9000}
	w.hits = []uint64{0, 10, 5000}
	a.dropDear(w)
	if got := names(a.next(newBuilder(nil))); !slices.Equal(got, []string{"cheap"}) {
		t.Fatalf("after the first drop: %v", got)
	}
	a.targets = []hpm.Target{{Func: "cheap"}, {Func: "other"}}
	a.dropDear(w)
	a.dropDear(w) // a third, as the probes have not gone yet
	if got := a.next(newBuilder(nil)); len(got) != 0 || !a.giveUp {
		t.Errorf("after giving up the re-arm arms %v (gave up %v)", names(got), a.giveUp)
	}
	n := 0
	for _, note := range a.notes {
		if note == tooHotNote {
			n++
		}
	}
	if n != 1 {
		t.Errorf("said it gave up %d times: %q", n, a.notes)
	}
}

// TestPlaceProbesUsesLocatedAddress: a target located with its address has its entry
// placed from it, without reading its file's symbol table again (here there is no file
// to read); one without falls back to the table.
func TestPlaceProbesUsesLocatedAddress(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "gone")
	out, entries := placeProbes([]hpm.Target{{Func: "main.f", Path: gone, Offset: 0x1000, Vaddr: 0x401000}, {Func: "main.g", Path: gone, Offset: 0x2000}})
	if len(out) != 2 || out[0].Offset != 0x1000 {
		t.Fatalf("targets %+v", out)
	}
	if !entries[entryKey{gone, 0x401000}] || len(entries) != 1 {
		t.Errorf("entries %v, want main.f's located address alone", entries)
	}
}

// TestArmerLooksLessWhileNothingChanges: each look for a hotter set ranks the profile and
// reads new candidates' symbol tables; while the looks find none they space out, 5 s,
// 10 s, then 20 s, and a look that finds one brings the pace back.
func TestArmerLooksLessWhileNothingChanges(t *testing.T) {
	b := newBuilder(nil)
	add := func(name string, n int64) { addSelf(b, name, n) }
	add("densityPhaseC", 500)
	a := newArmer(&Plan{auto: true, trigger: triggerTime}, nil)
	a.armed = names(a.pick(b))
	ago := func(d time.Duration) { a.lastArm = time.Now().Add(-d) }
	for i, c := range []struct {
		since time.Duration
		due   bool
		quiet uint
	}{
		{6 * time.Second, false, 1},  // looked: nothing hotter
		{6 * time.Second, false, 1},  // not looked: 10 s now
		{11 * time.Second, false, 2}, // looked
		{11 * time.Second, false, 2}, // not looked: 20 s now
		{21 * time.Second, false, 2}, // looked, and 20 s stays the bound
	} {
		ago(c.since)
		if got := a.due(b); got != c.due || a.quiet != c.quiet {
			t.Fatalf("look %d after %v: due %v quiet %d, want %v %d", i, c.since, got, a.quiet, c.due, c.quiet)
		}
	}
	add("densityLeaf", 5000)
	ago(21 * time.Second)
	if !a.due(b) || a.quiet != 0 {
		t.Errorf("a hotter function: due %v, quiet %d", a.due(b), a.quiet)
	}
}

// addSelf gives the workload's function name n self samples in b's tree.
func addSelf(b *builder, name string, n int64) {
	id := b.tree.Intern(cct.Func{Name: workloadPkg + name, Module: cctopBin})
	b.tree.Add([]cct.Frame{{Func: id}}, 1, cct.Metrics{Samples: n})
}
