package annotate

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cctop/cctop/cct"
)

// Options say where source files are looked for, as pprof's flags do.
type Options struct {
	// SourcePath is pprof's -source_path: directories searched for a
	// source file that is not where the debug information says.
	SourcePath []string
	// TrimPath is pprof's -trim_path: prefixes removed from the recorded
	// paths before searching SourcePath.
	TrimPath []string
}

// Annotator builds listings, keeping what it read of modules and sources
// between calls (a live view rebuilds its listing as samples come). It is
// safe for use by one goroutine at a time.
type Annotator struct {
	opts Options
	src  *sources
	mods modules
	// buildIDs are the build IDs the profile recorded by module path:
	// a binary rebuilt since would show other code.
	buildIDs map[string]string
	jit      CodeReader // a live target's memory, for its JIT code
}

// ExpectBuildID says that the profile's module path had build ID id (hex,
// as pprof's mappings hold it): a file there with another is not
// disassembled, the listing saying so.
func (a *Annotator) ExpectBuildID(path, id string) {
	if a.buildIDs == nil {
		a.buildIDs = map[string]string{}
	}
	a.buildIDs[path] = id
}

// New returns an Annotator that finds sources as o says.
func New(o Options) *Annotator { return &Annotator{opts: o, src: newSources(o)} }

// sourceMargin is pprof's: the lines shown before the first and after the
// last line with weight.
const sourceMargin = 5

// pythonModule is the module engine gives the Python frames it reads
// from the interpreter (engine.PythonModule): they have lines, no code.
const pythonModule = "[python]"

// jitModule is the module symbol gives JIT code's frames.
const jitModule = "[jit]"

// Build is the listing of function fn of t, over all its contexts, each
// node weighing self[node] (the weight the view shows, per node of t).
// Unit is left to the caller, which knows what self is of.
func (a *Annotator) Build(t *cct.Tree, self []float64, fn cct.FuncID) (*Listing, error) {
	return a.BuildFuncs(t, self, []cct.FuncID{fn})
}

// BuildFuncs is Build of several functions as one: those of one name and
// source file in several modules, as pprof lists them (the first one's
// module is disassembled).
func (a *Annotator) BuildFuncs(t *cct.Tree, self []float64, fns []cct.FuncID) (*Listing, error) {
	return a.BuildFuncsFrom(t, self, fns, 0)
}

// BuildFuncsFrom is BuildFuncs with the source rows from startLine (the
// function's first line, a pprof Function's start_line; 0 unknown: five
// lines before the first line with weight, as pprof does then).
func (a *Annotator) BuildFuncsFrom(t *cct.Tree, self []float64, fns []cct.FuncID, startLine int) (*Listing, error) {
	if t == nil || len(fns) == 0 {
		return nil, fmt.Errorf("annotate: no function to list")
	}
	for _, fn := range fns {
		if fn <= cct.RootFunc || int(fn) >= t.NumFuncs() {
			return nil, fmt.Errorf("annotate: no function %d in the profile", fn)
		}
	}
	if a.src == nil { // a zero Annotator
		a.src = newSources(a.opts)
	}
	c := collect(t, self, fns)
	f := t.Func(fns[0])
	l := &Listing{
		Func: f.Name, Module: f.Module, File: f.File,
		Flat: c.flat, Cum: c.cum, Total: c.total, Hot: -1, Unplaced: c.unplaced,
	}
	for _, w := range c.lines {
		l.LinesFlat += w.flat
		l.LinesCum += w.cum
	}
	for addr, w := range c.addrs {
		l.Addrs = append(l.Addrs, Addr{Addr: addr, Line: w.line, File: f.File, Flat: w.flat, Cum: w.cum})
	}
	slices.SortFunc(l.Addrs, func(x, y Addr) int { return cmp.Compare(x.Addr, y.Addr) })

	var missing []string
	a.sourceRows(l, t, c, startLine, &missing)
	switch {
	case f.Module == jitModule:
		// JIT code lives in the process's memory, gone with it; its
		// lines are what the jitdump's debug info gave the frames.
		if ok, note := a.jitInsns(l); ok {
			missing = append([]string{note}, missing...) // what it shows first
		} else if f.File == "" {
			missing = []string{"JIT code: no line information (no jitdump debug info) and no machine code in a file"}
		} else {
			missing = append(missing, "JIT code: no machine code in a file")
		}
	case f.Module == pythonModule || strings.HasSuffix(f.File, ".py"):
		// Python code is its source lines: nothing to disassemble.
	case !c.physical:
		if len(c.addrs) == 0 && c.flat+c.cum > 0 {
			missing = append(missing, "inlined into its callers: no code of its own to disassemble")
		}
	case !strings.HasPrefix(f.Module, "/"):
		missing = append(missing, fmt.Sprintf("no machine code: %q is not a file", cmp.Or(f.Module, "the module")))
	default:
		a.insns(l, &missing)
	}
	l.Missing = strings.Join(missing, "; ")
	return l, nil
}

