package correct

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReweightInto: a Reweighed brought up to date after each round of
// appends answers as Reweight over the whole log does, under each Params,
// through a ring that overwrites, contexts whose every entry it drops
// (weighing 0, not what rounding leaves), a change of Params, a Remap, a
// Reset and a round longer than the overwritten entries the log keeps; and
// most rounds are taken by difference, not by weighing the log anew.
func TestReweightInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, p := range allParams {
		l := NewLog(5000)
		var r Reweighed
		byDiff := 0
		for round := range 200 {
			n := rng.IntN(300)
			switch round {
			case 50:
				n = graveCap + 100 // more than the grave keeps
			case 80:
				l.Remap(func(node int32) int32 { return node / 2 })
			case 120:
				l.Reset()
			}
			// The contexts move on as the rounds go: the ring drops every
			// entry of the early ones.
			for range n {
				e := Entry{Node: int32(round + rng.IntN(12)), Calls: float32(rng.IntN(2000)) / 3, Lambda: 1e6, Latency: float32(rng.ExpFloat64() * 2e4)}
				if rng.IntN(10) == 0 {
					e.Calls, e.Latency = -1, -1
				}
				l.Append(e)
			}
			before := r.updates
			got, gotTotal := l.ReweightInto(p, &r)
			if r.updates > before {
				byDiff++
			}
			want, wantTotal := l.Reweight(p, nil)
			if len(got) != len(want) || !closeTo(gotTotal, wantTotal, wantTotal) {
				t.Fatalf("%+v round %d: %d nodes total %g, Reweight's %d total %g", p, round, len(got), gotTotal, len(want), wantTotal)
			}
			for i := range want {
				if (want[i] == 0) != (got[i] == 0) || !closeTo(got[i], want[i], wantTotal) {
					t.Fatalf("%+v round %d: node %d weighs %g, Reweight says %g", p, round, i, got[i], want[i])
				}
			}
		}
		if byDiff < 150 {
			t.Errorf("%+v: %d of 200 rounds taken by difference", p, byDiff)
		}
	}
	// Another Params weighs anew.
	l := NewLog(100)
	randomLogShape(rng, l, 300, 10, 0)
	var r Reweighed
	l.ReweightInto(Params{}, &r)
	got, _ := l.ReweightInto(Params{Density: true}, &r)
	want, _ := l.Reweight(Params{Density: true}, nil)
	for i := range want {
		if !closeTo(got[i], want[i], 1) {
			t.Fatalf("after a change of Params: node %d weighs %g, want %g", i, got[i], want[i])
		}
	}
}

// closeTo compares sums that rounding may leave apart: by the total they
// are parts of.
func closeTo(a, b, total float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(total))
}

// BenchmarkReweightInto: a second of a live view with a log at its 2M cap,
// 4,000 samples appended and as many overwritten, weighed by difference,
// against weighing the whole log (Reweight) as the reference.
func BenchmarkReweightInto(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	l := NewLog(2_000_000)
	randomLogShape(rng, l, 2_000_000, 5000, 0)
	p := Params{Density: true, Latency: true, Alpha: 1}
	b.Run("difference", func(b *testing.B) {
		var r Reweighed
		l.ReweightInto(p, &r)
		for b.Loop() {
			randomLogShape(rng, l, 4000, 5000, 0)
			l.ReweightInto(p, &r)
		}
	})
	b.Run("whole", func(b *testing.B) {
		var dst []float64
		for b.Loop() {
			randomLogShape(rng, l, 4000, 5000, 0)
			dst, _ = l.Reweight(p, dst)
		}
	})
}
