package correct

import "testing"

type step struct {
	name string
	r    Reading
	want Interval
}

func runSteps(t *testing.T, th *Thread, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := th.Next(s.r); got != s.want {
			t.Errorf("%s:\n got %+v\nwant %+v", s.name, got, s.want)
		}
	}
}

func TestThreadNext(t *testing.T) {
	const P = 1e6 // period, ns of cpu-clock
	rd := func(time, leader, calls, enabled, running uint64) Reading {
		return Reading{Time: time, Period: P, Leader: leader, Calls: calls, HasCalls: true, Enabled: enabled, Running: running}
	}
	var th Thread
	runSteps(t, &th, []step{
		{"first sample: nothing to measure against", rd(1000, 1e6, 500, 1e6, 1e6),
			Interval{Calls: -1, Lambda: P, First: true}},
		// leader 1e6 -> 2.3e6: delta 1.3e6, latency 1.3e6-1e6 = 3e5; calls 1500-500 = 1000,
		// not multiplexed (dEnabled = dRunning = 1.3e6); gap 2301000-1000 = 2.3e6.
		{"late sample", rd(2301000, 2.3e6, 1500, 2.3e6, 2.3e6),
			Interval{Calls: 1000, Lambda: P, Delta: 1.3e6, Latency: 3e5, Gap: 2.3e6, HasDelta: true}},
		// calls +1000 over dEnabled 2e6, dRunning 1e6: 1000*2e6/1e6 = 2000; delta 1e6 = lambda:
		// latency 0; gap 4.301e6-2.301e6 = 2e6.
		{"multiplexed", rd(4301000, 3.3e6, 2500, 4.3e6, 3.3e6),
			Interval{Calls: 2000, Lambda: P, Delta: 1e6, Gap: 2e6, HasDelta: true}},
		// delta 0.5e6 < lambda: latency max(0, -0.5e6) = 0.
		{"early sample", rd(4801000, 3.8e6, 2600, 4.8e6, 3.8e6),
			Interval{Calls: 100, Lambda: P, Delta: 0.5e6, Gap: 0.5e6, HasDelta: true}},
		// dRunning 0: the counters never ran, no estimate of calls; delta 0, latency 0.
		{"not running", rd(5801000, 3.8e6, 2600, 5.8e6, 3.8e6),
			Interval{Calls: -1, Lambda: P, Gap: 1e6, HasDelta: true}},
		// calls 2600 -> 2000: the counter went backwards, everything unknown, resync.
		{"calls reset", rd(6801000, 4.8e6, 2000, 6.8e6, 4.8e6),
			Interval{Calls: -1, Lambda: P, Gap: 1e6, Reset: true}},
		// measured from the reset reading: calls 2300-2000 = 300, delta 1e6.
		{"after reset", rd(7801000, 5.8e6, 2300, 7.8e6, 5.8e6),
			Interval{Calls: 300, Lambda: P, Delta: 1e6, Gap: 1e6, HasDelta: true}},
		{"leader backwards", rd(8801000, 1e6, 2400, 8.8e6, 6.8e6),
			Interval{Calls: -1, Lambda: P, Gap: 1e6, Reset: true}},
		{"enabled backwards", rd(9801000, 2e6, 2500, 1e6, 1e6),
			Interval{Calls: -1, Lambda: P, Gap: 1e6, Reset: true}},
		// time went backwards (clock jitter across CPUs): gap 0, counts still measured.
		{"time backwards", rd(9800000, 3e6, 2600, 2e6, 2e6),
			Interval{Calls: 100, Lambda: P, Delta: 1e6, HasDelta: true}},
		{"no counters in this sample", Reading{Time: 10800000, Period: P, Leader: 4e6, Enabled: 3e6, Running: 3e6},
			Interval{Calls: -1, Lambda: P, Delta: 1e6, Gap: 1e6, HasDelta: true}},
		// the previous reading had no counters: calls unknown, base now has them.
		{"counters again", rd(11800000, 5e6, 2700, 4e6, 4e6),
			Interval{Calls: -1, Lambda: P, Delta: 1e6, Gap: 1e6, HasDelta: true}},
		{"and measured", rd(12800000, 6e6, 2750, 5e6, 5e6),
			Interval{Calls: 50, Lambda: P, Delta: 1e6, Gap: 1e6, HasDelta: true}},
	})

	th.Forget()
	runSteps(t, &th, []step{
		{"after Forget: first again", rd(20000000, 7e6, 3000, 6e6, 6e6),
			Interval{Calls: -1, Lambda: P, First: true}},
	})
}

