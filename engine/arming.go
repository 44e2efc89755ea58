package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
	"github.com/ianlancetaylor/demangle"
)

// armer places counting uprobes on the hottest functions of the live
// profile when there is no hardware call counter (--calls auto): first after
// a short warm-up, then again whenever the hot set changes.
type armer struct {
	plan    *Plan
	start   time.Time
	lastArm time.Time
	armed   []string
	targets []hpm.Target // as armed, in member order
	warmup  time.Duration
	rearm   time.Duration
	// quiet counts the looks in a row that found no hotter set: the next
	// comes after rearm<<quiet (maxQuiet).
	quiet uint
	// budget is the share of the target's CPU time counting may cost: a
	// probe on a function called millions of times a second would slow the
	// target many times over. The busiest probe goes first.
	budget float64
	banned map[string]bool
	// switches keeps the off-CPU stack samples within their budget: like
	// arming, a change of the session's events between two batches.
	switches   *switchRate
	overBudget int
	giveUp     bool
	notes      []string
	// seen is each function's self samples in seenTree when the counters
	// were last armed: a re-arm picks what is hot since then, not what was
	// hot at start-up (package initialisers) and has gone cold.
	seen     map[hpm.FuncSample]int64
	seenTree *cct.Tree
	// locator remembers where the candidates are in their files: a
	// re-arm every few seconds would read each one's symbol table again.
	locator *hpm.Locator
	// projected is the share of the target's CPU time the armed probes
	// were projected to cost by their trial.
	projected float64
	// retry: the last arming found no room in the budget for a trial;
	// look again in a second rather than after rearm.
	retry bool
	// dropping: probes were banned over budget, and the re-arm due now
	// only takes them out (next), trying nothing new while they trap.
	dropping bool
	// noBreakpoints: trials cannot use hardware breakpoints here.
	noBreakpoints bool
	// sess, when set, says how many uprobe events a probe takes (one per
	// live thread and CPU) and how many new threads went unfollowed.
	sess        *sampler.Session
	missedAtArm uint64
	// new threads counted since when, to tell their rate
	newSince time.Time
	newAt    uint64
}

// maxSlowCloses bounds the events automatic counters may open whose close
// waits for the kernel to unregister a uprobe (70-110 ms each, one after
// the other: the kernel serializes them). With tracefs probes that is one
// per probe, whatever the threads and CPUs; with the uprobe PMU every event
// is one (a thread's probe on one CPU), and 500 threads on 2 CPUs with 4
// probes took minutes. 64 keeps the 4 probes on a program of 8 threads on 2
// CPUs there.
const maxSlowCloses = 64

// maxProbeEvents bounds the events automatic counters open in all: each
// costs a descriptor and about 0.1-0.3 ms to open, and re-arming reopens
// them while sampling waits. A launched target needs one per CPU and probe
// (its threads inherit them); an attached one, one per thread it had, CPU
// and probe.
const maxProbeEvents = 4096

// maxArmPause bounds how long arming counters may stop sampling: the events
// of every thread the target had are re-opened with the counters in their
// groups (0.1-1 ms an event here, more on a loaded machine; 500 threads on 2
// CPUs with 4 probes took 6 s).
const maxArmPause = 250 * time.Millisecond

// trialWindow is how long a candidate probe's calls are counted on a few
// threads before it is armed in all of them: at 10 µs a hit, the call rate
// half a 5% budget allows (2.5 calls per ms) shows as 50 hits, and the
// worst case, every thread trapping throughout, costs 1% of a 2 s window.
const trialWindow = 20 * time.Millisecond

// trialThreads is how many of the target's busiest threads a trial counts.
const trialThreads = 4

// defaultHitCost is the cost of a uprobe hit assumed when it was not
// measured: the development VM's is 0.6-0.9 µs.
const defaultHitCost = time.Microsecond

// maxProbeOpens bounds the probe events automatic counters open a second
// for new threads (each needs one per CPU and probe), and startThreads is
// how many threads a program may start at first without counting towards
// the rate.
const (
	maxProbeOpens = 16
	startThreads  = 16
)

