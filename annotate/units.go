package annotate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// pprof's formatting of values (internal/measurement: ScaledLabel with
// the "minimum" output unit, its default): bytes and durations scaled to
// the largest unit under the value, two decimals less a trailing ".00";
// other units as plain numbers. cctop's own views format otherwise
// (tui.FormatValue); --list and --disasm print what pprof prints.

type pprofUnit struct {
	name    string
	aliases []string
	factor  float64
}

type pprofUnitType struct {
	def   pprofUnit
	units []pprofUnit
}

var pprofUnitTypes = []pprofUnitType{{
	units: []pprofUnit{
		{"B", []string{"b", "byte"}, 1},
		{"kB", []string{"kb", "kbyte", "kilobyte"}, 1 << 10},
		{"MB", []string{"mb", "mbyte", "megabyte"}, 1 << 20},
		{"GB", []string{"gb", "gbyte", "gigabyte"}, 1 << 30},
		{"TB", []string{"tb", "tbyte", "terabyte"}, 1 << 40},
		{"PB", []string{"pb", "pbyte", "petabyte"}, 1 << 50},
	},
	def: pprofUnit{"B", nil, 1},
}, {
	units: []pprofUnit{
		{"ns", []string{"ns", "nanosecond"}, 1},
		{"us", []string{"μs", "us", "microsecond"}, 1e3},
		{"ms", []string{"ms", "millisecond"}, 1e6},
		{"s", []string{"s", "sec", "second"}, 1e9},
		{"hrs", []string{"hour", "hr"}, 3600e9},
	},
	def: pprofUnit{"s", nil, 1e9},
}}

// PprofFormat formats values of unit as go tool pprof prints them.
func PprofFormat(unit string) Format {
	return func(x float64) string { return scaledLabel(round(x), unit) }
}

func scaledLabel(value int64, unit string) string {
	v, u := scale(value, unit)
	sv := strings.TrimSuffix(fmt.Sprintf("%.2f", v), ".00")
	if sv == "0" || sv == "-0" {
		return "0"
	}
	return sv + u
}

func scale(value int64, unit string) (float64, string) {
	if value < 0 && -value > 0 {
		v, u := scale(-value, unit)
		return -v, u
	}
	name := strings.ToLower(unit)
	if utf8.RuneCountInString(name) > 2 {
		name = strings.TrimSuffix(name, "s")
	}
	for _, ut := range pprofUnitTypes {
		var from *pprofUnit
		for i := range ut.units {
			for _, a := range ut.units[i].aliases {
				if a == name {
					from = &ut.units[i]
				}
			}
		}
		if from == nil {
			continue
		}
		v := float64(value) * from.factor
		var f float64
		var to string
		for _, u := range ut.units {
			if u.factor >= f && v/u.factor >= 1 {
				f, to = u.factor, u.name
			}
		}
		if f == 0 {
			return v / ut.def.factor, ut.def.name
		}
		return v / f, to
	}
	return float64(value), ""
}
