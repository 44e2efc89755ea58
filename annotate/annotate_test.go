package annotate

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
)

// fr is a frame in test notation, root first: name, pc (the call site for
// all but the leaf), line, inlined into the frame before it.
type fr struct {
	name string
	addr uint64
	line int
	inl  bool
}

// builder adds samples to a tree whose functions live in file.
type builder struct {
	t    *cct.Tree
	file string
}

func newBuilder(file string) *builder { return &builder{cct.New(), file} }

func (b *builder) fn(name string) cct.FuncID {
	return b.t.Intern(cct.Func{Name: name, Module: "/nonexistent/app", File: b.file})
}

// add adds n samples of 10 ns each with frames, root first.
func (b *builder) add(n int64, frames ...fr) {
	st := make([]cct.Frame, len(frames))
	for i, f := range frames {
		st[len(frames)-1-i] = cct.Frame{Func: b.fn(f.name), Addr: f.addr, Line: f.line, Inlined: f.inl}
	}
	b.t.Add(st, 1, cct.Metrics{Samples: n, Time: 10 * n})
}

// self is the time of every node.
func (b *builder) self() []float64 {
	b.t.Settle()
	out := make([]float64, b.t.Len())
	for i := range out {
		out[i] = float64(b.t.Node(cct.NodeID(i)).Self.Time)
	}
	return out
}