// maxMissed is how many new threads may end before cctop opened their
// counting probes (each new thread needs its own) before automatic counting
// stops: a target that churns threads is then sampled by inheritance again,
// which misses none.
const maxMissed = 50

// tooHotNote says why automatic counting gave up for good.
const tooHotNote = "the hottest functions are called too often to count with uprobes within budget: density correction is off for the rest of the run (name cheaper functions with --calls uprobe:F)"

// autoBudget is the default overhead budget of automatic counters.
const autoBudget = 0.05

func newArmer(plan *Plan, sess *sampler.Session) *armer {
	return &armer{plan: plan, sess: sess, start: time.Now(), warmup: 300 * time.Millisecond, rearm: 5 * time.Second, locator: hpm.NewLocator(),
		budget: plan.budgetOr(autoBudget), banned: map[string]bool{}, switches: defaultSwitchRate()}
}

// due reports whether the counters should be (re)armed now.
func (a *armer) due(b *builder) bool {
	if a.plan == nil || !a.plan.auto || a.plan.trigger != triggerTime {
		// Probes placed for the calls or exact trigger stay where the
		// user switched them on.
		return false
	}
	now := time.Now()
	if a.giveUp && len(a.armed) == 0 {
		return false
	}
	if note := a.unaffordable(); note != "" {
		a.giveUp = true
		a.notes = append(a.notes, note)
		if a.armed == nil {
			a.armed = []string{}
			return false
		}
		return true // re-arm with nothing: the probes go
	}
	if a.armed == nil {
		return now.Sub(a.start) >= a.warmup && b.samples >= 50
	}
	if len(a.targets) > 0 && b.weights != nil && b.weights.ledger.overAt(a.budget, dropMargin) {
		a.dropDear(b.weights)
		return true
	}
	if now.Sub(a.lastArm) < a.rearm<<a.quiet {
		return false
	}
	a.lastArm = now // look again in rearm<<quiet, whatever this look finds
	picked := a.pick(b)
	if !slices.Equal(names(picked), a.armed) && a.worthIt(b, picked) {
		a.quiet = 0
		return true
	}
	a.quiet = min(a.quiet+1, maxQuiet)
	return false
}

// maxQuiet bounds how far the looks for a hotter set space out while they
// find none: rearm, twice, four times (20 s). Each look ranks the profile's
// functions and finds the new candidates in their files (a scan of the
// symbol table each); on a program whose hot set holds, the candidates
// after the armed ones are whichever functions a few samples hit, new ones
// at each look: 10-20 ms of cctop's CPU every 5 s on the density workload.
const maxQuiet = 2

// dropMargin is the share of the budget the last window may cost before
// the armed probes go: the rest pays for what comes before they are gone
// (the next batch, the re-arm).
const dropMargin = 0.8

// dropDear bans the armed probes that cost most since they were armed, so
// that the re-arm due now leaves them out: every probe with at least half
// its even part of the cost, the dearest at least. Two such rounds, and the
// hot functions are all too busy to count.
func (a *armer) dropDear(w *weighing) {
	per := make([]float64, len(a.targets))
	var total float64
	for m, h := range w.hits {
		if m >= 1 && m <= len(per) && m-1 < len(w.costs) {
			per[m-1] = float64(h) * w.costs[m-1]
			total += per[m-1]
		}
	}
	dearest := 0
	for i, c := range per {
		if c > per[dearest] {
			dearest = i
		}
	}
	var dropped []string
	for i, c := range per {
		if i == dearest || (total > 0 && c >= total/float64(2*len(per))) {
			a.banned[a.targets[i].Func] = true
			dropped = append(dropped, displayName(a.targets[i].Func))
		}
	}
	slices.Sort(dropped)
	a.dropping = true
	share, _ := w.ledger.window(monoNow())
	a.overBudget++
	a.notes = append(a.notes, fmt.Sprintf("counting calls to %s cost %.1f%% of the target's CPU time over the last %v (budget %.0f%%): not counted any more",
		strings.Join(dropped, ", "), 100*share, costWindow, 100*a.budget))
	if a.overBudget >= 2 && !a.giveUp {
		// Every probe goes with the re-arm due now (next).
		a.giveUp = true
		a.notes = append(a.notes, tooHotNote)
	}
}