// sourceRows fills l.Lines: the function's own lines from the first with
// weight to the last, pprof's margin around them, with the lines of the
// code inlined there after each.
func (a *Annotator) sourceRows(l *Listing, t *cct.Tree, c *collected, startLine int, missing *[]string) {
	lo, hi, any := 0, 0, false
	for ln, w := range c.lines {
		if w.flat == 0 && w.cum == 0 {
			continue
		}
		if !any || ln < lo {
			lo = ln
		}
		if !any || ln > hi {
			hi = ln
		}
		any = true
	}
	var own []Line
	switch {
	case l.File == "":
		if any {
			*missing = append(*missing, "no source file: the profile has no lines for "+l.Func)
		}
	case any:
		sf := a.src.file(l.File)
		if sf.err != nil {
			l.SourceErr = sf.err.Error()
			*missing = append(*missing, "source file not found: "+oneLine(sf.err))
			// What there is: the lines with weight, numbers only.
			for ln, w := range c.lines {
				if ln > 0 && (w.flat != 0 || w.cum != 0) {
					own = append(own, Line{File: l.File, Line: ln, Flat: w.flat, Cum: w.cum})
				}
			}
			slices.SortFunc(own, func(x, y Line) int { return cmp.Compare(x.Line, y.Line) })
			break
		}
		first := lo - sourceMargin
		if startLine > 0 {
			first = startLine
		}
		for ln := max(first, 1); ln <= hi+sourceMargin && ln <= len(sf.lines); ln++ {
			r := Line{File: l.File, Line: ln, Text: sf.lines[ln-1]}
			if w := c.lines[ln]; w != nil {
				r.Flat, r.Cum = w.flat, w.cum
			}
			own = append(own, r)
		}
	}

	// The inlined lines, by the own line that inlined them.
	keys := make([]inlKey, 0, len(c.inl))
	for k, w := range c.inl {
		if w.flat != 0 || w.cum != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y inlKey) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.chain, y.chain), cmp.Compare(x.line, y.line), cmp.Compare(x.fn, y.fn))
	})
	inlRow := func(k inlKey) Line {
		f := t.Func(k.fn)
		w := c.inl[k]
		r := Line{File: f.File, Line: k.line, Flat: w.flat, Cum: w.cum, Inline: splitChain(k.chain), Func: f.Name}
		if f.File != "" && k.line > 0 {
			if sf := a.src.file(f.File); sf.err == nil && k.line <= len(sf.lines) {
				r.Text = sf.lines[k.line-1]
			}
		}
		return r
	}
	next := 0
	for _, r := range own {
		l.Lines = append(l.Lines, r)
		for next < len(keys) && keys[next].at < r.Line {
			next++ // an own line that is not shown: placed below
		}
		for next < len(keys) && keys[next].at == r.Line {
			l.Lines = append(l.Lines, inlRow(keys[next]))
			keys = slices.Delete(keys, next, next+1)
		}
	}
	for _, k := range keys {
		l.Lines = append(l.Lines, inlRow(k))
	}
	for i, r := range l.Lines {
		if r.Func != "" || (r.Flat == 0 && r.Cum == 0) {
			continue
		}
		if h := l.Hot; h < 0 || r.Flat > l.Lines[h].Flat || (r.Flat == l.Lines[h].Flat && r.Cum > l.Lines[h].Cum) {
			l.Hot = i
		}
	}
}

// insns fills l.Insns with the function's machine code from its module,
// and LineSource.
func (a *Annotator) insns(l *Listing, missing *[]string) {
	m := a.mods.get(l.Module)
	if m.err != nil {
		*missing = append(*missing, "module not readable: "+oneLine(m.err))
		return
	}
	if want, got := a.buildIDs[l.Module], hex.EncodeToString(m.code.BuildID); want != "" && got != "" && len(want) == len(got) && !strings.EqualFold(want, got) {
		*missing = append(*missing, fmt.Sprintf("%s changed since the profile: build ID %s, the profile's %s", l.Module, got, want))
		return
	}
	l.LineSource = m.frames.Lines
	if len(l.Addrs) == 0 {
		*missing = append(*missing, "no addresses in the profile for "+l.Func)
		return
	}
	// The functions holding the addresses: one, or a few where the
	// compiler split the function (foo and foo.cold).
	var starts []uint64
	outside := 0
	for _, ad := range l.Addrs {
		s, ok := m.code.FuncStart(ad.Addr)
		if !ok {
			outside++
			continue
		}
		if !slices.Contains(starts, s) {
			starts = append(starts, s)
		}
	}
	slices.Sort(starts)
	if len(starts) == 0 {
		*missing = append(*missing, fmt.Sprintf("no symbol of %s holds the function's addresses", filepath.Base(l.Module)))
		return
	}
	withLines := 0
	k := 0 // the next of l.Addrs to place
	for _, s := range starts {
		fd, err := m.function(s)
		if err != nil {
			*missing = append(*missing, err.Error())
			if errors.Is(err, errNoDisasm) {
				return
			}
			continue
		}
		l.Syms = append(l.Syms, fd.sym)
		for _, in := range fd.insns {
			if in.Line > 0 {
				withLines++
			}
			weigh(&in.Insn, in.size, l.Addrs, &k)
			l.Insns = append(l.Insns, in.Insn)
		}
	}
	base := filepath.Base(l.Module)
	switch {
	case m.frames.Broken:
		*missing = append(*missing, "truncated debug info: "+base+"'s could not be read, instructions without lines")
	case m.frames.Lines == "":
		*missing = append(*missing, "stripped: "+base+" has no line table, instructions without lines")
	case withLines == 0 && len(l.Insns) > 0:
		*missing = append(*missing, "truncated debug info: "+base+" has no lines for "+l.Func)
	}
	if outside > 0 {
		*missing = append(*missing, fmt.Sprintf("%d addresses outside the symbols of %s", outside, base))
	}
}

// oneLine is err's first line.
func oneLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
