package engine

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"

	"github.com/cctop/cctop/annotate"
	"github.com/cctop/cctop/cct"
)

// WriteListing prints the annotated source (disasm false) or machine code
// of the functions of what o names whose names match re, as go tool pprof
// -list and -disasm print them: the same listing the annotate view shows,
// built by a the same way from the profile's tree. What a listing misses
// (its source file, its binary's lines) goes to warn, a line each, so
// that w reads as pprof's.
func WriteListing(w, warn io.Writer, o ViewOptions, re string, disasm bool, a *annotate.Annotator, ao annotate.Options) error {
	rx, err := regexp.Compile(re)
	if err != nil {
		return fmt.Errorf("parsing regexp %s: %v", re, err)
	}
	l, err := loadProfiles(o)
	if err != nil {
		return err
	}
	if l.base != nil {
		return errors.New("--list and --disasm show one profile: no --base")
	}
	t, meta, err := cct.FromProfileType(l.prof, l.index)
	if err != nil {
		return fmt.Errorf("%s: %v", l.name, err)
	}
	t.Settle()
	self := make([]float64, t.Len())
	for id := range self {
		self[id] = float64(t.Node(cct.NodeID(id)).Self.Time)
	}
	// pprof's total: every sample's value, absolute.
	var total float64
	for _, s := range l.prof.Sample {
		total += float64(abs64(s.Value[l.index]))
	}

	// The functions by name and file, as pprof groups its nodes.
	type key struct{ name, file string }
	groups := map[key][]cct.FuncID{}
	var keys []key
	for id := cct.RootFunc + 1; int(id) < t.NumFuncs(); id++ {
		f := t.Func(id)
		if !rx.MatchString(f.Name) {
			continue
		}
		k := key{f.Name, f.File}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], id)
	}
	slices.SortFunc(keys, func(x, y key) int { return cmp.Or(cmp.Compare(x.name, y.name), cmp.Compare(x.file, y.file)) })
	for path, m := range meta.Modules {
		a.ExpectBuildID(path, m.BuildID)
	}
	// pprof starts a listing at its function's start_line where the
	// profile has one (Go's do); the tree keeps none.
	starts := map[key]int{}
	for _, f := range l.prof.Function {
		if f.StartLine > 0 {
			name := f.Name
			if name == "" {
				name = f.SystemName
			}
			starts[key{name, f.Filename}] = int(f.StartLine)
		}
	}
	var ls []*annotate.Listing
	for _, k := range keys {
		lst, err := a.BuildFuncsFrom(t, self, groups[k], starts[k])
		if err != nil {
			return err
		}
		// pprof lists what has samples: its nodes of zero weight are gone.
		if lst.LinesFlat == 0 && lst.LinesCum == 0 && lst.Flat == 0 && lst.Cum == 0 {
			continue
		}
		ls = append(ls, lst)
		if lst.Missing != "" {
			fmt.Fprintf(warn, "cctop: %s: %s\n", lst.Func, lst.Missing)
		}
	}
	format := annotate.PprofFormat(meta.Unit)
	if disasm {
		n := 0
		for _, lst := range ls {
			for _, s := range lst.Syms {
				if rx.MatchString(s.Name) {
					n++
				}
			}
		}
		if n == 0 {
			return noCode(ls, re)
		}
		annotate.WriteDisasm(w, ls, total, format, rx)
		return nil
	}
	if len(ls) == 0 {
		return fmt.Errorf("no matches found for regexp: %s", re)
	}
	annotate.WriteList(w, ls, total, format, ao)
	return nil
}

// noCode is --disasm's error when no function's code could be read: the
// first reason a listing gives, or pprof's words.
func noCode(ls []*annotate.Listing, re string) error {
	for _, l := range ls {
		if l.Missing != "" {
			return fmt.Errorf("%s: %s", l.Func, l.Missing)
		}
	}
	return fmt.Errorf("no matches found for regexp %s", re)
}