// unaffordable says why automatic counting should stop, if it should: too
// many threads for a probe on each, or threads that come and go faster than
// probes can be opened on them.
func (a *armer) unaffordable() string {
	if a.sess == nil || a.giveUp {
		return ""
	}
	st := a.sess.Stats()
	per, slow, inherits := a.sess.ProbeFootprint()
	if inherits {
		// New threads inherit the probes' events: neither their number nor
		// their rate costs anything more.
		if per > maxProbeEvents {
			return fmt.Sprintf("not counting calls with uprobes: %d threads on %d CPUs take %d events per counted function (more than %d); density correction is off (--calls uprobe:F counts chosen functions all the same)",
				st.Threads, a.sess.CPUs(), per, maxProbeEvents)
		}
		if d := a.sess.ReopenCost(1); d > maxArmPause {
			return fmt.Sprintf("not counting calls with uprobes: arming a counter re-opens the events of %d threads on %d CPUs, which would stop sampling for about %v (more than %v); density correction is off (--calls uprobe:F counts chosen functions all the same)",
				st.Threads, a.sess.CPUs(), d.Round(10*time.Millisecond), maxArmPause)
		}
		return ""
	}
	if a.newSince.IsZero() {
		a.newSince, a.newAt = a.start, 0
	}
	if d := time.Since(a.newSince).Seconds(); d >= 0.25 {
		rate := float64(int64(st.ThreadsNew-a.newAt)-startThreads) / d
		if opens := rate * float64(a.sess.CPUs()*max(1, len(a.armed))); opens > maxProbeOpens {
			return fmt.Sprintf("not counting calls with uprobes: the target starts about %.0f threads a second, and each needs probe events of its own, which the kernel sets up one by one in tens of milliseconds while sampling waits; density correction is off (--calls uprobe:F counts chosen functions all the same)", rate)
		}
	}
	if slow > maxSlowCloses {
		return fmt.Sprintf("not counting calls with uprobes: %d threads on %d CPUs take %d uprobe PMU events per counted function, which the kernel sets up and removes one by one in tens of milliseconds while sampling waits (tracefs probes would take one: %s); density correction is off (--calls uprobe:F counts chosen functions all the same)",
			st.Threads, a.sess.CPUs(), slow, a.sess.ProbesWhy())
	}
	if missed := a.sess.Target().Missed; len(a.armed) > 0 && missed > a.missedAtArm+maxMissed {
		return fmt.Sprintf("threads come and go faster than cctop can open counting probes on each (%d ended first): counting stopped, density correction is off, and new threads are sampled from their start again", missed)
	}
	return ""
}

// worthIt reports whether counting picked instead of what is armed covers
// clearly more of the recent profile: re-arming stops sampling while the
// events are reopened (a second or two with many threads), so two sets
// about as hot must not take turns.
func (a *armer) worthIt(b *builder, picked []hpm.Target) bool {
	recent := map[string]int64{}
	for _, f := range a.recent(b) {
		recent[f.Name] += f.Self
	}
	var now, next int64
	for _, f := range a.armed {
		now += recent[f]
	}
	for _, t := range picked {
		next += recent[t.Func]
	}
	return next > now+now/4+10
}

// pick chooses the targets from the profile so far.
func (a *armer) pick(b *builder) []hpm.Target {
	flat := a.recent(b)
	if a.giveUp {
		return nil
	}
	var keep []hpm.FuncSample
	for _, f := range flat {
		if !a.banned[f.Name] {
			keep = append(keep, f)
		}
	}
	k := autoK
	if a.sess != nil {
		// Fewer probes where the threads are many.
		per, slow, _ := a.sess.ProbeFootprint()
		k = min(k, max(1, maxProbeEvents/max(1, per)), max(1, maxSlowCloses/max(1, slow)))
		for k > 1 && a.sess.ReopenCost(k) > maxArmPause {
			k--
		}
	}
	return a.locator.HottestFunctions(keep, k)
}

