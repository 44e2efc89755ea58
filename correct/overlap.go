package correct

// Edge is a DCG edge by function name, the key for comparing call graphs across runs, where
// node and edge ids are not shared.
type Edge struct{ Caller, Callee string }

// Overlap is the Arnold-Grove overlap used by Lee 2015 (§5) to score a profile against the
// exact one: 100 * sum over keys in both of min(a[k]/A, b[k]/B), A and B the totals. It is
// 100 for profiles with the same shares, 0 for disjoint ones, symmetric, and blind to scale,
// so raw sample counts compare directly with weighted call counts. 0 if either total is 0.
// Non-positive and NaN values count as absent (they are not weights). The result is clamped
// to 100 against rounding.
func Overlap[K comparable](a, b map[K]float64) float64 {
	A, B := mapTotal(a), mapTotal(b)
	if A == 0 || B == 0 {
		return 0
	}
	if len(b) < len(a) { // probe the smaller map
		a, b, A, B = b, a, B, A
	}
	var s float64
	for k, x := range a {
		if !(x > 0) {
			continue
		}
		if y := b[k]; y > 0 {
			s += min(x/A, y/B)
		}
	}
	return clamp100(s * 100)
}

func mapTotal[K comparable](m map[K]float64) float64 {
	var t float64
	for _, x := range m {
		if x > 0 {
			t += x
		}
	}
	return t
}

// OverlapSlices is Overlap keyed by index, for profiles that share ids (one CCT under two
// Params, or a tree and its baseline). Lengths may differ; a missing index counts as 0.
func OverlapSlices(a, b []float64) float64 {
	A, B := sliceTotal(a), sliceTotal(b)
	if A == 0 || B == 0 {
		return 0
	}
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s float64
	for i, x := range a {
		if y := b[i]; x > 0 && y > 0 {
			s += min(x/A, y/B)
		}
	}
	return clamp100(s * 100)
}

func sliceTotal(xs []float64) float64 {
	var t float64
	for _, x := range xs {
		if x > 0 {
			t += x
		}
	}
	return t
}

func clamp100(x float64) float64 {
	if x > 100 {
		return 100
	}
	return x
}

// DeltaPoints is the per-node delta of design §4: the share of k under a minus its share
// under b, in percentage points, written to dst (grown to max(len(a), len(b)), reusing its
// capacity). Shares are of the positive totals as in Overlap; with a zero total every share
// under that profile is 0. The deltas sum to 0 when both totals are positive, and half the
// sum of their absolute values is 100 - OverlapSlices(a, b).
func DeltaPoints(a, b []float64, dst []float64) []float64 {
	dst = zeroed(dst, max(len(a), len(b)))
	if A := sliceTotal(a); A > 0 {
		for i, x := range a {
			if x > 0 {
				dst[i] = 100 * x / A
			}
		}
	}
	if B := sliceTotal(b); B > 0 {
		for i, y := range b {
			if y > 0 {
				dst[i] -= 100 * y / B
			}
		}
	}
	return dst
}
