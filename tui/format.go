package tui

import (
	"math"
	"strconv"
)

// Column formats. Every number in a column has a fixed width so that the columns line up
// without measuring: the widths below are the widest value each format produces.
const (
	pctWidth    = 6 // "100.0%"
	metricWidth = 7 // "123.4ms", "999.9M"
	deltaWidth  = 6 // "+100.0"
)

// formatPct is a share in percent, "12.3%"; "" for NaN so a broken weight shows as blank.
func formatPct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + "%"
}

// formatDelta is a difference of shares in points, signed: "+12.3", "-0.4", "0.0".
func formatDelta(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	s := strconv.FormatFloat(x, 'f', 1, 64)
	switch {
	case s == "0.0" || s == "-0.0":
		return "0.0"
	case x > 0:
		return "+" + s
	}
	return s
}

// formatTime is a duration in ns with three significant digits: "1.23s", "12.0ms", "850µs".
func formatTime(ns float64) string {
	switch a := math.Abs(ns); {
	case math.IsNaN(ns):
		return ""
	case a >= 3600e9:
		return sig3(ns/3600e9) + "h"
	case a >= 600e9:
		return sig3(ns/60e9) + "m"
	// A value that rounds to 1000 of a unit is shown in the next one: "1.00ms", not "1000µs".
	case a >= 999.5e6:
		return sig3(ns/1e9) + "s"
	case a >= 999.5e3:
		return sig3(ns/1e6) + "ms"
	case a >= 999.5:
		return sig3(ns/1e3) + "µs"
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(ns, 'f', 0, 64) + "ns"
}

// formatCount is a count (calls, samples) with k/M/G suffixes: "999", "12.3k", "4.56M".
func formatCount(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x):
		return ""
	case a >= 1e12:
		return sig3(x/1e12) + "T"
	case a >= 1e9:
		return sig3(x/1e9) + "G"
	case a >= 1e6:
		return sig3(x/1e6) + "M"
	case a >= 1e4:
		return sig3(x/1e3) + "k"
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

// sig3 formats x (expected in [1, 1000)) with three significant digits, but never in
// exponent form.
func sig3(x float64) string {
	prec := 2
	switch a := math.Abs(x); {
	case a >= 99.95:
		prec = 0
	case a >= 9.995:
		prec = 1
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// formatMetric formats a weight under the snapshot's metric.
func formatMetric(metric string, x float64) string {
	if metric == "time" {
		return formatTime(x)
	}
	return formatCount(x)
}
