package correct

import (
	"cmp"
	"math"
	"slices"
)

// Timeline is each thread's call density over wall-clock time (Lee 2015, Figure 4): calls
// counted and the time they were counted over, summed in fixed buckets, so that a bucket's
// density is calls/time however many samples fell in it. It keeps the newest Keep buckets.
// The zero value is not usable: use NewTimeline.
type Timeline struct {
	bucket uint64 // ns of wall time per bucket
	keep   int
	series map[uint32]*series
	newest int64 // highest bucket index seen; -1 none
}

// series is one thread's buckets lo .. lo+len-1.
type series struct {
	lo          int64
	calls, over []float64
	total       float64 // calls in the retained buckets, for ordering
}

// NewTimeline keeps keep buckets of bucket ns each.
func NewTimeline(bucket uint64, keep int) *Timeline {
	return &Timeline{bucket: max(bucket, 1), keep: max(keep, 1), series: map[uint32]*series{}, newest: -1}
}

// Add counts calls over the interval of over (ns, or any unit the caller keeps) for thread
// tid, in the bucket of time at (ns).
func (t *Timeline) Add(tid uint32, at uint64, calls, over float64) {
	if !(calls >= 0) || !(over > 0) {
		return
	}
	idx := int64(at / t.bucket)
	if idx > t.newest {
		t.newest = idx
	}
	s := t.series[tid]
	if s == nil {
		s = &series{lo: idx}
		t.series[tid] = s
	}
	if idx < s.lo {
		if s.lo-idx+int64(len(s.calls)) > int64(t.keep) {
			return // older than the window
		}
		grow := int(s.lo - idx)
		s.calls = append(make([]float64, grow), s.calls...)
		s.over = append(make([]float64, grow), s.over...)
		s.lo = idx
	}
	for i := s.lo + int64(len(s.calls)); i <= idx; i++ {
		s.calls = append(s.calls, 0)
		s.over = append(s.over, 0)
	}
	if n := len(s.calls) - t.keep; n > 0 {
		for i := 0; i < n; i++ {
			s.total -= s.calls[i]
		}
		s.calls = append(s.calls[:0], s.calls[n:]...)
		s.over = append(s.over[:0], s.over[n:]...)
		s.lo += int64(n)
	}
	i := idx - s.lo
	s.calls[i] += calls
	s.over[i] += over
	s.total += calls
}

// ThreadDensity is one thread's densities, oldest first; NaN where the thread had no
// measured interval.
type ThreadDensity struct {
	TID    uint32
	Points []float64
}

// Densities returns every thread's last n buckets up to the newest bucket of any thread,
// so that all series end at the same moment, busiest thread first. Density is calls per
// unit of over, times scale.
func (t *Timeline) Densities(n int, scale float64) []ThreadDensity {
	out := make([]ThreadDensity, 0, len(t.series))
	order := make([]float64, 0, len(t.series))
	if n <= 0 || t.newest < 0 {
		return nil
	}
	from := t.newest - int64(n) + 1
	for tid, s := range t.series {
		pts := make([]float64, n)
		any := false
		for i := range pts {
			pts[i] = math.NaN()
			j := from + int64(i) - s.lo
			if j >= 0 && j < int64(len(s.calls)) && s.over[j] > 0 {
				pts[i] = s.calls[j] / s.over[j] * scale
				any = true
			}
		}
		if any {
			out = append(out, ThreadDensity{TID: tid, Points: pts})
			order = append(order, s.total)
		}
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(order[b], order[a]); c != 0 {
			return c
		}
		return cmp.Compare(out[a].TID, out[b].TID)
	})
	sorted := make([]ThreadDensity, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}
