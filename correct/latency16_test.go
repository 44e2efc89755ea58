package correct

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLat16: the latency column keeps every latency from 2^-20 to 2^42
// within 2^-11 of its value (integers below 2048 and powers of two
// exactly), in order; zero, what is not a number >= 0, and what is too
// large or too small have their codes.
func TestLat16(t *testing.T) {
	for _, c := range []struct {
		in   float32
		want float64
	}{
		{0, 0},
		{-1, -1},
		{-0.5, -1},
		{float32(math.NaN()), -1},
		{float32(math.Inf(-1)), -1},
		{1e-7, 0}, // below 2^-20: no latency
		{1, 1},
		{1 << 18, 1 << 18},
		{2047, 2047},
		{float32(math.Inf(1)), lat16Max.float()},
		{1e20, lat16Max.float()},
	} {
		if got := toLat16(c.in).float(); got != c.want {
			t.Errorf("toLat16(%g) = %g, want %g", c.in, got, c.want)
		}
	}
	if m := lat16Max.float(); m < 8e12 || m > 9e12 {
		t.Errorf("largest latency %g, want about 8.8e12", m)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		v := float32(math.Exp2(rng.Float64()*62 - 20))
		got := toLat16(v).float()
		if rel := math.Abs(got-float64(v)) / float64(v); rel > 1.0/2048 {
			t.Fatalf("toLat16(%g) = %g: off by %.3g of it", v, got, rel)
		}
		if float32(got) != toLat16(v).value() {
			t.Fatalf("value %g, float %g", toLat16(v).value(), got)
		}
	}
	prev := lat16(0)
	for v := float32(1e-6); v < 1e13; v *= 1.0003 {
		c := toLat16(v)
		if c < prev || c == lat16Unknown {
			t.Fatalf("toLat16(%g) = %#x after %#x", v, c, prev)
		}
		prev = c
	}
}
