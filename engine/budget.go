package engine

import "time"

// What counting costs the target, measured (issue 29). --budget promises
// that counting calls with uprobes (trials, armed probes) costs the target
// at most that share of its CPU time over any window of costWindow and over
// the whole run. The ledger keeps both sides in buckets of sample time:
//
//   - cost: each probe hit the counters read, times the measured cost of a
//     hit on that probe's instruction (hpm: stepped or emulated), and each
//     trial's: its breakpoints' hits, which trap in the watched threads
//     only, or its uprobes' share of those threads' CPU, scaled to the
//     target's (a uprobe traps in every thread);
//   - CPU: the target's time on the CPU, from the clock leader's own count
//     between a stream's samples (it runs in the kernel too, where the
//     probe's time goes, though kernel samples may be excluded), or the
//     samples' periods where the leader is no clock.
//
// The share is cost over CPU, the probe time being part of that CPU: a
// share is at most 1, and a hit cost measured too high is capped there
// rather than reported as more time than the target ran.

// costWindow is the window the budget holds over, and costBucket its
// resolution.
const (
	costWindow = 2 * time.Second
	costBucket = 100 * time.Millisecond
)

// minWindowCPU is the least CPU time a window needs for its share to count
// towards the worst window: a target that ran 1 ms in two seconds makes any
// probe hit a large share of nothing.
const minWindowCPU = 20 * time.Millisecond

type costSlot struct {
	idx int64 // bucket number: sample time / costBucket
	// probes and trials are the costs of armed probes and of trials
	probes, trials, cpu float64
}

// costLedger is the ledger; the aggregator owns it.
type costLedger struct {
	slots []costSlot
	// runCost and runCPU are over the whole run; trialCost, of them, what
	// trials spent.
	runCost, runCPU, trialCost float64
	// worst is the highest share of a window with minWindowCPU.
	worst   float64
	first   int64  // oldest bucket seen
	firstT  uint64 // the time of the first CPU booked
	last    int64  // newest bucket seen
	checked int64  // newest bucket whose window went into worst
}

func newCostLedger() *costLedger {
	return &costLedger{slots: make([]costSlot, costWindow/costBucket), first: -1, last: -1, checked: -1}
}

func bucketOf(t uint64) int64 { return int64(t / uint64(costBucket)) }

// slot is bucket idx's slot, emptied when it held an older bucket.
func (l *costLedger) slot(idx int64) *costSlot {
	if l.first < 0 {
		l.first = idx
	}
	if idx > l.last {
		l.closeUpTo(idx)
		l.last = idx
	}
	s := &l.slots[int(idx%int64(len(l.slots)))]
	if s.idx != idx {
		if idx < s.idx {
			// Older than the window the ring holds: it counts for
			// the run only.
			return &costSlot{}
		}
		*s = costSlot{idx: idx}
	}
	return s
}

// closeUpTo takes the windows that ended before bucket idx into worst.
func (l *costLedger) closeUpTo(idx int64) {
	if l.last < 0 {
		return
	}
	// Only the window ending at the newest finished bucket can be new: the
	// ones before it were checked when their buckets finished.
	if l.last > l.checked && l.last < idx {
		cost, _, cpu := l.windowEnding(l.last)
		if cpu >= float64(minWindowCPU) {
			l.worst = max(l.worst, shareOf(cost, cpu))
		}
		l.checked = l.last
	}
}

// windowEnding sums the buckets of the window that ends with bucket idx:
// all the cost, the armed probes' part of it, and the CPU.
func (l *costLedger) windowEnding(idx int64) (cost, probes, cpu float64) {
	n := int64(len(l.slots))
	for _, s := range l.slots {
		if s.idx > idx-n && s.idx <= idx {
			cost += s.probes + s.trials
			probes += s.probes
			cpu += s.cpu
		}
	}
	return cost, probes, cpu
}

func shareOf(cost, cpu float64) float64 {
	if cpu <= 0 {
		return 0
	}
	return min(cost, cpu) / cpu
}

// addCPU books ns of the target's CPU time at sample time t.
func (l *costLedger) addCPU(t uint64, ns float64) {
	if ns <= 0 {
		return
	}
	if l.firstT == 0 {
		l.firstT = t
	}
	l.slot(bucketOf(t)).cpu += ns
	l.runCPU += ns
}

// addCost books ns of the armed probes' cost at t.
func (l *costLedger) addCost(t uint64, ns float64) {
	if ns <= 0 {
		return
	}
	l.slot(bucketOf(t)).probes += ns
	l.runCost += ns
}