// next is what the re-arm due now arms: the armed probes less the banned
// ones after a drop, else the hottest functions now.
func (a *armer) next(b *builder) []hpm.Target {
	if a.dropping {
		a.dropping = false
		if a.giveUp {
			return nil
		}
		return slices.DeleteFunc(slices.Clone(a.targets), func(t hpm.Target) bool { return a.banned[t.Func] })
	}
	return a.pick(b)
}

// arm re-opens the events with counters on targets.
func (a *armer) arm(sess *sampler.Session, b *builder, targets []hpm.Target) error {
	targets, entries := placeProbes(targets)
	// Entries of probes armed before stay: the old probes trap until the
	// kernel has unregistered them, which takes a while after their events
	// are closed, and a sample on a function's entry has its caller in the
	// stack words whether a probe is still there or not. The new ones are
	// known before their trial: its probes trap in the samples that
	// Reconfigure drains, the rejected ones too.
	if b.entries == nil {
		b.entries = map[entryKey]bool{}
	}
	for k := range entries {
		b.entries[k] = true
	}
	a.plan.entries = b.entries
	var trial *sampler.ProbeTrial
	if a.plan.auto && len(targets) > 0 {
		// What is armed now was tried, and its cost is measured as it
		// runs: only the new ones are tried.
		var armed, fresh []hpm.Target
		for _, t := range targets {
			if slices.ContainsFunc(a.targets, func(o hpm.Target) bool { return o.Func == t.Func }) {
				armed = append(armed, t)
			} else {
				fresh = append(fresh, t)
			}
		}
		if len(fresh) > 0 {
			fresh, trial = a.affordable(sess, b, fresh)
		}
		targets = append(armed, fresh...)
		if len(targets) == 0 && len(a.targets) == 0 {
			// Nothing armed, nothing to arm: no events to reopen.
			a.armed = []string{}
			a.lastArm = time.Now()
			if a.retry {
				a.lastArm = a.lastArm.Add(time.Second - a.rearm)
				a.retry, a.quiet = false, 0
			}
			return nil
		}
	}
	// The kept probes' trial events close after they have events of their
	// own, so that their uprobes stay registered; on a goroutine, as the
	// last close of a probe waits for the kernel to unregister it.
	defer sess.Background(trial.Close)
	members := make([]sampler.EventSpec, len(targets))
	for i, t := range targets {
		members[i] = t.Spec()
	}
	a.missedAtArm = sess.Target().Missed
	a.newSince, a.newAt = time.Now(), sess.Stats().ThreadsNew
	drained, err := sess.Reconfigure(members)
	b.handle(drained)
	if err != nil {
		if b.weights != nil {
			// The sampler went back to the events it had: reopened, so
			// their counters restarted too.
			b.weights.reset(sess.Generation())
		}
		return err
	}
	a.lastArm = time.Now()
	a.seen, a.seenTree = map[hpm.FuncSample]int64{}, b.tree
	for _, f := range flatSamples(b.tree) {
		a.seen[hpm.FuncSample{Name: f.Name, Module: f.Module}] += f.Self
	}
	a.armed = names(targets)
	a.targets = targets
	a.plan.targets = targets
	if len(targets) == 0 {
		a.plan.targets = nil
	}
	if b.weights != nil {
		b.weights.reset(sess.Generation())
		b.weights.setMembers(targets, a.plan.hitCost)
	}
	return nil
}

