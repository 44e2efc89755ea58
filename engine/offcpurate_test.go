package engine

import "testing"

// TestSwitchRateDecide: switch samples stay on under the budget, go off
// above it, and come back only under half of it, the budget growing with
// the CPUs.
func TestSwitchRateDecide(t *testing.T) {
	two, many := newSwitchRate(2), newSwitchRate(64)
	for _, c := range []struct {
		r        *switchRate
		rate     float64
		on, want bool
	}{
		{two, 500, true, true},
		{two, 4000, true, true},
		{two, 4001, true, false},
		{two, 300_000, true, false},
		{two, 3000, false, false}, // between half the budget and the budget: stays off
		{two, 1999, false, true},
		{many, 120_000, true, true},
		{many, 130_000, true, false},
	} {
		if got := c.r.decide(c.rate, c.on); got != c.want {
			t.Errorf("budget %.0f, %.0f switches/s, on %v: %v, want %v", c.r.budget, c.rate, c.on, got, c.want)
		}
	}
}
