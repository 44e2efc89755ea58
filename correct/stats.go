package correct

import (
	"math"
	"slices"
)

// Summary is the latency statistics of Lee 2015 Table I (min, median, mean, max), which the
// TUI's latency panel shows. The paper's point is the gap between median and mean: a few very
// late samples (GC pauses, lock waits) dominate the mean, and those are the samples the
// latency correction discounts.
type Summary struct {
	N                      int
	Min, Median, Mean, Max float64
}

// Summarize sorts a copy of xs (xs is not modified) and ignores NaN values. The median of an
// even count is the mean of the two middle values. N = 0 gives the zero Summary.
func Summarize(xs []float64) Summary {
	s := make([]float64, 0, len(xs))
	var sum float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			s = append(s, x)
			sum += x
		}
	}
	n := len(s)
	if n == 0 {
		return Summary{}
	}
	slices.Sort(s)
	med := s[n/2]
	if n%2 == 0 {
		med = s[n/2-1]/2 + s[n/2]/2 // halves first: no overflow near MaxFloat64
	}
	return Summary{N: n, Min: s[0], Median: med, Mean: sum / float64(n), Max: s[n-1]}
}
