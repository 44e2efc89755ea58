package correct

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

func TestWeight(t *testing.T) {
	raw := Params{}
	den := Params{Density: true}
	lat := func(a float64) Params { return Params{Latency: true, Alpha: a} }
	both := func(a float64) Params { return Params{Density: true, Latency: true, Alpha: a} }
	tests := []struct {
		name                   string
		p                      Params
		calls, lambda, latency float64
		want                   float64
	}{
		{"raw ignores everything", raw, 8, 1e6, 2.5e5, 1},
		{"raw unknown calls is still a sample", raw, -1, 0, -1, 1},
		{"density is calls", den, 8, 1e6, 2.5e5, 8},
		{"density unknown calls", den, -1, 1e6, 0, 0},
		{"density NaN calls", den, math.NaN(), 1e6, 0, 0},
		{"density zero calls", den, 0, 1e6, 0, 0},
		// 1e6/(1e6+1*2.5e5) = 1e6/1.25e6 = 0.8
		{"latency alpha 1", lat(1), 8, 1e6, 2.5e5, 0.8},
		// latency ignores calls, even unknown ones: 0.8 as above
		{"latency ignores calls", lat(1), -1, 1e6, 2.5e5, 0.8},
		// 8 * 1e6/(1e6+2.5e5) = 8 * 0.8 = 6.4
		{"both alpha 1", both(1), 8, 1e6, 2.5e5, 6.4},
		// 8 * 1e6/(1e6+1000*250) = 8 * 1e6/1.25e6 = 6.4
		{"both alpha 1000 latency 250", both(1000), 8, 1e6, 250, 6.4},
		// 8 * 1e6/(1e6+1000*1000) = 8 * 0.5 = 4
		{"both alpha 1000 latency 1000", both(1000), 8, 1e6, 1000, 4},
		// Paper §3.2 simplified: calls/(10000+latency) at lambda 1e7, alpha 1000:
		// 500/(10000+10000) = 0.025; ours is that times lambda/1000 = 1e4: 250.
		// Directly: 500 * 1e7/(1e7+1000*1e4) = 500 * 0.5 = 250.
		{"paper simplified form", both(PaperAlpha), 500, 1e7, 1e4, 250},
		// no latency: factor 1e6/1e6 = 1
		{"both zero latency", both(1000), 8, 1e6, 0, 8},
		{"both negative latency is 0", both(1000), 8, 1e6, -5, 8},
		{"both unknown lambda", both(1000), 8, 0, 2.5e5, 8},
		{"both negative lambda", both(1000), 8, -1, 2.5e5, 8},
		{"alpha 0: no latency effect", both(0), 8, 1e6, 2.5e5, 8},
		{"negative alpha counts as 0", both(-3), 8, 1e6, 2.5e5, 8},
		{"NaN alpha counts as 0", both(math.NaN()), 8, 1e6, 2.5e5, 8},
		// 3 * 1/(1+Inf) = 0
		{"infinite alpha", both(math.Inf(1)), 3, 1e6, 1, 0},
		{"infinite alpha, no latency", both(math.Inf(1)), 3, 1e6, 0, 3},
		{"both unknown calls", both(1000), -1, 1e6, 0, 0},
	}
	for _, tt := range tests {
		if got := Weight(tt.p, tt.calls, tt.lambda, tt.latency); !near(got, tt.want) {
			t.Errorf("%s: Weight(%v, %g, %g, %g) = %g, want %g", tt.name, tt.p, tt.calls, tt.lambda, tt.latency, got, tt.want)
		}
	}
}

func TestParams(t *testing.T) {
	d := DefaultParams()
	if !d.Density || !d.Latency || d.Alpha != DefaultAlpha {
		t.Errorf("DefaultParams() = %+v", d)
	}
	for _, tt := range []struct {
		p    Params
		want string
	}{
		{Params{Density: true, Latency: true, Alpha: 1000}, "density+latency alpha=1000"},
		{Params{Density: true, Alpha: 1000}, "density"},
		{Params{Latency: true, Alpha: 2.5}, "latency alpha=2.5"},
		{Params{Latency: true, Alpha: 1e6}, "latency alpha=1000000"},
		{Params{Alpha: 1000}, "raw samples"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// Weight must never be negative or NaN for finite inputs, however extreme, and the latency
// factor never raises a weight.
func TestWeightNeverNegativeOrNaN(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-300, 5e-324, -5e-324, 1e300, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() float64 {
		switch rng.IntN(3) {
		case 0:
			return special[rng.IntN(len(special))]
		case 1:
			return (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.IntN(40)))
		default:
			return math.Float64frombits(rng.Uint64())
		}
	}
	finite := func() float64 {
		for {
			if x := pick(); !math.IsNaN(x) && !math.IsInf(x, 0) {
				return x
			}
		}
	}
	for i := 0; i < 200000; i++ {
		p := Params{Density: rng.IntN(2) == 0, Latency: rng.IntN(2) == 0, Alpha: finite()}
		calls, lambda, latency := finite(), finite(), finite()
		w := Weight(p, calls, lambda, latency)
		if math.IsNaN(w) || w < 0 {
			t.Fatalf("Weight(%+v, %g, %g, %g) = %g", p, calls, lambda, latency, w)
		}
		if hi := Weight(Params{Density: p.Density}, calls, lambda, latency); w > hi {
			t.Fatalf("latency raised Weight(%+v, %g, %g, %g) = %g above %g", p, calls, lambda, latency, w, hi)
		}
	}
}
