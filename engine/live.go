package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
	"github.com/cctop/cctop/tui"
)

// Live is a running profile for the TUI. One goroutine, the aggregator,
// runs the sampler and owns the builder; it takes the TUI's actions between
// batches and publishes an immutable snapshot a few times a second. The TUI
// only ever reads the latest snapshot.
type Live struct {
	target string
	// launched: the session started the target, and stops it on Close
	launched bool
	sess     *sampler.Session
	b        *builder
	plan     *Plan
	arm      *armer
	actions  chan tui.Action
	msgs     chan tea.Msg
	poke     chan struct{} // wake's, for the loop after the target's exit

	// owned by the aggregator
	viewState  // the user's choices, as a saved profile's view has them
	paused     bool
	dirty      bool
	lastSnap   time.Time
	refresh    time.Duration // SetRefresh's
	answer     bool          // dirty with what the user waits for: answerEvery
	lastCount  uint64
	lastRateAt time.Time
	rate       float64
	seq        uint64
	start      time.Time // of the profile: the session's, or the last reset's
	threadSel  uint32    // the thread the TUI's filter shows, 0: none
	// timeCfg is the time trigger's sampling configuration, to return to
	// after the calls or exact trigger.
	timeCfg sampler.Config
	// exactRun is the last finished exact-trigger run: calls per node of
	// the tree they were counted in.
	exactRun *exactRun
	// reweighed keeps the calls' sums of reweighedOf between snapshots
	// (calls).
	reweighed   correct.Reweighed
	reweighedOf *correct.Log
	// flow is the live profile's control-flow correction, from the first
	// time it is shown (ToggleFlow).
	flow *liveFlow

	// what the status line last said about the session's events
	toldThreads int
	toldLost    uint64
	lostBase    uint64 // records lost before the profile's last reset or trigger change
	toldTarget  sampler.TargetState
	toldNotes   int // of arm.notes

	mu   sync.Mutex
	snap tui.Snapshot
}

// exactRun is a profile of calls counted one by one.
type exactRun struct {
	tree  *cct.Tree
	calls []float64
}

func newLive(target string, sess *sampler.Session, b *builder, plan *Plan) *Live {
	l := &Live{
		target: target, sess: sess, b: b, plan: plan, arm: newArmer(plan, sess),
		actions: make(chan tui.Action, 16), msgs: make(chan tea.Msg, 16), poke: make(chan struct{}, 1), refresh: DefaultRefresh,
		viewState: newViewState(plan.params, "uncorrected samples", plan.mode), start: time.Now(),
	}
	if b.weights != nil && plan.params.Density {
		l.metric = "calls"
	}
	l.timeCfg = sess.Config()
	// A module loaded aside brings the loop back for the samples that
	// waited on it, even when no more come.
	b.res.OnLoaded(l.wake)
	if plan.trigger != triggerTime {
		// Started on probes: time sampling is cctop's default clock.
		clock, _ := sampler.ParseEvent("cpu-clock")
		l.timeCfg.Leader, l.timeCfg.Freq, l.timeCfg.Period, l.timeCfg.Extra = clock, 999, 0, nil
		l.timeCfg.RingPages = 64
	}
	return l
}

func (l *Live) Snapshot() tui.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.snap
}

func (l *Live) Do(a tui.Action) {
	select {
	case l.actions <- a:
		l.wake()
	default:
		l.send(tui.StatusMsg{Text: "busy: action dropped"})
	}
}

