package engine

import "testing"

// TestSwitchRateWant: every switch is sampled under the budget; above it, a
// prime period that brings the stacks back under it, kept while the rate
// stays within a factor of two, the budget growing with the CPUs.
func TestSwitchRateWant(t *testing.T) {
	two, many := newSwitchRate(2), newSwitchRate(64)
	for _, c := range []struct {
		r         *switchRate
		rate      float64
		cur, want uint64
	}{
		{two, 500, 1, 1},
		{two, 2000, 1, 1},
		{two, 300_000, 1, 151},   // 150 → the next prime
		{two, 300_000, 151, 151}, // kept
		{two, 200_000, 151, 151}, // 100 wanted: within twice, kept
		{two, 60_000, 151, 31},   // 30 → 31
		{two, 1000, 151, 1},      // under the budget again
		{many, 300_000, 1, 5},    // 64 CPUs: 64,000 stacks/s allowed
		{many, 50_000, 1, 1},
	} {
		if got := c.r.want(c.rate, c.cur); got != c.want {
			t.Errorf("%.0f CPUs' budget, %.0f switches/s from period %d: %d, want %d", c.r.budget/switchBudgetPerCPU, c.rate, c.cur, got, c.want)
		}
	}
	for n, p := range map[uint64]uint64{0: 1, 1: 1, 2: 2, 4: 5, 150: 151, 1000: 1009} {
		if got := nextPrime(n); got != p {
			t.Errorf("nextPrime(%d) = %d, want %d", n, got, p)
		}
	}
}