// addTrial books what a trial cost: share of the watched threads' CPU
// spent in its probes, over window at end, scaled to the target's CPU rate
// of the last window (the trial's probes trap in every thread, not only in
// those it watched).
func (l *costLedger) addTrial(end uint64, share float64, window time.Duration, watched time.Duration) {
	rate := l.cpuRate(end)
	cpu := rate * float64(window)
	if w := float64(watched); w > cpu {
		cpu = w // at least the threads it watched ran that long
	}
	l.addTrialCost(end, share*cpu)
}

// addTrialCost books what a trial cost the threads it watched, measured:
// its breakpoints trapped in those threads only.
func (l *costLedger) addTrialCost(end uint64, ns float64) {
	if ns <= 0 {
		return
	}
	l.slot(bucketOf(end)).trials += ns
	l.runCost += ns
	l.trialCost += ns
}

// cpuRate is the target's CPU time per wall time over the window ending at
// t, or over what of it the ledger saw: how many CPUs the target keeps busy.
func (l *costLedger) cpuRate(t uint64) float64 {
	idx := bucketOf(t)
	_, _, cpu := l.windowEnding(idx)
	if l.firstT == 0 {
		return 0
	}
	// The window's buckets hold what came from their start, or from the
	// first booking, up to t.
	from := max(l.firstT, uint64(max(0, idx-int64(len(l.slots))+1))*uint64(costBucket))
	if t <= from {
		return 0
	}
	return cpu / float64(t-from)
}

// window is the share of the window ending at t that counting cost, and
// the armed probes' part of that cost.
func (l *costLedger) window(t uint64) (share, probes float64) {
	cost, p, cpu := l.windowEnding(bucketOf(t))
	if cost > 0 {
		probes = p / cost
	}
	return shareOf(cost, cpu), probes
}

// overAt says whether the armed probes must go now, as of the newest
// sample booked: over the last window counting spent more than margin of
// budget (the rest is for what the next batch and a re-arm add before the
// probes are gone), and the probes, not a trial, spent most of it; or the
// probes cost more than budget over the last recentSpan, a phase that
// calls them far more often than their trial saw, which would spend a
// window's budget before the window showed it.
func (l *costLedger) overAt(budget, margin float64) bool {
	if l.last < 0 {
		return false
	}
	cost, probes, cpu := l.windowEnding(l.last)
	if probes >= cost/2 {
		if cpu < float64(minWindowCPU) {
			// Too little CPU to say: judge by the cost alone against
			// what a window of minWindowCPU may spend.
			if cost > budget*float64(minWindowCPU) {
				return true
			}
		} else if cost > margin*budget*cpu {
			return true
		}
	}
	var rp, rcpu float64
	for _, s := range l.slots {
		if s.idx > l.last-recentBuckets && s.idx <= l.last {
			rp += s.probes
			rcpu += s.cpu
		}
	}
	return rcpu >= float64(minRecentCPU) && rp > budget*rcpu
}

// recentBuckets is the span overAt checks the probes' rate over, and
// minRecentCPU the CPU time it needs there to tell.
const (
	recentBuckets = 2
	minRecentCPU  = 10 * time.Millisecond
)

// trialRoom says whether a trial of window may run at t: its worst case,
// every thread trapping for the whole window, must fit the budget left in
// the window ending at t, at the target's CPU rate as it was.
func (l *costLedger) trialRoom(t uint64, budget float64, window time.Duration) bool {
	cost, _, cpu := l.windowEnding(bucketOf(t))
	worst := l.cpuRate(t) * float64(window)
	// The window as it is, the trial's time added: early in a run it
	// holds less than costWindow of the target's CPU, and the promise is
	// a share of what the target ran. With dropMargin's room to spare:
	// the window's CPU to come is a guess from its past, and a starved
	// target (CI's race runs: 2.7 s of CPU in 6.1 s) ran less than it had.
	return cost+worst <= dropMargin*budget*(cpu+worst)
}

// run is the share over the whole run.
func (l *costLedger) run() float64 { return shareOf(l.runCost, l.runCPU) }

// worstWindow is the highest share of any window so far, the one running
// now included. A window that reaches back before the run holds only what
// the target ran since it began, and so is held to the budget of that.
func (l *costLedger) worstWindow() float64 {
	w := l.worst
	if l.last >= 0 {
		if cost, _, cpu := l.windowEnding(l.last); cpu >= float64(minWindowCPU) {
			w = max(w, shareOf(cost, cpu))
		}
	}
	return w
}
