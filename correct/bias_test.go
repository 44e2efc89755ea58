package correct

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCallDensityBias reproduces the reasoning of Lee 2015 §2.3 (Fig. 1, 2) numerically.
// dense() calls compute(1) N times, then sparse() calls compute(2) N times: the true edge
// counts are equal, but the dense phase (call site C) packs its calls twice as tightly, so it
// lasts half as long and a timer gets half as many ticks there. Raw samples come out 1:2
// (overlap with the truth 100*(min(1/3,1/2)+min(2/3,1/2)) = 83.3%); weighting each sample by
// the calls since the thread's previous sample gives 1:1 (overlap ~100%).
func TestCallDensityBias(t *testing.T) {
	const (
		N      = 100000 // calls per phase
		dense  = 100    // ns between calls in the dense phase
		sparse = 200    // ns between calls in the sparse phase
		lambda = 10000  // timer period, ns
		endC   = N * dense
		endD   = endC + N*sparse
	)
	// callsBy is the call counter at time t: calls at dense, 2*dense, ..., endC, then at
	// endC+sparse, ..., endD.
	callsBy := func(t uint64) uint64 {
		if t <= endC {
			return t / dense
		}
		return N + min(t-endC, N*sparse)/sparse
	}
	edgeC := Edge{"dense", "compute"}
	edgeD := Edge{"sparse", "compute"}
	truth := map[Edge]float64{edgeC: N, edgeD: N, {"main", "dense"}: 1, {"main", "sparse"}: 1}

	for _, jitter := range []uint64{0, 3000} {
		rng := rand.New(rand.NewPCG(5, jitter))
		th := Thread{StartsAtZero: true} // counters opened with the thread: first tick counts too
		l := NewLog(0)
		for k := uint64(1); k*lambda <= endD; k++ {
			// The sample is taken up to jitter ns after its tick; cpu-clock counts ns, so the
			// leader and the group times equal the time.
			at := k*lambda + rng.Uint64N(jitter+1)
			iv := th.Next(Reading{Time: at, Period: lambda, Leader: at, Calls: callsBy(at), HasCalls: true, Enabled: at, Running: at})
			edge := int32(0) // C
			if at > endC {
				edge = 1 // D
			}
			l.Append(EntryOf(edge, 0, iv)) // node 0 is the edge to C, node 1 the edge to D
		}
		score := func(p Params) (float64, []float64) {
			w, _ := l.Reweight(p, nil)
			return Overlap(truth, map[Edge]float64{edgeC: w[0], edgeD: w[1]}), w
		}

		raw, w := score(Params{})
		if r := w[1] / w[0]; math.Abs(r-2) > 0.01 {
			t.Errorf("jitter %d: raw samples D:C = %g, want 2", jitter, r)
		}
		if math.Abs(raw-83.33) > 0.2 {
			t.Errorf("jitter %d: raw overlap %.2f%%, want ~83.33%%", jitter, raw)
		}
		den, w := score(Params{Density: true})
		if r := w[1] / w[0]; math.Abs(r-1) > 0.01 {
			t.Errorf("jitter %d: density-weighted D:C = %g, want 1", jitter, r)
		}
		if den < 99.5 {
			t.Errorf("jitter %d: density overlap %.2f%%, want ~100%%", jitter, den)
		}
		// Latency here is small and unrelated to the phases; it must not undo the density
		// correction.
		both, _ := score(Params{Density: true, Latency: true, Alpha: 1})
		if both < 99 {
			t.Errorf("jitter %d: density+latency overlap %.2f%%, want ~100%%", jitter, both)
		}
		t.Logf("jitter %d: overlap with truth: raw %.2f%%, density %.2f%%, density+latency(alpha 1) %.2f%%", jitter, raw, den, both)
	}
}