// wake has the aggregator take its actions now: the next batch comes at
// once, though the target is idle, and after the target's exit the loop
// that serves the frozen profile runs. From any goroutine.
func (l *Live) wake() {
	l.sess.Wake()
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// answerEvery spaces the snapshots that answer the user (an action, a
// correction finished, the target stopped): each is a copy of the tree, a
// rebuild of the TUI's rows and a redraw of the screen. New samples alone
// wait for the refresh interval (SetRefresh).
const answerEvery = 200 * time.Millisecond

// DefaultRefresh is how often new samples alone bring a snapshot: perf
// top redraws every 2 s, py-spy top every second. At 5 a second, drawing
// was a third of cctop's own CPU.
const DefaultRefresh = time.Second

// triggerLost is the records lost that make a counting trigger's counts
// short: those since the profile or the trigger began. A time profile's
// loss shows in the lost count alone.
func triggerLost(trigger string, lost uint64) uint64 {
	if trigger == triggerExact || trigger == triggerCalls {
		return lost
	}
	return 0
}

// liveIdlePoll is how long the live reader waits at most while the target
// sends nothing.
const liveIdlePoll = time.Second

// livePoll is how often the live reader reads the rings while samples
// come: the screen shows a snapshot a second (--refresh), and each read is
// a wake of the reader, the aggregator and the runtime's monitor (at 100
// ms, the sampler's default, a tenth of cctop's wake-ups on a busy
// target). A ring that fills a quarter wakes it sooner.
const livePoll = 250 * time.Millisecond

func (l *Live) Msgs() <-chan tea.Msg { return l.msgs }

func (l *Live) send(m tea.Msg) {
	select {
	case l.msgs <- m:
	default:
	}
}

// run is the aggregator: it returns when ctx ends. Between two batches of
// the session it takes the TUI's actions and publishes a snapshot when due.
func (l *Live) run(ctx context.Context) {
	defer func() {
		if l.flow != nil {
			l.flow.close()
		}
		removePerfMaps(l.plan, l.b.res)
	}()
	l.publish()
	procs := newProcGovernor(func() bool { return l.b.pyHoldsP() })
	var err error
	for {
		var n int
		// The builder is read on every batch: Reset replaces it.
		n, err = readNext(ctx, l.sess, l.b, l.arm)
		if n > 0 {
			l.dirty = true
		}
		if err != nil {
			break
		}
		l.tick()
		procs.judge(monoNow())
	}
	l.tellArming()
	if !errors.Is(err, io.EOF) {
		l.send(tui.ErrorMsg{Err: err})
		return
	}
	if !l.sess.Exited() {
		return
	}
	// The last snapshot first: its news (threads gone) must not push the
	// exit off the status line.
	l.publish()
	l.send(tui.StatusMsg{Text: exitReport(l.sess.Config(), l.sess) + ": the profile is frozen; browse and export it"})
	// Keep serving actions (export, toggles) until the TUI quits. A
	// snapshot held back by its 200 ms spacing goes out on the timer.
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-l.poke:
		case <-t.C:
		}
		l.tick()
		if l.dirty {
			t.Reset(max(0, l.due()-time.Since(l.lastSnap)))
		}
	}
}

// tick takes pending actions and publishes a snapshot when due.
func (l *Live) tick() {
	for {
		select {
		case a := <-l.actions:
			l.apply(a)
			l.dirty, l.answer = true, true
			continue
		default:
		}
		break
	}
	l.tellArming()
	if l.flow != nil && l.flow.ready.Load() {
		l.dirty, l.answer = true, true // a correction finished: show it
	}
	if t := l.sess.Target(); t.Stopped != l.toldTarget.Stopped || t.Stops != l.toldTarget.Stops {
		// A stopped target sends no samples: show the stop all the same.
		l.dirty, l.answer = true, true
	}
	if l.dirty && time.Since(l.lastSnap) >= l.due() {
		l.publish()
	}
}

// due is how long after the last snapshot the next may come. A profile's
// first seconds (from the start, or a reset) are shown as they fill: the
// first screen is what the user is waiting for.
func (l *Live) due() time.Duration {
	if l.answer || time.Since(l.start) < fillingFor {
		return min(answerEvery, l.refresh)
	}
	return l.refresh
}

// fillingFor is how long a new profile is refreshed as an answer.
const fillingFor = 2 * time.Second

// SetRefresh sets how often new samples bring a snapshot (DefaultRefresh
// unless set). Call it before Run.
func (l *Live) SetRefresh(d time.Duration) {
	if d > 0 {
		l.refresh = d
	}
}

func (l *Live) apply(a tui.Action) {
	switch a.Kind {
	case tui.SetThread:
		l.threadSel = uint32(a.Value)
		l.lastSnap = time.Time{} // the filter waits for this thread's weights
	case tui.Baseline:
		l.b.baseline, _ = l.viewState.selfWeights(l)
		l.setComparison("baseline")
		l.send(tui.StatusMsg{Text: "baseline taken"})
	case tui.Pause:
		var err error
		if l.paused {
			err = l.sess.Resume()
		} else {
			err = l.sess.Pause()
		}
		if err != nil {
			l.send(tui.ErrorMsg{Err: err})
			return
		}
		l.paused = !l.paused
	case tui.Reset:
		// A new tree and log; the sampler keeps running.
		if l.exactRun == nil && l.b.weights != nil && len(l.b.weights.exact) > 0 {
			l.exactRun = &exactRun{tree: l.b.tree, calls: l.b.weights.exact}
		}
		l.b = successor(l.b, l.plan, l.sess, monoNow())
		l.lostBase = l.sess.Stats().Lost
		l.start = time.Now()
		l.send(tui.StatusMsg{Text: "profile reset"})
	case tui.RateUp, tui.RateDown:
		l.changeRate(a.Kind == tui.RateUp)
	case tui.CycleTrigger:
		l.cycleTrigger()
	case tui.Export:
		l.viewState.export(a.Path, l)
	default:
		l.viewState.act(a, l)
	}
}

