package correct

import (
	"math"
	"testing"
)

func TestTimelineDensities(t *testing.T) {
	tl := NewTimeline(1e9, 4)
	// Thread 1: 100 calls over 1 ms in second 0, 300 over 1 ms in second 2 (two samples).
	tl.Add(1, 0.5e9, 100, 1e6)
	tl.Add(1, 2.1e9, 100, 0.5e6)
	tl.Add(1, 2.9e9, 200, 0.5e6)
	// Thread 2: fewer calls, only second 1; an unknown interval is ignored.
	tl.Add(2, 1.5e9, 10, 1e6)
	tl.Add(2, 1.6e9, -1, 1e6)
	got := tl.Densities(3, 1e6) // calls per ms
	if len(got) != 2 || got[0].TID != 1 || got[1].TID != 2 {
		t.Fatalf("order %+v", got)
	}
	// The window is seconds 0..2: 3 buckets ending at the newest (2).
	want1 := []float64{100, math.NaN(), 300}
	for i, w := range want1 {
		g := got[0].Points[i]
		if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(g-w) > 1e-9) {
			t.Errorf("thread 1 point %d = %v, want %v", i, g, w)
		}
	}
	if p := got[1].Points; !math.IsNaN(p[0]) || p[1] != 10 || !math.IsNaN(p[2]) {
		t.Errorf("thread 2 %v", p)
	}
}

func TestTimelineKeepsWindow(t *testing.T) {
	tl := NewTimeline(10, 3)
	for i := uint64(0); i < 100; i++ {
		tl.Add(7, i*10, float64(i), 1)
	}
	got := tl.Densities(5, 1)
	if len(got) != 1 {
		t.Fatalf("%v", got)
	}
	p := got[0].Points
	// Only the newest 3 buckets (97, 98, 99) are kept.
	if !math.IsNaN(p[0]) || !math.IsNaN(p[1]) || p[2] != 97 || p[4] != 99 {
		t.Errorf("%v", p)
	}
	s := tl.series[7]
	if len(s.calls) != 3 || s.total != 97+98+99 {
		t.Errorf("retained %d buckets, total %v", len(s.calls), s.total)
	}
	// A sample older than the window is dropped, one just inside is kept.
	tl.Add(7, 500, 1, 1)
	tl.Add(7, 970, 1000, 1)
	if p := tl.Densities(3, 1)[0].Points; p[0] != (97+1000)/2.0 {
		t.Errorf("late sample: %v", p)
	}
}

func TestTimelineEmpty(t *testing.T) {
	tl := NewTimeline(1e9, 10)
	if got := tl.Densities(10, 1); got != nil {
		t.Errorf("%v", got)
	}
	tl.Add(1, 5, 10, 0) // no time: no density
	if got := tl.Densities(10, 1); len(got) != 0 {
		t.Errorf("%v", got)
	}
}
