package correct

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLatencyHistSummary(t *testing.T) {
	var h LatencyHist
	r := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for i := 0; i < 20000; i++ {
		// Mostly tens of µs, a tail of ms: the mean sits far above the median.
		x := 20e3 + r.ExpFloat64()*10e3
		if i%50 == 0 {
			x = 5e6 * r.Float64()
		}
		xs = append(xs, x)
		h.Add(x)
	}
	h.Add(-1)
	h.Add(math.NaN())
	got, want := h.Summary(), Summarize(xs)
	if got.N != want.N || got.Min != want.Min || got.Max != want.Max || math.Abs(got.Mean-want.Mean) > 1e-6*want.Mean {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// Quarter octaves: the median is within 19% (one bucket).
	if rel := math.Abs(got.Median-want.Median) / want.Median; rel > 0.19 {
		t.Errorf("median %v, exact %v (%.1f%% off)", got.Median, want.Median, 100*rel)
	}
}

func TestLatencyHistOctaves(t *testing.T) {
	var h LatencyHist
	if c, e := h.Octaves(); c != nil || e != nil {
		t.Fatal("empty histogram has octaves")
	}
	if s := h.Summary(); s != (Summary{}) {
		t.Errorf("%+v", s)
	}
	for _, x := range []float64{10, 100, 130, 1000, 1000, 1000} {
		h.Add(x)
	}
	counts, edges := h.Octaves()
	if len(edges) != len(counts)+1 || !slices.IsSorted(edges) {
		t.Fatalf("counts %v edges %v", counts, edges)
	}
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total != 6 || edges[0] != 0 || counts[0] != 1 {
		t.Errorf("counts %v edges %v", counts, edges)
	}
	// Each value lies in its octave.
	for _, x := range []float64{100, 130, 1000} {
		i := slices.IndexFunc(edges[1:], func(e float64) bool { return e > x })
		if i < 0 || counts[i] == 0 {
			t.Errorf("%v not counted in [%v, %v)", x, edges[i], edges[i+1])
		}
	}
	if s := h.Summary(); s.Median < s.Min || s.Median > s.Max {
		t.Errorf("median %v outside [%v, %v]", s.Median, s.Min, s.Max)
	}
}
