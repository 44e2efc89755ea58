package sampler

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// runsOf is n records from k rings: each ring's a run in time order, the
// runs one after another as a drain copies them, with times repeated
// within and across runs.
func runsOf(rng *rand.Rand, n, k int) []Record {
	rs := make([]Record, 0, n)
	for ring := range k {
		t := uint64(rng.IntN(50))
		for range n / k {
			t += uint64(rng.IntN(3))
			rs = append(rs, Record{Time: t, CPU: uint32(ring), TID: uint32(len(rs))})
		}
	}
	return rs
}

// byTime orders records as the stable sort sortByTime replaced did.
func byTime(x, y Record) int {
	switch {
	case x.Time < y.Time:
		return -1
	case x.Time > y.Time:
		return 1
	}
	return 0
}

// TestSortByTime: a batch's records end in time order, those of one time
// in the order they came, as a stable sort leaves them; a batch already
// in order is left as it is.
func TestSortByTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b Batch
	for _, shape := range []struct{ n, k int }{{0, 1}, {1, 1}, {500, 1}, {500, 2}, {999, 3}, {4096, 64}} {
		for range 20 {
			rs := runsOf(rng, shape.n, shape.k)
			want := slices.Clone(rs)
			slices.SortStableFunc(want, byTime)
			b.Records = rs
			b.sortByTime()
			if !slices.EqualFunc(b.Records, want, func(x, y Record) bool { return x.Time == y.Time && x.TID == y.TID }) {
				t.Fatalf("%d records from %d rings: not in the stable order", shape.n, shape.k)
			}
		}
	}
}

// BenchmarkSortByTime: a live view's batch (450 records from 2 rings, and
// 4096 from 64 rings of a large server) ordered by sortByTime, and by the
// stable sort of the records it replaced, as the reference.
func BenchmarkSortByTime(b *testing.B) {
	for _, shape := range []struct {
		name string
		n, k int
	}{{"450x2", 450, 2}, {"4096x64", 4096, 64}} {
		rs := runsOf(rand.New(rand.NewPCG(5, 6)), shape.n, shape.k)
		work := make([]Record, len(rs))
		b.Run(shape.name+"/keys", func(b *testing.B) {
			var bt Batch
			for b.Loop() {
				copy(work, rs)
				bt.Records = work
				bt.sortByTime()
			}
		})
		b.Run(shape.name+"/stable", func(b *testing.B) {
			for b.Loop() {
				copy(work, rs)
				slices.SortStableFunc(work, byTime)
			}
		})
	}
}
