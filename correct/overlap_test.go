package correct

import (
	"math"
	"testing"
)

func TestOverlap(t *testing.T) {
	a := map[string]float64{"x": 1, "y": 3}         // shares .25 .75
	b := map[string]float64{"x": 2, "y": 2, "z": 4} // shares .25 .25 .5
	// min(.25,.25) + min(.75,.25) = .5 -> 50; z is only in b.
	for _, tt := range []struct {
		name string
		a, b map[string]float64
		want float64
	}{
		{"identical", a, a, 100},
		{"same shares, other scale", a, map[string]float64{"x": 10, "y": 30}, 100},
		{"disjoint", a, map[string]float64{"p": 1, "q": 5}, 0},
		{"partial", a, b, 50},
		{"partial swapped", b, a, 50},
		{"partial scaled", map[string]float64{"x": 7, "y": 21}, map[string]float64{"x": 0.2, "y": 0.2, "z": 0.4}, 50},
		{"empty", a, nil, 0},
		{"zero total", a, map[string]float64{"x": 0}, 0},
		// negative and NaN values are not weights: b' = {x: 2, y: 2} -> shares .5 .5:
		// min(.25,.5) + min(.75,.5) = .75 -> 75.
		{"non-weights ignored", a, map[string]float64{"x": 2, "y": 2, "w": -4, "v": math.NaN()}, 75},
	} {
		if got := Overlap(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: Overlap = %g, want %g", tt.name, got, tt.want)
		}
	}
	// thirds do not sum to exactly 1 in floating point; the result must still not pass 100.
	third := map[Edge]float64{{"a", "b"}: 1, {"a", "c"}: 1, {"b", "c"}: 1}
	if got := Overlap(third, third); got != 100 {
		t.Errorf("Overlap(thirds, thirds) = %.17g, want 100", got)
	}
}

func TestOverlapSlices(t *testing.T) {
	a := []float64{1, 3}
	b := []float64{2, 2, 4}
	for _, tt := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"identical", a, a, 100},
		{"partial, lengths differ", a, b, 50},
		{"symmetric", b, a, 50},
		{"scale", []float64{3, 9}, []float64{1, 1, 2}, 50},
		{"disjoint", []float64{1, 0}, []float64{0, 1}, 0},
		{"nil", nil, a, 0},
		{"trailing zeros", []float64{1, 3, 0, 0}, a, 100},
	} {
		if got := OverlapSlices(tt.a, tt.b); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: OverlapSlices = %g, want %g", tt.name, got, tt.want)
		}
	}
	// agrees with the map form
	m := func(xs []float64) map[int]float64 {
		r := map[int]float64{}
		for i, x := range xs {
			r[i] = x
		}
		return r
	}
	if x, y := OverlapSlices(a, b), Overlap(m(a), m(b)); math.Abs(x-y) > 1e-12 {
		t.Errorf("OverlapSlices %g != Overlap %g", x, y)
	}
}

func TestDeltaPoints(t *testing.T) {
	a := []float64{1, 3}    // 25% 75%
	b := []float64{2, 2, 4} // 25% 25% 50%
	got := DeltaPoints(a, b, []float64{7})
	want := []float64{0, 50, -50}
	if len(got) != len(want) {
		t.Fatalf("DeltaPoints = %v, want %v", got, want)
	}
	var sum, abs float64
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("DeltaPoints[%d] = %g, want %g", i, got[i], want[i])
		}
		sum += got[i]
		abs += math.Abs(got[i])
	}
	// The deltas sum to 0, and half their absolute sum is what the overlap misses.
	if math.Abs(sum) > 1e-12 || math.Abs(abs/2-(100-OverlapSlices(a, b))) > 1e-9 {
		t.Errorf("sum %g, half abs %g, 100-overlap %g", sum, abs/2, 100-OverlapSlices(a, b))
	}
	// A zero total contributes no shares.
	got = DeltaPoints(nil, []float64{1, 1}, got)
	if len(got) != 2 || got[0] != -50 || got[1] != -50 {
		t.Errorf("DeltaPoints(nil, [1 1]) = %v, want [-50 -50]", got)
	}
}