// changeRate doubles or halves the sampling frequency by reopening the
// events; the profile so far stays.
func (l *Live) changeRate(up bool) {
	cfg := l.sess.Config()
	if cfg.Period > 0 || !cfg.Leader.IsClock() {
		l.send(tui.StatusMsg{Text: "the rate of this trigger is set by -c"})
		return
	}
	f := cfg.Freq * 2
	if !up {
		f = max(cfg.Freq/2, 1)
	}
	if f > 9999 {
		f = 9999
	}
	err := l.reconfigure(func(c *sampler.Config) { c.Freq = f })
	if l.b.weights != nil {
		// Reopened events, even the old ones after a failure, count
		// from zero.
		l.b.weights.reset(l.sess.Generation())
	}
	if err != nil {
		l.send(tui.ErrorMsg{Err: err})
		return
	}
	l.send(tui.StatusMsg{Text: fmt.Sprintf("sampling at %d Hz", f)})
}

// reconfigure changes the session's sampling configuration; the records
// of the old events go to the builder first.
func (l *Live) reconfigure(change func(*sampler.Config)) error {
	drained, err := l.sess.ReconfigureWith(change)
	l.b.handle(drained)
	return err
}

// The live profile as the view sees it (viewTarget).

func (l *Live) shown() *cct.Tree { return l.b.tree }

// calls weighs the sample log under p: the corrections are the user's to
// switch. The sums are kept from one snapshot to the next and take only
// the entries appended and overwritten since (correct.Reweighed), which a
// log of millions at its cap would otherwise weigh whole every second.
func (l *Live) calls(p correct.Params) []float64 {
	if l.b.weights == nil {
		return nil
	}
	if log := l.b.weights.log; log != l.reweighedOf {
		// A reset's new builder: another log.
		l.reweighed, l.reweighedOf = correct.Reweighed{}, log
	}
	got, _ := l.b.weights.log.ReweightInto(p, &l.reweighed)
	// A copy (resized): the snapshot's, read by the TUI while the sums go on.
	return resized(got, l.b.tree.Len())
}

// flowCalls is the last flow correction of the live profile (liveFlow), of
// its calls under p where calls are counted, of its samples where not; and
// it starts the next one when due. The counted functions are anchored to
// their counts under the density weight, whose unit is calls.
func (l *Live) flowCalls(p correct.Params) []float64 {
	if l.flow == nil {
		l.flow = newLiveFlow()
		l.flow.wake = l.wake
	}
	base := l.calls(p)
	var counts map[string]float64
	if base != nil && p.Density {
		counts = l.b.weights.callCounts()
	}
	fromSamples := base == nil || !hasWeight(base)
	if fromSamples {
		base, counts = selfOf(l.b.tree, func(m cct.Metrics) int64 { return m.Samples }), nil
	}
	l.flow.start(l.b, base, counts, fromSamples)
	return l.flow.weights(l.b, base)
}

// compared has a baseline, taken or not, and an exact run once one ran.
func (l *Live) compared(name string, _ bool, _ correct.Params) ([]float64, bool) {
	switch name {
	case "baseline":
		return l.b.baseline, true
	case "exact run":
		w := l.exactCalls()
		return w, w != nil
	}
	return nil, false
}

func (l *Live) reweighs() bool { return true }

func (l *Live) offCPU() bool { return l.b.off != nil }

func (l *Live) coverage() (correct.Coverage, bool) {
	if l.b.weights == nil {
		return correct.Coverage{}, false
	}
	return l.b.weights.log.Coverage(), true
}

