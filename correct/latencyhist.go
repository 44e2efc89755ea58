package correct

import "math"

// LatencyHist is the distribution of sampling latencies, kept in constant memory for a live
// profile of any length: exact count, min, mean and max, and a histogram of quarter-octave
// buckets from which the median is read to within a bucket (under 19%). Summarize gives the
// exact median of a slice when the latencies are at hand.
type LatencyHist struct {
	n             uint64
	sum, min, max float64
	counts        [histBuckets]uint64
}

// Buckets: [0, histLow) is bucket 0, then quarter octaves from histLow up; the last bucket
// takes everything above.
const (
	histLow     = 64.0 // ns
	histPerOct  = 4
	histBuckets = 1 + 32*histPerOct
)

func histBucket(x float64) int {
	if x < histLow {
		return 0
	}
	b := 1 + int(math.Floor(math.Log2(x/histLow)*histPerOct))
	return min(max(b, 1), histBuckets-1)
}

// histEdge is the lower edge of bucket b.
func histEdge(b int) float64 {
	if b <= 0 {
		return 0
	}
	return histLow * math.Exp2(float64(b-1)/histPerOct)
}

// Add records one latency (ns). Negative and NaN values (unknown latencies) are skipped.
func (h *LatencyHist) Add(x float64) {
	if !(x >= 0) {
		return
	}
	if h.n == 0 || x < h.min {
		h.min = x
	}
	if h.n == 0 || x > h.max {
		h.max = x
	}
	h.n++
	h.sum += x
	h.counts[histBucket(x)]++
}

// N is how many latencies were added.
func (h *LatencyHist) N() uint64 { return h.n }

// Summary is min, median, mean and max; the median is interpolated inside its bucket and
// clamped to [min, max].
func (h *LatencyHist) Summary() Summary {
	if h.n == 0 {
		return Summary{}
	}
	s := Summary{N: int(h.n), Min: h.min, Max: h.max, Mean: h.sum / float64(h.n)}
	half := float64(h.n) / 2
	var seen float64
	for b, c := range h.counts {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= half {
			lo, hi := histEdge(b), histEdge(b+1)
			s.Median = lo + (hi-lo)*(half-seen)/float64(c)
			break
		}
		seen += float64(c)
	}
	s.Median = min(max(s.Median, s.Min), s.Max)
	return s
}

// Octaves is the histogram at octave resolution from the lowest to the highest non-empty
// octave: counts[i] holds latencies in [edges[i], edges[i+1]).
func (h *LatencyHist) Octaves() (counts []uint64, edges []float64) {
	if h.n == 0 {
		return nil, nil
	}
	// Octave o covers buckets 1+o*per .. o*per+per; bucket 0 ([0, histLow)) is octave -1.
	oct := func(b int) int {
		if b == 0 {
			return -1
		}
		return (b - 1) / histPerOct
	}
	first, last := math.MaxInt, math.MinInt
	for b, c := range h.counts {
		if c > 0 {
			first, last = min(first, oct(b)), max(last, oct(b))
		}
	}
	counts = make([]uint64, last-first+1)
	for b, c := range h.counts {
		if c > 0 {
			counts[oct(b)-first] += c
		}
	}
	edge := func(o int) float64 {
		if o < 0 {
			return 0
		}
		return histLow * math.Exp2(float64(o))
	}
	for o := first; o <= last+1; o++ {
		edges = append(edges, edge(o))
	}
	return counts, edges
}
