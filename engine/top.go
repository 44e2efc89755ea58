package engine

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/cctop/cctop/tui"
	"github.com/google/pprof/profile"
)

// topEntry is one function of the flat top: its own value (the samples it is the
// innermost frame of) and its cumulative one (the samples it is anywhere in, once each).
type topEntry struct {
	name      string
	flat, cum int64
}

// topNodeFraction is pprof's default -nodefraction: functions whose cumulative value is
// under this share of the flat values' sum are left out.
const topNodeFraction = 0.005

// flatTop is the functions of p by their values in column index, as go tool pprof -top
// ranks them: functions by name (the binary's "[name]" where a frame has none, else
// "<unknown>"), the innermost of inlined frames taking the flat value, the cumulative
// counted once a sample; those under pprof's node fraction left out; by flat value
// (absolute) then name then cumulative value. total is pprof's: the sum of the samples'
// absolute values, or of the base's alone in a diff. base, if not nil, is subtracted
// (pprof's -diff_base).
func flatTop(p, base *profile.Profile, index int) (entries []topEntry, total int64) {
	byName := map[string]*topEntry{}
	var order []*topEntry
	node := func(name string) *topEntry {
		e, ok := byName[name]
		if !ok {
			e = &topEntry{name: name}
			byName[name] = e
			order = append(order, e)
		}
		return e
	}
	var all, baseTotal int64
	seen := map[*topEntry]bool{}
	add := func(s *profile.Sample, sign int64) {
		w := sign * s.Value[index]
		if w == 0 {
			return
		}
		all += abs64(w)
		if sign < 0 {
			baseTotal += abs64(w)
		}
		clear(seen)
		var leaf *topEntry
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			names := locationNames(l)
			for j := len(names) - 1; j >= 0; j-- {
				e := node(names[j])
				if !seen[e] {
					seen[e] = true
					e.cum += w
				}
				leaf = e
			}
		}
		if leaf != nil {
			leaf.flat += w
		}
	}
	for _, s := range p.Sample {
		add(s, 1)
	}
	if base != nil {
		for _, s := range base.Sample {
			add(s, -1)
		}
	}
	total = all
	if baseTotal > 0 {
		total = baseTotal
	}
	var flatSum int64
	for _, e := range order {
		flatSum += e.flat
	}
	cutoff := abs64(int64(float64(flatSum) * topNodeFraction))
	for _, e := range order {
		if (e.flat == 0 && e.cum == 0) || abs64(e.cum) < cutoff {
			continue
		}
		entries = append(entries, *e)
	}
	slices.SortFunc(entries, func(a, b topEntry) int {
		return cmp.Or(
			cmp.Compare(abs64(b.flat), abs64(a.flat)),
			cmp.Compare(a.name, b.name),
			cmp.Compare(abs64(b.cum), abs64(a.cum)))
	})
	return entries, total
}

// locationNames names a location's frames, innermost first, as pprof's function
// granularity does.
func locationNames(l *profile.Location) []string {
	unnamed := "<unknown>"
	if l.Mapping != nil && l.Mapping.File != "" {
		unnamed = "[" + filepath.Base(l.Mapping.File) + "]"
	}
	if len(l.Line) == 0 {
		return []string{unnamed}
	}
	names := make([]string, len(l.Line))
	for i, ln := range l.Line {
		names[i] = unnamed
		if ln.Function != nil && ln.Function.Name != "" {
			names[i] = ln.Function.Name
		}
	}
	return names
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// WriteTop prints the flat top n functions of what o names (every one for n <= 0), as
// go tool pprof -top does: flat, flat%, sum%, cum, cum% and the name, values in the
// sample type's unit.
func WriteTop(w io.Writer, o ViewOptions, n int) error {
	l, err := loadProfiles(o)
	if err != nil {
		return err
	}
	entries, total := flatTop(l.prof, l.base, l.index)
	vt := l.prof.SampleType[l.index]
	fmt.Fprintf(w, "%s: %s/%s, %d samples\n", l.name, vt.Type, vt.Unit, len(l.prof.Sample))
	shown := entries
	if n > 0 && len(shown) > n {
		shown = shown[:n]
	}
	var shownFlat int64
	for _, e := range shown {
		shownFlat += e.flat
	}
	fmt.Fprintf(w, "Showing %d of %d functions, %s (%s) of %s total\n", len(shown), len(entries),
		tui.FormatValue(vt.Unit, float64(shownFlat)), pct(shownFlat, total), tui.FormatValue(vt.Unit, float64(total)))
	fmt.Fprintf(w, "%10s %7s %7s %10s %7s  %s\n", "flat", "flat%", "sum%", "cum", "cum%", "name")
	var sum int64
	for _, e := range shown {
		sum += e.flat
		fmt.Fprintf(w, "%10s %7s %7s %10s %7s  %s\n", tui.FormatValue(vt.Unit, float64(e.flat)), pct(e.flat, total),
			pct(sum, total), tui.FormatValue(vt.Unit, float64(e.cum)), pct(e.cum, total), printableLine(e.name))
	}
	return nil
}

func pct(x, total int64) string {
	if total == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(x)/float64(total))
}
