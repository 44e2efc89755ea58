package correct

import (
	"math"
	"slices"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tt := range []struct {
		name string
		xs   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{4}, Summary{N: 1, Min: 4, Median: 4, Mean: 4, Max: 4}},
		// sorted 1 3 5: median 3, mean 9/3 = 3
		{"odd", []float64{5, 1, 3}, Summary{N: 3, Min: 1, Median: 3, Mean: 3, Max: 5}},
		// sorted 1 2 10 100: median (2+10)/2 = 6, mean 113/4 = 28.25
		{"even", []float64{10, 100, 1, 2}, Summary{N: 4, Min: 1, Median: 6, Mean: 28.25, Max: 100}},
		// Table I's shape: most samples a few hundred late, one stalled by a pause. Sorted
		// 600 650 700 750 1e6: median 700, mean (2700+1e6)/5 = 200540.
		{"table I shape", []float64{700, 650, 1e6, 600, 750}, Summary{N: 5, Min: 600, Median: 700, Mean: 200540, Max: 1e6}},
		{"NaN ignored", []float64{math.NaN(), 2, 4}, Summary{N: 2, Min: 2, Median: 3, Mean: 3, Max: 4}},
		{"only NaN", []float64{math.NaN()}, Summary{}},
	} {
		in := slices.Clone(tt.xs)
		if got := Summarize(tt.xs); got != tt.want {
			t.Errorf("%s: Summarize = %+v, want %+v", tt.name, got, tt.want)
		}
		if !slices.EqualFunc(in, tt.xs, func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }) {
			t.Errorf("%s: Summarize modified its input: %v -> %v", tt.name, in, tt.xs)
		}
	}
	big := Summarize([]float64{math.MaxFloat64, math.MaxFloat64})
	if big.Median != math.MaxFloat64 {
		t.Errorf("median of two MaxFloat64 = %g", big.Median)
	}
}