// affordable keeps the targets whose calls the budget can pay for, hottest
// first, from a short trial count of their calls on the target's busiest
// threads: a probe costs every call a trap into the kernel (plan.hitCost),
// and one on a function called millions of times a second would slow the
// target down several times over before the overhead could be seen in the
// profile. The trial is paid from the budget too: it runs only where the
// ledger has room for its worst case, and what it cost is booked. The
// declined probes' events close at once, so that their int3s leave the
// target's code; the kept ones' stay open, returned, until the caller has
// armed them. Where no trial can run or tell, nothing is armed: a probe
// armed untried could cost many times the budget before its cost showed.
func (a *armer) affordable(sess *sampler.Session, b *builder, targets []hpm.Target) ([]hpm.Target, *sampler.ProbeTrial) {
	if b.weights != nil && !b.weights.ledger.trialRoom(monoNow(), a.budget, trialWindow) {
		a.retry = true // once the window has room
		return nil, nil
	}
	specs := make([]sampler.EventSpec, len(targets))
	for i, t := range targets {
		specs[i] = t.Spec()
	}
	tids := sess.BusiestThreads(trialThreads)
	// Breakpoints first: they trap in the watched threads only, and leave
	// with their events; a uprobe traps in every thread until the kernel
	// has unregistered it, a grace period or two after its last close.
	a.plan.settleCosts()
	if a.plan.costBreakpoint > 0 && !a.noBreakpoints {
		keep, err := a.trialEach(sess, b, targets, specs, tids)
		if err == nil {
			return keep, nil
		}
		a.noBreakpoints = true
		a.notes = append(a.notes, "trials count calls with uprobes: "+err.Error())
	}
	trial, err := sess.TrialProbes(specs, tids, trialWindow)
	if err != nil || trial.CPU < trialWindow/10 {
		// No thread ran enough to tell.
		if trial != nil {
			sess.Background(trial.Close)
		}
		return nil, nil
	}
	// One window for all: the probes' traps slowed the threads alike.
	var all float64
	for i, h := range trial.Hits {
		all += float64(h) * float64(a.plan.hitCost(targets[i]))
	}
	share := min(all/float64(trial.CPU), 0.99)
	counts := make([]trialCount, len(targets))
	for i, h := range trial.Hits {
		counts[i] = trialCount{hits: h, clean: float64(trial.CPU) * (1 - share)}
	}
	keep := a.judge(targets, counts)
	if b.weights != nil {
		b.weights.ledger.addTrial(monoNow(), share, trialWindow, trial.CPU)
	}
	kept := make([]bool, len(targets))
	for i, t := range targets {
		kept[i] = slices.ContainsFunc(keep, func(k hpm.Target) bool { return k == t })
	}
	trial, declined := trial.Split(kept)
	sess.Background(declined.Close)
	return keep, trial
}

// trialEarly is when a breakpoint trial looks at its counts first, and
// stops if they already say the function is far too hot to count.
const trialEarly = 2 * time.Millisecond

// trialEach counts each target's calls with a hardware breakpoint of its
// own, one after the other: in one window with the others, a function
// called thousands of times a ms kept the threads trapping nearly all the
// time, and the calls of the others, made in what time was left, could not
// be told apart from noise (Python's _Py_dg_dtoa showed 40 calls a ms of
// its 490). Each window stops at trialEarly where its function is clearly
// over budget, so the hottest costs 2 ms, not 20. What the windows cost the
// watched threads is booked.
func (a *armer) trialEach(sess *sampler.Session, b *builder, targets []hpm.Target, specs []sampler.EventSpec, tids []int) ([]hpm.Target, error) {
	bp := float64(a.plan.costBreakpoint)
	counts := make([]trialCount, len(targets))
	var spent float64
	for i, t := range targets {
		over := func(h []uint64, cpu time.Duration) bool {
			c := trialCount{hits: h[0], clean: cleanCPU(h[0], cpu, bp)}
			x := c.rate() * float64(a.plan.hitCost(t))
			return cpu >= trialEarly/2 && x/(1+x) > a.budget
		}
		tr, err := sess.TrialBreakpoints(specs[i:i+1], tids, trialWindow, trialEarly, over)
		if err != nil {
			return nil, err
		}
		spent += min(float64(tr.Hits[0])*bp, float64(tr.CPU))
		if tr.CPU < trialEarly/2 {
			counts[i].clean = -1 // no thread ran enough to tell
			continue
		}
		counts[i] = trialCount{hits: tr.Hits[0], clean: cleanCPU(tr.Hits[0], tr.CPU, bp)}
	}
	if b.weights != nil {
		b.weights.ledger.addTrialCost(monoNow(), spent)
	}
	return a.judge(targets, counts), nil
}

