package python

import (
	"testing"
	"time"
)

func TestPacer(t *testing.T) {
	const period = 4 * time.Millisecond
	cases := []struct {
		name       string
		passes     int
		passNS     uint64
		wake       uint64
		all        uint64 // the process's CPU time over the window
		want       time.Duration
		wantChange bool
	}{
		// 100 passes of 10 µs and 10 µs of wake: 2 ms of 12 ms, a
		// share of 2/10 of the rest against 0.1: twice the period.
		{"over", 100, 10e3, 10e3, 12e6, 2 * period, true},
		// Ten times over: at most doubled at once.
		{"far over", 100, 10e3, 10e3, 2.2e6 + 2e6, 2 * period, true},
		// 1 ms of 21 ms: 0.05 against 0.1, half the period.
		{"under", 100, 5e3, 5e3, 21e6, period / 2, true},
		{"far under", 10, 1e3, 0, 1e9, period / 2, true},
		// 1 ms of 11 ms: the share, no change.
		{"on budget", 100, 5e3, 5e3, 11e6, 0, false},
		// Without the wakes it would be under budget: the wakes count.
		{"wakes count", 100, 1e3, 9e3, 11e6, 0, false},
		// No process clock: nothing to pace by.
		{"no clock", 100, 10e3, 10e3, 0, 0, false},
	}
	for _, c := range cases {
		var pc pacer
		pc.start(0, 0, c.wake)
		for range c.passes {
			pc.pass(c.passNS)
		}
		if pc.due(paceEvery - 1) {
			t.Errorf("%s: due before paceEvery", c.name)
		}
		if !pc.due(paceEvery) {
			t.Errorf("%s: not due at paceEvery", c.name)
		}
		got, changed := pc.adjust(paceEvery, c.all, period, 0.1)
		if changed != c.wantChange || got != c.want {
			t.Errorf("%s: adjust = %v, %v; want %v, %v", c.name, got, changed, c.want, c.wantChange)
		}
		if pc.own != 0 || pc.at != paceEvery || pc.all != c.all {
			t.Errorf("%s: the next measure does not start afresh: %+v", c.name, pc)
		}
	}
}