func (b *builder) build(t *testing.T, a *Annotator, name string) *Listing {
	t.Helper()
	l, err := a.Build(b.t, b.self(), b.fn(name))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// lineOf is the own row of line n.
func lineOf(t *testing.T, l *Listing, n int) Line {
	t.Helper()
	for _, r := range l.Lines {
		if r.Func == "" && r.Line == n {
			return r
		}
	}
	t.Fatalf("no row for line %d in %+v", n, l.Lines)
	return Line{}
}

func addrOf(t *testing.T, l *Listing, a uint64) Addr {
	t.Helper()
	for _, x := range l.Addrs {
		if x.Addr == a {
			return x
		}
	}
	t.Fatalf("no address %#x in %+v", a, l.Addrs)
	return Addr{}
}

// source writes a file of n numbered lines and returns its path.
func source(t *testing.T, n int) string {
	t.Helper()
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		sb.WriteString("line ")
		sb.WriteString(strings.Repeat("x", i%3))
		sb.WriteString("\n")
	}
	p := filepath.Join(t.TempDir(), "app.c")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFlatCum: the leaf's samples are flat and cum at their address and
// line; a call's are cum at its call site; pprof's margin of five lines
// around them, the hottest line marked.
func TestFlatCum(t *testing.T) {
	file := source(t, 40)
	b := newBuilder(file)
	b.add(3, fr{"main", 0x100, 30, false}, fr{"f", 0x10, 12, false})
	b.add(1, fr{"main", 0x100, 30, false}, fr{"f", 0x14, 12, false})
	b.add(2, fr{"main", 0x100, 30, false}, fr{"f", 0x20, 15, false}, fr{"g", 0x50, 3, false})
	l := b.build(t, New(Options{}), "f")
	if l.Flat != 40 || l.Cum != 60 || l.Total != 60 {
		t.Fatalf("flat %v cum %v total %v; want 40, 60, 60", l.Flat, l.Cum, l.Total)
	}
	if r := lineOf(t, l, 12); r.Flat != 40 || r.Cum != 40 || r.Text != "line " {
		t.Fatalf("line 12: %+v; want 40 flat and cum, its text", r)
	}
	if r := lineOf(t, l, 15); r.Flat != 0 || r.Cum != 20 {
		t.Fatalf("line 15: %+v; want 0 flat, 20 cum", r)
	}
	if first, last := l.Lines[0].Line, l.Lines[len(l.Lines)-1].Line; first != 7 || last != 20 {
		t.Fatalf("rows %d to %d; want 7 to 20", first, last)
	}
	// A function's start line, where the profile has one, is the first row.
	if l2, err := New(Options{}).BuildFuncsFrom(b.t, b.self(), []cct.FuncID{b.fn("f")}, 3); err != nil || l2.Lines[0].Line != 3 {
		t.Fatalf("from line 3: first row %+v, %v", l2.Lines[0], err)
	}
	if l.Lines[l.Hot].Line != 12 {
		t.Fatalf("hot row is line %d; want 12", l.Lines[l.Hot].Line)
	}
	if a := addrOf(t, l, 0x10); a.Flat != 30 || a.Cum != 30 || a.Line != 12 {
		t.Fatalf("0x10: %+v", a)
	}
	if a := addrOf(t, l, 0x20); a.Flat != 0 || a.Cum != 20 || a.Line != 15 {
		t.Fatalf("0x20: %+v", a)
	}
	if l.Missing == "" || !strings.Contains(l.Missing, "module not readable") {
		t.Fatalf("Missing %q; want the module not readable", l.Missing)
	}
}

// TestRecursion: a sample under two frames of f counts once in f's cum;
// through one line, once at that line; through two lines, once at each.
func TestRecursion(t *testing.T) {
	b := newBuilder("")
	b.add(1, fr{"f", 0x20, 6, false}, fr{"f", 0x20, 6, false}, fr{"f", 0x10, 5, false})
	b.add(1, fr{"f", 0x30, 7, false}, fr{"f", 0x10, 5, false})
	l := b.build(t, New(Options{}), "f")
	if l.Flat != 20 || l.Cum != 20 {
		t.Fatalf("flat %v cum %v; want 20, 20", l.Flat, l.Cum)
	}
	// No source file: the rows are the lines with weight.
	want := map[int][2]float64{5: {20, 20}, 6: {0, 10}, 7: {0, 10}}
	got := map[int][2]float64{}
	for _, r := range l.Lines {
		got[r.Line] = [2]float64{r.Flat, r.Cum}
	}
	if len(got) != 0 {
		t.Fatalf("rows without a file: %v", got)
	}
	c := collect(b.t, b.self(), []cct.FuncID{b.fn("f")})
	for ln, w := range want {
		if g := c.lines[ln]; g == nil || g.flat != w[0] || g.cum != w[1] {
			t.Errorf("line %d: %+v; want %v", ln, g, w)
		}
	}
	if a := c.addrs[0x20]; a.cum != 10 {
		t.Errorf("0x20 cum %v; want 10, once", a.cum)
	}
	if !strings.Contains(l.Missing, "no source file") {
		t.Errorf("Missing %q", l.Missing)
	}
}

// TestInlined: mix inlined into left and into right shows its lines
// under each, with the chain; its own listing has them as its lines; the
// physical code of left holds mix's samples.
func TestInlined(t *testing.T) {
	file := source(t, 30)
	b := newBuilder(file)
	b.add(4, fr{"main", 0x100, 25, false}, fr{"left", 0x40, 14, false}, fr{"mix", 0x40, 9, true})
	b.add(1, fr{"main", 0x100, 25, false}, fr{"left", 0x44, 15, false})
	b.add(2, fr{"main", 0x104, 26, false}, fr{"right", 0x80, 19, false}, fr{"mix", 0x80, 9, true})
	a := New(Options{})
	for _, c := range []struct {
		caller string
		line   int
		w      float64
		addr   uint64
	}{{"left", 14, 40, 0x40}, {"right", 19, 20, 0x80}} {
		l := b.build(t, a, c.caller)
		if r := lineOf(t, l, c.line); r.Flat != 0 || r.Cum != c.w {
			t.Fatalf("%s:%d %+v; want cum %v", c.caller, c.line, r, c.w)
		}
		i := slices.IndexFunc(l.Lines, func(r Line) bool { return r.Func == "mix" })
		if i < 1 || l.Lines[i-1].Line != c.line {
			t.Fatalf("%s: mix's row at %d, after %+v; want after line %d", c.caller, i, l.Lines[max(i-1, 0)], c.line)
		}
		r := l.Lines[i]
		want := c.caller + " (" + file + ":" + itoa(c.line) + ")"
		if r.Line != 9 || r.Flat != c.w || r.Cum != c.w || len(r.Inline) != 1 || r.Inline[0] != want {
			t.Fatalf("%s: mix row %+v; want line 9, %v, chain [%s]", c.caller, r, c.w, want)
		}
		if ad := addrOf(t, l, c.addr); ad.Flat != c.w || ad.Line != c.line {
			t.Fatalf("%s: %#x %+v; want flat %v at line %d", c.caller, c.addr, ad, c.w, c.line)
		}
	}
	l := b.build(t, a, "mix")
	if r := lineOf(t, l, 9); r.Flat != 60 || r.Cum != 60 {
		t.Fatalf("mix:9 %+v; want 60", r)
	}
	if len(l.Addrs) != 0 || !strings.Contains(l.Missing, "inlined into its callers") {
		t.Fatalf("mix: addrs %v, missing %q", l.Addrs, l.Missing)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestNoAddress: self weight of a context that never had a leaf address
// is the function's, at no address and on line 0.
func TestNoAddress(t *testing.T) {
	b := newBuilder("")
	b.t.Add([]cct.Frame{{Func: b.fn("f")}}, 1, cct.Metrics{Samples: 2, Time: 20})
	l := b.build(t, New(Options{}), "f")
	if l.Flat != 20 || l.Unplaced != 20 || len(l.Addrs) != 0 {
		t.Fatalf("%+v; want 20 flat, unplaced", l)
	}
	if _, err := New(Options{}).Build(b.t, b.self(), 999); err == nil {
		t.Fatal("Build of a function the tree does not have")
	}
	if _, err := New(Options{}).Build(nil, nil, 1); err == nil {
		t.Fatal("Build of no tree")
	}
}

// TestMissingSource: the rows with weight, numbers only, and pprof's
// words for the file it did not find.
func TestMissingSource(t *testing.T) {
	b := newBuilder("src/gone.c")
	b.add(3, fr{"f", 0x10, 12, false})
	b.add(1, fr{"f", 0x20, 14, false})
	l := b.build(t, New(Options{SourcePath: []string{t.TempDir()}}), "f")
	if len(l.Lines) != 2 || l.Lines[0].Line != 12 || l.Lines[1].Line != 14 || l.Lines[0].Text != "" {
		t.Fatalf("rows %+v; want 12 and 14 without text", l.Lines)
	}
	if !strings.HasPrefix(l.SourceErr, "could not find file src/gone.c on path ") ||
		!strings.Contains(l.Missing, "source file not found") || strings.Contains(l.Missing, "\n") {
		t.Fatalf("SourceErr %q Missing %q", l.SourceErr, l.Missing)
	}
}

// TestSourceSearch: pprof's rules: a relative path under the search path
// or its parents, a trim prefix, the heuristic that trims up to the search
// directory's base name; a binary file or one too large is not a source.
func TestSourceSearch(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	os.MkdirAll(filepath.Join(proj, "pkg"), 0o755)
	os.WriteFile(filepath.Join(proj, "pkg", "a.c"), []byte("one\r\ntwo\nthree"), 0o644)
	os.WriteFile(filepath.Join(proj, "bin.c"), []byte("a\x00b\n"), 0o644)
	for _, c := range []struct {
		path, search, trim string
		ok                 bool
	}{
		{"pkg/a.c", proj, "", true},
		{"pkg/a.c", filepath.Join(proj, "pkg", "deeper"), "", true}, // parents
		{"/build/x/proj/pkg/a.c", proj, "", true},                   // the base-name heuristic
		{"/build/y/pkg/a.c", proj, "/build/y", true},                // trimmed
		{"/build/y/pkg/a.c", proj, "", false},
		{"bin.c", proj, "", false},
	} {
		s := &sources{searchPath: c.search, trim: c.trim, files: map[string]*sourceFile{}}
		f := s.file(c.path)
		if (f.err == nil) != c.ok {
			t.Errorf("%+v: err %v", c, f.err)
		}
		if c.ok && !slices.Equal(f.lines, []string{"one", "two", "three"}) {
			t.Errorf("%+v: lines %q", c, f.lines)
		}
	}
}

// TestWriteList: pprof's layout and unit formatting.
func TestWriteList(t *testing.T) {
	file := source(t, 20)
	b := newBuilder(file)
	b.add(39239, fr{"main", 0x100, 18, false}, fr{"f", 0x10, 12, false})
	b.add(1, fr{"main", 0x100, 18, false}, fr{"f", 0x20, 13, false}, fr{"g", 0x40, 1, false})
	l := b.build(t, New(Options{}), "f")
	var sb strings.Builder
	WriteList(&sb, []*Listing{l}, l.Total, PprofFormat("nanoseconds"), Options{TrimPath: []string{filepath.Dir(file)}})
	got := strings.Split(sb.String(), "\n")
	want := []string{
		"Total: 392.40us",
		"ROUTINE ======================== f in app.c",
		"  392.39us   392.40us (flat, cum)   100% of Total",
		"         .          .      7:line x",
	}
	for i, w := range want {
		if got[i] != w {
			t.Fatalf("line %d: %q; want %q\n%s", i, got[i], w, sb.String())
		}
	}
	if !slices.Contains(got, "  392.39us   392.39us     12:line ") || !slices.Contains(got, "         .       10ns     13:line x") {
		t.Fatalf("rows 12 and 13 missing:\n%s", sb.String())
	}
}

func TestScaledLabel(t *testing.T) {
	for _, c := range []struct {
		v    int64
		unit string
		want string
	}{
		{0, "nanoseconds", "0"}, {4000000, "nanoseconds", "4ms"}, {392390000, "nanoseconds", "392.39ms"},
		{1250000000, "nanoseconds", "1.25s"}, {1536, "bytes", "1.50kB"}, {7, "count", "7"},
		{-2000, "ns", "-2us"}, {3, "seconds", "3s"},
	} {
		if got := scaledLabel(c.v, c.unit); got != c.want {
			t.Errorf("%d %s: %q; want %q", c.v, c.unit, got, c.want)
		}
	}
	if p := percentage(1, 3); p != "33.33%" {
		t.Errorf("percentage %q", p)
	}
	if p := percentage(1, 300); p != " 0.33%" {
		t.Errorf("percentage %q", p)
	}
}

// TestPythonAndJIT: Python code is its source lines, nothing missing; JIT
// code without lines says so in one line; with lines, shows them.
func TestPythonAndJIT(t *testing.T) {
	file := filepath.Join(t.TempDir(), "app.py")
	os.WriteFile(file, []byte("def f():\n    x = 1\n    return x\n"), 0o644)
	tr := cct.New()
	py := tr.Intern(cct.Func{Name: "f (app.py)", Module: "[python]", File: file})
	jit := tr.Intern(cct.Func{Name: "Lfoo;::bar", Module: "[jit]"})
	jitLines := tr.Intern(cct.Func{Name: "baz", Module: "[jit]", File: file})
	tr.Add([]cct.Frame{{Func: py, Line: 2}}, 1, cct.Metrics{Samples: 1, Time: 5})
	tr.Add([]cct.Frame{{Func: jit, Addr: 0x7f0000001000}}, 1, cct.Metrics{Samples: 1, Time: 5})
	tr.Add([]cct.Frame{{Func: jitLines, Addr: 0x7f0000002000, Line: 3}}, 1, cct.Metrics{Samples: 1, Time: 5})
	tr.Settle()
	self := make([]float64, tr.Len())
	for i := range self {
		self[i] = float64(tr.Node(cct.NodeID(i)).Self.Time)
	}
	a := New(Options{})
	l, err := a.Build(tr, self, py)
	if err != nil {
		t.Fatal(err)
	}
	if l.Missing != "" || l.Insns != nil || lineOf(t, l, 2).Flat != 5 || lineOf(t, l, 2).Text != "    x = 1" {
		t.Fatalf("python: %+v", l)
	}
	l, _ = a.Build(tr, self, jit)
	if !strings.Contains(l.Missing, "no line information") || strings.Contains(l.Missing, "\n") || len(l.Lines) != 0 {
		t.Fatalf("jit without lines: %+v", l)
	}
	l, _ = a.Build(tr, self, jitLines)
	if lineOf(t, l, 3).Flat != 5 || !strings.Contains(l.Missing, "no machine code") {
		t.Fatalf("jit with lines: %+v", l)
	}
}