// trialCount is what a trial counted of one function: its calls, and the
// CPU time, in ns, the watched threads ran outside the trial's own traps.
type trialCount struct {
	hits  uint64
	clean float64 // <= 0: unknown
}

// rate is calls per ns of the threads' own time.
func (c trialCount) rate() float64 {
	if c.clean <= 0 {
		return math.Inf(1)
	}
	return float64(c.hits) / c.clean
}

// cleanCPU is the threads' CPU time over a window, in ns, less what hits
// traps of cost ns each took of it: the calls were made in the rest, and a
// probe of another kind traps at another cost. At least 1% of it.
func cleanCPU(hits uint64, cpu time.Duration, cost float64) float64 {
	return max(float64(cpu)-float64(hits)*cost, float64(cpu)/100)
}

// judge keeps the targets whose counted calls, at the rate the threads make
// them without the trial's traps, fit half the budget together once
// probed, hottest first, and bans the others with a note.
func (a *armer) judge(targets []hpm.Target, counts []trialCount) []hpm.Target {
	var keep []hpm.Target
	var spent float64 // the kept probes' time per clean CPU time
	var over []string
	for i, t := range targets {
		if counts[i].clean <= 0 {
			continue // not seen: maybe next time
		}
		x := counts[i].rate() * float64(a.plan.hitCost(t))
		// Half the budget: a trial sees one moment of the run, and a
		// phase that calls the function more often costs more (a compiler
		// going from parsing to optimizing). The measured cost (due)
		// catches what the trial missed.
		if sum := spent + x; sum/(1+sum) <= a.budget/2 {
			spent = sum
			keep = append(keep, t)
			continue
		}
		a.banned[t.Func] = true
		over = append(over, fmt.Sprintf("%s (%.0f calls per ms of CPU: %.0f%%)", displayName(t.Func),
			counts[i].rate()*1e6, 100*x/(1+x)))
	}
	a.projected = spent / (1 + spent)
	if len(over) > 0 {
		a.notes = append(a.notes, fmt.Sprintf("not counting calls to %s: counting would cost more than the %.0f%% budget",
			strings.Join(over, ", "), 100*a.budget))
	}
	if len(keep) == 0 && len(a.armed) == 0 {
		a.overBudget++
		if a.overBudget >= 2 {
			a.giveUp = true
			a.notes = append(a.notes, tooHotNote)
		}
	}
	return keep
}

// projectedNote is ", projected N%" where a trial projected the armed
// probes' cost, else "".
func (a *armer) projectedNote() string {
	if a == nil || a.projected <= 0 {
		return ""
	}
	return fmt.Sprintf(", projected %.1f%% by a trial count", 100*a.projected)
}

// budgetOr is the plan's counting budget, or def without a plan.
func (p *Plan) budgetOr(def float64) float64 {
	if p == nil || p.budget <= 0 {
		return def
	}
	return p.budget
}

// displayName is a function's name as notes show it: demangled and short.
func displayName(link string) string { return cct.ShortName(demangle.Filter(link)) }

// recent is each function's self samples since the counters were last
// armed on this tree (all of them on a new tree, after a reset).
func (a *armer) recent(b *builder) []hpm.FuncSample {
	flat := flatSamples(b.tree)
	if a.seenTree == b.tree {
		for i, f := range flat {
			flat[i].Self -= a.seen[hpm.FuncSample{Name: f.Name, Module: f.Module}]
		}
	}
	return flat
}

// flatSamples is the self samples of each function of t.
func flatSamples(t *cct.Tree) []hpm.FuncSample {
	var flat []hpm.FuncSample
	for _, f := range t.Flat() {
		fn := t.Func(f.Func)
		flat = append(flat, hpm.FuncSample{Name: fn.LinkName(), Module: fn.Module, Self: f.Self.Samples})
	}
	return flat
}

func names(ts []hpm.Target) []string {
	n := make([]string, len(ts))
	for i, t := range ts {
		n[i] = t.Func
	}
	slices.Sort(n)
	return n
}