// switchMode starts recording context switches for the off-CPU and wall
// modes, and stops it for cpu (the time off the CPU so far stays in the
// profile). The events are reopened; the profile so far stays.
func (l *Live) switchMode(mode string) error {
	if mode == ModeWall && !l.b.clock {
		return fmt.Errorf("mode wall needs time on the CPU from a clock: this profile samples %s", l.sess.Config().Leader.Name)
	}
	on := mode != ModeCPU
	if on != l.sess.Config().OffCPU {
		start := monoNow()
		if err := l.reconfigure(func(c *sampler.Config) { c.OffCPU = on }); err != nil {
			return fmt.Errorf("mode %s: %w", mode, err)
		}
		if w := l.b.weights; w != nil {
			w.reset(l.sess.Generation())
		}
		if !on {
			// No switch comes now to end what is open.
			l.b.off.threads = map[uint32]*offThread{}
		} else {
			if err := beginOffCPU(l.sess, l.b, start); err != nil {
				return fmt.Errorf("mode %s: %w", mode, err)
			}
			l.arm.switches.restart()
		}
	}
	l.plan.mode = mode
	return nil
}

// save writes the profile so far, its call estimates under p's alpha
// (and its comments saying so).
func (l *Live) save(path string, p correct.Params) error {
	l.b.flushParked()
	if l.b.weights != nil {
		l.b.weights.apply(l.b.tree, p.Alpha)
	}
	plan := *l.plan
	plan.params = p
	rec := &Recording{sess: l.sess, b: l.b, plan: &plan, arm: l.arm, start: l.start, elapsed: time.Since(l.start)}
	meta := profileMeta(l.sess.Config(), rec)
	meta.Comments[0] = "cctop top"
	return lean(func() error { return writeProfile(path, "pprof", l.b.jitExported(), meta) })
}

// exactCalls is the exact run's calls on the current tree's nodes: those
// being counted now under the exact trigger, or else the last exact run,
// matched by call path when the profile was reset since.
func (l *Live) exactCalls() []float64 {
	t := l.b.tree
	if w := l.b.weights; w != nil && len(w.exact) > 0 {
		return resized(w.exact, t.Len())
	}
	if l.exactRun == nil {
		return nil
	}
	if l.exactRun.tree == t {
		return resized(l.exactRun.calls, t.Len())
	}
	return mapOnto(t, l.exactRun.tree, l.exactRun.calls)
}

// publish builds a snapshot.
func (l *Live) publish() {
	if l.flow != nil {
		l.collectFlow()
	}
	l.lastSnap = time.Now()
	l.dirty, l.answer = false, false
	l.seq++
	st := l.sess.Stats()
	l.tellEvents(st)
	now := time.Now()
	if !l.lastRateAt.IsZero() {
		if dt := now.Sub(l.lastRateAt).Seconds(); dt > 0.5 {
			l.rate = float64(st.Samples-l.lastCount) / dt
			l.lastCount, l.lastRateAt = st.Samples, now
		}
	} else {
		l.lastCount, l.lastRateAt = st.Samples, now
	}
	if w := l.b.weights; w != nil && l.params.Density {
		// Until the user picks one (m), calls once any call has been
		// counted, time before: automatic counters may arm late, arm
		// nothing (every hot function too costly to count), or count no
		// call (a function the hot path no longer calls), and the calls
		// metric would show an empty profile.
		m := "time"
		if w.log.Coverage().Enough() {
			m = "calls"
		}
		l.suggestMetric(m)
	}
	state := "live"
	switch {
	case l.sess.Exited():
		state = "target exited"
		if _, killed := l.sess.ExitSignal(); killed {
			state = "target killed"
		}
	case l.sess.Target().Stopped:
		state = "target stopped"
	case l.paused:
		state = "paused"
	}
	l.b.settle(monoNow())
	names := l.b.pyThreadNames(threadNames(l.sess))
	threads := make([]cct.Thread, 0, len(names))
	for _, th := range names {
		threads = append(threads, th)
	}
	tree := l.b.tree.Clone()
	snap := tui.Snapshot{
		Tree:       tree,
		ThreadSelf: l.threadSelf(tree),
		Counters:   l.counters(names),
		Threads:    threads,
		Seq:        l.seq,
		Header: tui.Header{
			Target: l.targetNow(), Threads: st.Threads, Rate: l.rate, Samples: st.Samples,
			Lost: st.Lost, Throttled: st.Throttled, Unwound: l.b.unwound.percent(),
			Folded: l.b.folded, LogDropped: l.logDropped(),
			Counter: strings.TrimPrefix(l.plan.describe(), "call counter: "), CounterBrief: counterBrief(l.plan, l.arm),
			ProbeCost: l.probeCost(), Trigger: l.plan.trigger, TriggerLost: triggerLost(l.plan.trigger, st.Lost-l.lostBase), State: state,
			Waiting: uint64(l.b.parked.samples), Runtime: cmp.Or(l.b.pyHeader(), l.plan.runtime),
		},
	}
	l.viewState.show(&snap, l)
	l.b.showJIT(&snap)
	snap.ReadCode = codeReader(l.sess.PID(), l.sess.Config().AllProcesses)
	if h := &snap.Header; h.DensityWhy != "" && l.arm.armed == nil && l.plan.auto && !l.arm.giveUp {
		// The automatic counters arm after a warm-up: no count yet is
		// no failure.
		h.DensityWhy = "the counters arm after a warm-up"
	}
	l.mu.Lock()
	l.snap = snap
	l.mu.Unlock()
	l.send(tui.SnapshotReadyMsg{})
}

