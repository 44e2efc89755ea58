package correct

import "math"

// lat16 is a latency in the log's column: 2 bytes for what float32 held
// in 4, the largest column of a log of timer samples after the ids. A
// latency weighs through lambda/(lambda+alpha*latency) and its statistics
// (Summarize), so what it needs is relative precision over a wide range,
// not digits: 10 bits of mantissa, rounded to nearest (within 0.05% of
// the value, below the jitter of any clock that measures it), and 6 of
// exponent, 2^-20 to about 8.8e12 in the trigger's unit (a latency of
// 2^-20 ns or cycles is no latency; 8.8e12 ns is two and a half hours).
//
// 0 is zero (and anything below 2^-20); lat16Unknown stands for every
// value that is not a number >= 0, which weights and statistics treat as
// unknown alike; the rest is exponent<<10 | mantissa, the value
// (1 + mantissa/1024) * 2^(exponent-21), exponent 1 to 63.
type lat16 uint16

const (
	lat16Unknown lat16 = 0xFFFF
	lat16Max     lat16 = 0xFFFE // the largest value, for anything above
	lat16Bias          = 21     // exponent 1 is 2^-20
)

// toLat16 is v in the column, rounded to nearest.
func toLat16(v float32) lat16 {
	if !(v >= 0) {
		return lat16Unknown
	}
	bits := math.Float32bits(v)
	exp := int(bits>>23) - 127 + lat16Bias // 0 for zero and subnormals: below 2^-20
	if exp < 1 {
		return 0
	}
	mant := (bits&(1<<23-1) + 1<<12) >> 13 // 23 bits rounded to 10
	if mant == 1<<10 {
		mant, exp = 0, exp+1
	}
	if exp > 63 {
		return lat16Max
	}
	return min(lat16(exp)<<10|lat16(mant), lat16Max)
}

// float is the latency, -1 for unknown.
func (l lat16) float() float64 {
	switch l {
	case 0:
		return 0
	case lat16Unknown:
		return -1
	}
	return l.pos()
}

// positive reports whether the latency is known and above zero: the
// entries whose weight has a latency factor.
func (l lat16) positive() bool { return l-1 < lat16Max }

// pos is a positive latency's value (positive): the code shifted into a
// float32's exponent and mantissa, its bias added, without a branch for
// the weights' loops.
func (l lat16) pos() float64 {
	return float64(math.Float32frombits(uint32(l)<<13 + (127-lat16Bias)<<23))
}

// value is the latency as an Entry holds it.
func (l lat16) value() float32 { return float32(l.float()) }
