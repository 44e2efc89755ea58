// Package correct owns the bias correction of timer-driven call profiles (design §4, after
// Lee 2015): the per-thread intervals between samples (calls_i, lambda_i, delta_i,
// latency_i), the weight of one sample under the density and latency toggles and alpha, the
// compact per-sample log that lets a toggle or a new alpha re-weight a whole profile in place,
// the overlap and per-node deltas between two profiles, and latency statistics.
//
// It is pure: no I/O, no system calls, no locking. A Thread or a Log has one owner.
package correct

import (
	"strconv"
	"strings"
)

// PaperAlpha is the sampling latency factor Lee 2015 settled on for yield-point sampling.
const PaperAlpha = 1000.0

// DefaultAlpha is the alpha a profile starts with: 0, the value the alpha sweep of
// `cctop eval` found best on every built-in workload (see README.md). The paper's 1000 was
// tuned for Jikes RVM's yield points, where a sample waits for the next yield point; a kernel
// timer samples the interrupted instruction itself, and what delta - lambda measures here is
// mostly ticks the kernel skipped (in kernel mode, under user-only sampling), whose calls the
// density weight already assigns to the next sample. Weighting those samples down again
// undercounts them. It stays a variable so that tests and the eval can set it.
var DefaultAlpha = 0.0

// Params are the live correction settings. They apply to samples already taken, through Log.
type Params struct {
	Density bool    // weight by calls_i
	Latency bool    // divide by (lambda + alpha*latency)/lambda
	Alpha   float64 // negative or NaN counts as 0 (no latency effect) so weights stay non-negative
}

// DefaultParams has both corrections on at DefaultAlpha.
func DefaultParams() Params {
	return Params{Density: true, Latency: true, Alpha: DefaultAlpha}
}

// String names the settings for headers and profile comments, e.g.
// "density+latency alpha=1000" or "raw samples".
func (p Params) String() string {
	var parts []string
	if p.Density {
		parts = append(parts, "density")
	}
	if p.Latency {
		parts = append(parts, "latency")
	}
	if len(parts) == 0 {
		return "raw samples"
	}
	s := strings.Join(parts, "+")
	if p.Latency {
		s += " alpha=" + strconv.FormatFloat(p.Alpha, 'f', -1, 64)
	}
	return s
}

// alpha is p.Alpha made safe: a negative alpha would make the latency factor exceed 1 or go
// negative, and NaN would poison every sum.
func (p Params) alpha() float64 {
	if p.Alpha > 0 {
		return p.Alpha
	}
	return 0
}

// Weight is design §4's weight of one sample, in units of calls:
//
//	off/off: 1; density: calls; latency: lambda/(lambda+alpha*latency);
//	both: calls*lambda/(lambda+alpha*latency).
//
// This is the paper's antibias weight rescaled by lambda/1000, so that with density on the
// weights of a profile sum to the calls it observed.
//
// lambda <= 0 means unknown: the latency factor is then 1. latency < 0 is treated as 0 (Log
// uses -1 for "interval unknown"). calls < 0 means no counter reading for this sample and
// gives weight 0 when Density is on: such a sample says nothing about how many calls it stands
// for, and counting it as 1 would mix units.
//
// The factor is computed before multiplying by calls so that huge finite inputs overflow to a
// factor of 0 rather than to Inf/Inf = NaN; Log's re-weighting loops use the same arithmetic
// so that they agree with Weight bit for bit.
func Weight(p Params, calls, lambda, latency float64) float64 {
	w := 1.0
	if p.Density {
		if !(calls >= 0) { // also catches NaN
			return 0
		}
		w = calls
	}
	if p.Latency {
		w *= latencyFactor(p.alpha(), lambda, latency)
	}
	return w
}

// latencyFactor is lambda/(lambda+alpha*latency) with the unknowns mapped to 1. a must be
// >= 0 and not NaN.
func latencyFactor(a, lambda, latency float64) float64 {
	if !(latency > 0) || !(lambda > 0) || a == 0 {
		return 1
	}
	return lambda / (lambda + a*latency)
}
