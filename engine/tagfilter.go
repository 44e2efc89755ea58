package engine

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// tagFilter keeps or leaves out samples by their labels, as pprof's -tagfocus and
// -tagignore do. An expression is [KEY=]VALUE:
//   - VALUE a numeric range, LO:HI, LO:, :HI or one figure, with an optional unit
//     (b, kb, mb, gb, tb; ns, us, ms, s, m, h): a numeric label (KEY's, or any) in it;
//   - else regular expressions, comma-separated: with KEY, one of them matches one of
//     KEY's values; without, each matches some label as "key:value".
type tagFilter struct {
	focus, ignore func(*profile.Sample) bool
}

func parseTagFilter(focus, ignore string) (*tagFilter, error) {
	var f tagFilter
	var err error
	if focus != "" {
		if f.focus, err = compileTag(focus); err != nil {
			return nil, fmt.Errorf("--tagfocus %q: %v", focus, err)
		}
	}
	if ignore != "" {
		if f.ignore, err = compileTag(ignore); err != nil {
			return nil, fmt.Errorf("--tagignore %q: %v", ignore, err)
		}
	}
	return &f, nil
}

// apply drops p's samples that the filter leaves out.
func (f *tagFilter) apply(p *profile.Profile) {
	kept := p.Sample[:0]
	for _, s := range p.Sample {
		if f.focus != nil && !f.focus(s) {
			continue
		}
		if f.ignore != nil && f.ignore(s) {
			continue
		}
		kept = append(kept, s)
	}
	clear(p.Sample[len(kept):])
	p.Sample = kept
}

func compileTag(expr string) (func(*profile.Sample) bool, error) {
	key, value := "", expr
	if k, v, ok := strings.Cut(expr, "="); ok {
		key, value = k, v
	}
	if value == "" {
		return nil, fmt.Errorf("no value to match")
	}
	if lo, hi, ok, err := parseRange(value); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return func(s *profile.Sample) bool {
			for k, vs := range s.NumLabel {
				if key != "" && k != key {
					continue
				}
				for _, v := range vs {
					if float64(v) >= lo && float64(v) <= hi {
						return true
					}
				}
			}
			return false
		}, nil
	}
	var rxs []*regexp.Regexp
	for _, part := range strings.Split(value, ",") {
		rx, err := regexp.Compile(part)
		if err != nil {
			return nil, fmt.Errorf("bad regular expression %q", part)
		}
		rxs = append(rxs, rx)
	}
	if key != "" {
		return func(s *profile.Sample) bool {
			for _, v := range s.Label[key] {
				for _, rx := range rxs {
					if rx.MatchString(v) {
						return true
					}
				}
			}
			return false
		}, nil
	}
	return func(s *profile.Sample) bool {
	next:
		for _, rx := range rxs {
			for k, vs := range s.Label {
				for _, v := range vs {
					if rx.MatchString(k + ":" + v) {
						continue next
					}
				}
			}
			return false
		}
		return true
	}, nil
}

// parseRange reads a numeric range; ok is false for a value that is not one (a
// regular expression), err set for one that looks numeric but is malformed.
func parseRange(v string) (lo, hi float64, ok bool, err error) {
	if !strings.ContainsAny(v[:1], "0123456789:.") {
		return 0, 0, false, nil
	}
	loS, hiS, isRange := strings.Cut(v, ":")
	lo, hi = math.Inf(-1), math.Inf(1)
	if loS != "" {
		if lo, ok = parseFigure(loS); !ok {
			return 0, 0, false, nil
		}
	}
	if hiS != "" {
		if hi, ok = parseFigure(hiS); !ok {
			return 0, 0, false, fmt.Errorf("bad upper bound %q", hiS)
		}
	}
	if !isRange {
		hi = lo
	}
	if loS == "" && hiS == "" {
		return 0, 0, false, fmt.Errorf("an empty range")
	}
	return lo, hi, true, nil
}

// figureUnits are the units a range's figures may carry, as pprof reads them: bytes in
// powers of 1024, times in nanoseconds.
var figureUnits = []struct {
	suffix string
	scale  float64
}{
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40}, {"b", 1},
	{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
}

func parseFigure(s string) (float64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	scale := 1.0
	for _, u := range figureUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, scale = strings.TrimSuffix(s, u.suffix), u.scale
			break
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return x * scale, true
}
