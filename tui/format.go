package tui

import (
	"cmp"
	"math"
	"strconv"
)

// Column formats. Every number in a column has a fixed width so that the columns line up
// without measuring: the widths below are the widest value each format produces.
const (
	pctWidth    = 6 // "100.0%"
	metricWidth = 7 // "123.4ms", "999.9M"
	diffWidth   = 8 // "+123.4ms": a difference from a base, signed
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

// unit is a scale a figure is shown in from min on: x/div with suffix.
type unit struct {
	min, div float64
	suffix   string
}

// timeUnits scale durations in ns. A value that rounds to 1000 of a unit is shown in
// the next one: "1.00ms", not "1000µs".
var timeUnits = []unit{
	{3600e9, 3600e9, "h"}, {600e9, 60e9, "m"}, {999.5e6, 1e9, "s"}, {999.5e3, 1e6, "ms"}, {999.5, 1e3, "µs"},
}

// countUnits scale counts; below 10,000 a count is shown whole.
var countUnits = []unit{{1e12, 1e12, "T"}, {1e9, 1e9, "G"}, {1e6, 1e6, "M"}, {1e4, 1e3, "k"}}

// scaled is x in the first of units it reaches, with three significant digits; ok is
// false below them all.
func scaled(x float64, units []unit) (s string, ok bool) {
	a := math.Abs(x)
	for _, u := range units {
		if a >= u.min {
			return sig3(x/u.div) + u.suffix, true
		}
	}
	return "", false
}

// formatTime is a duration in ns with three significant digits: "1.23s", "12.0ms", "850µs".
func formatTime(ns float64) string {
	if math.IsNaN(ns) {
		return ""
	}
	if s, ok := scaled(ns, timeUnits); ok {
		return s
	}
	if ns == 0 {
		return "0"
	}
	return strconv.FormatFloat(ns, 'f', 0, 64) + "ns"
}

// formatCount is a count (calls, samples) with k/M/G suffixes: "999", "12.3k", "4.56M".
func formatCount(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	if s, ok := scaled(x, countUnits); ok {
		return s
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

// byteUnits scale sizes in bytes, in powers of 1024; below 1 KiB a size is shown whole.
var byteUnits = []unit{{1 << 40, 1 << 40, "TiB"}, {1 << 30, 1 << 30, "GiB"}, {1 << 20, 1 << 20, "MiB"}, {1 << 10, 1 << 10, "KiB"}}

// formatBytes is a size in bytes: "512B", "12.3KiB", "1.50GiB".
func formatBytes(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	if s, ok := scaled(x, byteUnits); ok {
		return s
	}
	return strconv.FormatFloat(x, 'f', 0, 64) + "B"
}

// valueUnits are the pprof units figures are scaled from: what they measure, and the
// factor to nanoseconds or bytes. Any other unit is a count.
var valueUnits = map[string]struct {
	kind  string // "time" or "size"
	scale float64
}{
	"": {"time", 1}, "nanoseconds": {"time", 1}, "ns": {"time", 1},
	"microseconds": {"time", 1e3}, "us": {"time", 1e3},
	"milliseconds": {"time", 1e6}, "ms": {"time", 1e6},
	"seconds": {"time", 1e9}, "s": {"time", 1e9},
	"bytes": {"size", 1}, "B": {"size", 1},
	"kilobytes": {"size", 1 << 10}, "KiB": {"size", 1 << 10}, "kB": {"size", 1 << 10},
	"megabytes": {"size", 1 << 20}, "MiB": {"size", 1 << 20}, "MB": {"size", 1 << 20},
}

// formatValue is x in a pprof sample type's unit: durations as time, sizes in bytes
// with binary prefixes, anything else as a count.
func formatValue(unit string, x float64) string {
	switch u := valueUnits[unit]; u.kind {
	case "time":
		return formatTime(x * u.scale)
	case "size":
		return formatBytes(x * u.scale)
	}
	return formatCount(x)
}

// formatSigned is s, the formatted x, with a plus sign when x is above 0.
func formatSigned(s string, x float64) string {
	if x > 0 {
		return "+" + s
	}
	return s
}

// formatMetric formats a weight under the snapshot's metric and unit.
func formatMetric(metric, unit string, x float64) string {
	if metric == "time" {
		return formatValue(unit, x)
	}
	return formatCount(x)
}

// metricTitle is the metric column's title: what its figures are.
func metricTitle(metric, unit string) string {
	if metric != "time" {
		return metric
	}
	return cmp.Or(valueUnits[unit].kind, "count")
}

// FormatValue is formatValue for the engine's headless output.
func FormatValue(unit string, x float64) string { return formatValue(unit, x) }

// FormatCount and FormatTime are formatCount and formatTime for the engine's
// status and summary lines, so that figures read the same everywhere.
func FormatCount(x float64) string { return formatCount(x) }
func FormatTime(ns float64) string { return formatTime(ns) }
