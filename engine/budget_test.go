package engine

import (
	"math"
	"testing"
	"time"
)

const ms = uint64(time.Millisecond)

// feedLedger books a target that runs busy CPUs' worth of CPU time from t0 for
// d, sampled every millisecond, with probes costing share of it.
func feedLedger(l *costLedger, t0 uint64, d time.Duration, busy, share float64) uint64 {
	t := t0
	for ; t < t0+uint64(d); t += ms {
		l.addCPU(t, busy*float64(ms))
		l.addCost(t, share*busy*float64(ms))
	}
	return t
}

// TestLedgerShares: the run's share and the worst window are cost over CPU,
// a burst shows in its window and is diluted in the run, and a cost
// booked above the CPU the target ran (a hit cost measured too high) is
// capped at all of it, never reported as more than 100%.
func TestLedgerShares(t *testing.T) {
	l := newCostLedger()
	t0 := uint64(1000 * time.Second)
	now := feedLedger(l, t0, 10*time.Second, 1, 0.01)
	if got := l.run(); math.Abs(got-0.01) > 1e-9 {
		t.Errorf("run share %.4f, want 0.01", got)
	}
	if got := l.worstWindow(); math.Abs(got-0.01) > 1e-9 {
		t.Errorf("worst window %.4f, want 0.01", got)
	}
	// 200 ms at 30%: its 2 s window holds 60 ms of cost against 2 s.
	now = feedLedger(l, now, 200*time.Millisecond, 1, 0.30)
	now = feedLedger(l, now, 3*time.Second, 1, 0.01)
	if got, want := l.worstWindow(), (0.30*0.2+0.01*1.8)/2; math.Abs(got-want) > 0.002 {
		t.Errorf("worst window %.4f, want %.4f", got, want)
	}
	if got := l.run(); got > 0.03 {
		t.Errorf("run share %.4f: the burst is 200 ms of 13 s", got)
	}
	l.addCost(now, 10*float64(costWindow)) // ten times the window's CPU
	if share, probes := l.window(now); share != 1 || probes != 1 {
		t.Errorf("over-booked window: share %v probes %v, want 1 and 1", share, probes)
	}
}

// TestLedgerDropsProbes: overAt turns true once the armed probes spent
// more than the margin of the budget over the last window, not for a
// trial's cost, and not for a cheap probe.
func TestLedgerDropsProbes(t *testing.T) {
	const budget = 0.05
	l := newCostLedger()
	t0 := uint64(50 * time.Second)
	now := feedLedger(l, t0, 3*time.Second, 2, 0.02) // two busy threads, probes at 2%
	if l.overAt(budget, dropMargin) {
		t.Fatal("over budget at 2%")
	}
	// A phase that calls the probed function 20 times as often: 40%.
	var at uint64
	for now2 := now; now2 < now+uint64(time.Second); now2 += ms {
		l.addCPU(now2, 2*float64(ms))
		l.addCost(now2, 0.4*2*float64(ms))
		if l.overAt(budget, dropMargin) {
			at = now2 - now
			break
		}
	}
	// 0.8*5% of 2 s is 80 ms of cost: 2% of the window was paid before,
	// so about (80-40)/(0.38*2) ms ≈ 53 ms after the phase began.
	if at == 0 || at > 100*ms {
		t.Errorf("the 40%% phase went over after %v ms, want within 100 ms", at/ms)
	}
	// A trial's cost alone, though it fills the window, drops nothing.
	l2 := newCostLedger()
	now = feedLedger(l2, t0, 2*time.Second, 1, 0)
	l2.addTrial(now, 1, trialWindow, trialWindow)
	feedLedger(l2, now, time.Millisecond, 1, 0)
	if l2.overAt(0.005, dropMargin) {
		t.Error("a trial's cost dropped the probes")
	}
}

// TestLedgerTrialRoom: a trial runs only where its worst case, every
// thread trapping for the whole trial, fits what the window has left;
// what it cost is booked at the target's CPU rate, not the watched
// threads' alone.
func TestLedgerTrialRoom(t *testing.T) {
	const budget = 0.05
	l := newCostLedger()
	t0 := uint64(7 * time.Second)
	now := feedLedger(l, t0, 300*time.Millisecond, 4, 0) // four busy threads, 300 ms in
	if r := l.cpuRate(now); math.Abs(r-4) > 0.2 {
		t.Errorf("CPU rate %.2f, want 4 busy CPUs from 300 ms of samples", r)
	}
	// The window holds 1.2 s of CPU: a trial's worst case, all four
	// trapping for 20 ms, would be 80 ms of it, over 4% (5% less the margin).
	if l.trialRoom(now, budget, trialWindow) {
		t.Error("room for a trial whose worst case is 6% of what the target ran")
	}
	now = feedLedger(l, now, 1700*time.Millisecond, 4, 0)
	if !l.trialRoom(now, budget, trialWindow) {
		t.Fatal("no room for a trial 2 s in")
	}
	// The trial took half the CPU of the one thread it watched.
	l.addTrial(now, 0.5, trialWindow, trialWindow)
	if got, want := l.trialCost, 0.5*4*float64(trialWindow); math.Abs(got-want) > 0.1*want {
		t.Errorf("trial booked %.0f ns, want %.0f (scaled to the 4 CPUs)", got, want)
	}
	// 40 ms booked of 80% of a 5% budget of 8 s of CPU (323 ms): room for
	// more trials, until their worst cases (80 ms each) fill it.
	n := 0
	for ; l.trialRoom(now, budget, trialWindow) && n < 20; n++ {
		l.addTrial(now, 1, trialWindow, trialWindow)
	}
	if n != 3 {
		t.Errorf("%d worst-case trials fit after the first, want 3", n)
	}
	if w := l.worstWindow(); w < 0.03 || w > 0.04 {
		t.Errorf("worst window %.3f after the trials, want at most the budget", w)
	}
	// Two seconds later the window is clear again.
	now = feedLedger(l, now, costWindow+costBucket, 4, 0)
	if !l.trialRoom(now, budget, trialWindow) {
		t.Error("no room once the trials left the window")
	}
}
