package correct

import "fmt"

// The coverage rule (issue 29): density weights come only from samples that
// carry a call count, and they speak for a profile only when those samples
// are most of it, and enough of them counted a call. A count read for a
// sliver of the run (a trial of counting probes, a counter armed for a
// second and dropped over budget), or a counter on a function called five
// times in the run, would otherwise decide every share, as the only samples
// whose weight is not 0.
const (
	// MinCoverage is the share of a profile's samples that must carry a
	// call count for its density-weighted shares to be shown.
	MinCoverage = 0.5
	// MinCounted is the fewest counted samples that can, and the fewest
	// that must have counted a call: a share of a few dozen samples is
	// noise whatever their coverage.
	MinCounted = 100
)

// Coverage is how many of a profile's samples carry a call count.
type Coverage struct {
	Counted int // samples whose interval has a call count (0 included)
	Weighed int // of those, the ones whose count is not 0
	Samples int // samples in a context, cctop's own probe handling left out
}

// Share is the counted samples' share of all, 0 for none.
func (c Coverage) Share() float64 {
	if c.Samples <= 0 {
		return 0
	}
	return float64(c.Counted) / float64(c.Samples)
}

// Enough says whether the counted samples cover enough of the profile for
// density weights to stand for it.
func (c Coverage) Enough() bool {
	return c.Counted >= MinCounted && c.Weighed >= MinCounted && c.Share() >= MinCoverage
}

// Why is the header's reason when the coverage is not enough ("" when it
// is): e.g. "8% of samples counted, 50% needed".
func (c Coverage) Why() string {
	switch {
	case c.Enough():
		return ""
	case c.Counted == 0:
		return "no sample carries a call count"
	case c.Counted < MinCounted:
		return fmt.Sprintf("%d samples counted, %d needed", c.Counted, MinCounted)
	case c.Share() < MinCoverage:
		return fmt.Sprintf("%.0f%% of samples counted, %.0f%% needed", 100*c.Share(), 100*MinCoverage)
	}
	return fmt.Sprintf("only %d counted a call, %d needed", c.Weighed, MinCounted)
}