// Readings without group times (read format lacked TOTAL_TIME_*) are used unscaled rather
// than thrown away.
func TestThreadNoTimes(t *testing.T) {
	var th Thread
	runSteps(t, &th, []step{
		{"first", Reading{Time: 1, Period: 100, Leader: 100, Calls: 7, HasCalls: true},
			Interval{Calls: -1, Lambda: 100, First: true}},
		{"second", Reading{Time: 201, Period: 100, Leader: 250, Calls: 19, HasCalls: true},
			Interval{Calls: 12, Lambda: 100, Delta: 150, Latency: 50, Gap: 200, HasDelta: true}},
	})
}

func TestThreadStartsAtZero(t *testing.T) {
	th := Thread{StartsAtZero: true}
	runSteps(t, &th, []step{
		// against an all-zero reading: calls 300 over dEnabled 2.4e6, dRunning 1.2e6 ->
		// 300*2 = 600; delta 1.2e6, latency 1.2e6-1e6 = 2e5; gap unknown: 0.
		{"first from zero", Reading{Time: 5e9, Period: 1e6, Leader: 1.2e6, Calls: 300, HasCalls: true, Enabled: 2.4e6, Running: 1.2e6},
			Interval{Calls: 600, Lambda: 1e6, Delta: 1.2e6, Latency: 2e5, First: true, HasDelta: true}},
		{"second as usual", Reading{Time: 5e9 + 1e6, Period: 1e6, Leader: 2.2e6, Calls: 400, HasCalls: true, Enabled: 3.4e6, Running: 2.2e6},
			Interval{Calls: 100, Lambda: 1e6, Delta: 1e6, Gap: 1e6, HasDelta: true}},
		// a reset resynchronises to the reading; it does not go back to zero.
		{"reset", Reading{Time: 5e9 + 2e6, Period: 1e6, Leader: 1e6, Calls: 10, HasCalls: true, Enabled: 1e6, Running: 1e6},
			Interval{Calls: -1, Lambda: 1e6, Gap: 1e6, Reset: true}},
		{"after reset", Reading{Time: 5e9 + 3e6, Period: 1e6, Leader: 2e6, Calls: 30, HasCalls: true, Enabled: 2e6, Running: 2e6},
			Interval{Calls: 20, Lambda: 1e6, Delta: 1e6, Gap: 1e6, HasDelta: true}},
	})

	// Without counters the first sample still has its delta from zero.
	th2 := Thread{StartsAtZero: true}
	runSteps(t, &th2, []step{
		{"first, no counters", Reading{Time: 9, Period: 1e6, Leader: 1e6, Enabled: 1e6, Running: 1e6},
			Interval{Calls: -1, Lambda: 1e6, Delta: 1e6, First: true, HasDelta: true}},
	})

	// Forget brings StartsAtZero back into play.
	th.Forget()
	runSteps(t, &th, []step{
		{"after Forget", Reading{Time: 1, Period: 1e6, Leader: 1e6, Calls: 5, HasCalls: true},
			Interval{Calls: 5, Lambda: 1e6, Delta: 1e6, First: true, HasDelta: true}},
	})
}

func TestEntryOf(t *testing.T) {
	got := EntryOf(3, 5, Interval{Calls: 8, Lambda: 1e6, Delta: 1.25e6, Latency: 2.5e5, HasDelta: true})
	want := Entry{Node: 3, Thread: 5, Calls: 8, Lambda: 1e6, Latency: 2.5e5}
	if got != want {
		t.Errorf("EntryOf known = %+v, want %+v", got, want)
	}
	got = EntryOf(1, 0, Interval{Calls: -1, Lambda: 1e6, First: true})
	want = Entry{Node: 1, Thread: 0, Calls: -1, Lambda: 1e6, Latency: -1}
	if got != want {
		t.Errorf("EntryOf first = %+v, want %+v", got, want)
	}
}