// probeCost is the share of the profile's samples, in percent, taken while
// the kernel handled a counting probe; -1 when no probe is armed and none
// was seen, or when kernel frames are not sampled (the cost is there but
// out of sight: not 0). The builder counts since the last reset, as its
// tree holds.
func (l *Live) probeCost() float64 {
	if !l.sess.KernelFrames() {
		return -1
	}
	return l.b.probeShare(len(l.plan.targets) > 0)
}

func (l *Live) logDropped() uint64 {
	if w := l.b.weights; w != nil {
		return w.log.Dropped()
	}
	return 0
}

// resized is a copy of per-node weights w for a tree of n nodes: the tree
// grows after the weights were summed, and a snapshot owns its slices.
func resized(w []float64, n int) []float64 {
	out := make([]float64, n)
	copy(out, w)
	return out
}

// tellEvents puts what changed in the session since the last snapshot on
// the status line: threads started or gone, records lost.
func (l *Live) tellEvents(st sampler.Stats) {
	if l.toldThreads != 0 && st.Threads != l.toldThreads {
		l.send(tui.StatusMsg{Text: fmt.Sprintf("threads: %d → %d", l.toldThreads, st.Threads)})
	}
	l.toldThreads = st.Threads
	l.tellTarget()
	if st.Lost > l.toldLost {
		l.send(tui.StatusMsg{Text: fmt.Sprintf("%d records lost (the rings filled faster than cctop read them; %d in all): lower the rate with [", st.Lost-l.toldLost, st.Lost)})
		l.toldLost = st.Lost
	}
}

// targetNow is the header's target: over the host, with the processes
// sampled so far.
// codeReader reads process pid's memory (0: the target's), for the JIT
// code the annotate view shows, from the TUI's goroutine: it holds what
// it needs of the session. Over the host, pid 0 is no process.
func codeReader(target int, host bool) func(pid uint32, addr uint64, buf []byte) bool {
	return func(pid uint32, addr uint64, buf []byte) bool {
		p := int(pid)
		if p == 0 {
			if host {
				return false
			}
			p = target
		}
		return symbol.ReadProcessMemory(p, addr, buf)
	}
}

func (l *Live) targetNow() string {
	if !l.sess.Config().AllProcesses {
		return l.target
	}
	n := int(l.sess.Target().Processes)
	return fmt.Sprintf("%s, %d %s sampled", l.target, n, plural(n, "process", "processes"))
}

// tellTarget puts what the target did since the last snapshot on the
// status line: stopped or continued, processes started, programs run.
func (l *Live) tellTarget() {
	t := l.sess.Target()
	if l.sess.Config().AllProcesses {
		// The host's processes are no target's children, nor their
		// programs its: the header counts the processes.
		t.Processes, t.Execs, t.Exec = l.toldTarget.Processes, l.toldTarget.Execs, l.toldTarget.Exec
	}
	for _, ev := range targetNews(l.toldTarget, t) {
		l.send(tui.StatusMsg{Text: "target " + ev})
	}
	l.toldTarget = t
}

// tellArming puts what the automatic counters decided on the status line as
// it happens.
func (l *Live) tellArming() {
	for _, n := range l.arm.notes[l.toldNotes:] {
		l.send(tui.StatusMsg{Text: n})
	}
	l.toldNotes = len(l.arm.notes)
}
