package annotate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
)

// Printing listings as go tool pprof -list and -disasm print theirs
// (google/pprof internal/report: printSource, PrintAssembly), so that
// `cctop view --list` can stand in for it row for row: values rounded to
// the profile's integers, "." for zero, the same columns and headers.

// Format formats a value of the profile's unit, as pprof's report does.
type Format func(float64) string

// round is a weight as pprof's integer values hold it.
func round(x float64) int64 { return int64(math.Round(x)) }

func valueOrDot(x float64, format Format) string {
	if round(x) == 0 {
		return "."
	}
	return format(float64(round(x)))
}

// percentage is pprof's measurement.Percentage.
func percentage(value, total float64) string {
	var ratio float64
	if total != 0 {
		ratio = math.Abs(value/total) * 100
	}
	switch {
	case ratio >= 99.95 && ratio <= 100.05:
		return "  100%"
	case ratio >= 1.0:
		return fmt.Sprintf("%5.2f%%", ratio)
	default:
		return fmt.Sprintf("%5.2g%%", ratio)
	}
}

// WriteList prints ls as go tool pprof -list does, ordered by name and
// file; o's paths trim the file names as pprof's do.
func WriteList(w io.Writer, ls []*Listing, total float64, format Format, o Options) {
	fmt.Fprintf(w, "Total: %s\n", format(float64(round(total))))
	srcs := newSources(o)
	ls = slices.Clone(ls)
	file := func(l *Listing) string {
		if l.File == "" {
			return ""
		}
		return filepath.Clean(trimPath(l.File, srcs.trim, srcs.searchPath))
	}
	slices.SortStableFunc(ls, func(a, b *Listing) int { return cmp.Or(cmp.Compare(a.Func, b.Func), cmp.Compare(file(a), file(b))) })
	for _, l := range ls {
		if l.File == "" {
			fmt.Fprintf(w, "No source information for %s\n", l.Func)
			continue
		}
		fmt.Fprintf(w, "ROUTINE ======================== %s in %s\n", l.Func, file(l))
		fmt.Fprintf(w, "%10s %10s (flat, cum) %s of Total\n",
			format(float64(round(l.LinesFlat))), format(float64(round(l.LinesCum))), percentage(l.LinesCum, total))
		if l.SourceErr != "" {
			fmt.Fprintf(w, " Error: %s\n", l.SourceErr)
		}
		for _, r := range l.Lines {
			if r.Func != "" {
				continue // pprof lists inlined lines under their own function
			}
			fmt.Fprintf(w, "%10s %10s %6d:%s\n", valueOrDot(r.Flat, format), valueOrDot(r.Cum, format), r.Line, r.Text)
		}
	}
}

// WriteDisasm prints the symbols of ls whose names match re as go tool
// pprof -disasm does: by name, then address.
func WriteDisasm(w io.Writer, ls []*Listing, total float64, format Format, re *regexp.Regexp) {
	fmt.Fprintln(w, "Total:", format(float64(round(total))))
	type symOf struct {
		l *Listing
		s Sym
	}
	var syms []symOf
	seen := map[string]bool{}
	for _, l := range ls {
		for _, s := range l.Syms {
			k := fmt.Sprintf("%s\x00%x", l.Module, s.Start)
			if re.MatchString(s.Name) && !seen[k] {
				seen[k] = true
				syms = append(syms, symOf{l, s})
			}
		}
	}
	slices.SortStableFunc(syms, func(a, b symOf) int {
		// pprof orders by the name's first byte only, then the address.
		var x, y byte
		if a.s.Name != "" {
			x = a.s.Name[0]
		}
		if b.s.Name != "" {
			y = b.s.Name[0]
		}
		return cmp.Or(cmp.Compare(x, y), cmp.Compare(a.s.Start, b.s.Start))
	})
	for _, so := range syms {
		writeSym(w, so.l, so.s, format)
	}
}

// writeSym prints one symbol. Go's pprof reads a symbol's code up to its
// last byte, exclusive (its end is start+size-1), so that the last
// one-byte instruction (a RET) is not printed: neither is it here.
func writeSym(w io.Writer, l *Listing, s Sym, format Format) {
	end := s.End - 1
	var flat, cum float64
	for _, a := range l.Addrs {
		if a.Addr >= s.Start && a.Addr < end {
			flat += a.Flat
			cum += a.Cum
		}
	}
	total := l.Total
	fmt.Fprintf(w, "ROUTINE ======================== %s\n", s.Name)
	fmt.Fprintf(w, "%10s %10s (flat, cum) %s of Total\n", format(float64(round(flat))), format(float64(round(cum))), percentage(cum, total))
	var insns []Insn
	for _, in := range l.Insns {
		if in.Addr >= s.Start && in.Addr < end {
			insns = append(insns, in)
		}
	}
	k := 0 // the next of l.Addrs
	function, file, line := "", "", 0
	for i, in := range insns {
		next := end
		if i+1 < len(insns) {
			next = insns[i+1].Addr
		}
		var nFunc, nFile string
		nLine := 0
		if l.LineSource == "go" {
			// Go's disassembler has lines of Go binaries only (their
			// pclntab), and no function names.
			nLine = in.Line
			if in.File != "" {
				nFile = filepath.Base(in.File)
			}
		}
		var fl, cu float64
		for k < len(l.Addrs) && l.Addrs[k].Addr < in.Addr {
			k++
		}
		for ; k < len(l.Addrs) && l.Addrs[k].Addr < next; k++ {
			a := l.Addrs[k]
			if round(a.Flat) == 0 && round(a.Cum) == 0 {
				continue // pprof has no node for it
			}
			fl += a.Flat
			cu += a.Cum
			if nFile == "" && a.File != "" {
				nFile = filepath.Base(a.File)
			}
			if nLine == 0 {
				nLine = a.Line
			}
			if nFunc == "" {
				nFunc = l.Func
			}
		}
		loc := ""
		if nFunc != function || nFile != file || nLine != line {
			function, file, line = nFunc, nFile, nLine
			if nFunc != "" {
				loc = nFunc + " "
			}
			if nFile != "" {
				loc += nFile
				if nLine != 0 {
					loc += fmt.Sprintf(":%d", nLine)
				}
			}
		}
		switch {
		case loc == "":
			fmt.Fprintf(w, "%10s %10s %10x: %s\n", valueOrDot(fl, format), valueOrDot(cu, format), in.Addr, in.Text)
		case len(in.Text) < 40:
			fmt.Fprintf(w, "%10s %10s %10x: %-40s;%s\n", valueOrDot(fl, format), valueOrDot(cu, format), in.Addr, in.Text, loc)
		default:
			fmt.Fprintf(w, "%74s;%s\n", "", loc)
			fmt.Fprintf(w, "%10s %10s %10x: %s\n", valueOrDot(fl, format), valueOrDot(cu, format), in.Addr, in.Text)
		}
	}
}
