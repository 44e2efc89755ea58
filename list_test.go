package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/annotate"
	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/elftest"
	"github.com/cctop/cctop/internal/testutil"
)

// view --list and --disasm against go tool pprof -list and -disasm on the
// same file (issue 33): the same output, row for row, for a C function
// with one hot line, Go code and code inlined into two callers; and what
// the listing says when the source, the lines or the symbols are gone.

// goTool skips when there is no go command to run go tool pprof.
func goTool(t *testing.T) string {
	t.Helper()
	g, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command for go tool pprof")
	}
	return g
}

// record records cmd with cctop into dir and returns the profile's path.
func record(t *testing.T, dir string, cmd ...string) string {
	t.Helper()
	pb := filepath.Join(dir, "cctop.pb.gz")
	args := append([]string{"record", "-F", "999", "-o", pb, "--"}, cmd...)
	if out, err := exec.Command(cctopBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("cctop record: %v\n%s", err, out)
	}
	return pb
}

// samePprof runs view --MODE RE and go tool pprof -MODE RE on pb with the
// same source path and wants the same output. It returns cctop's.
func samePprof(t *testing.T, pb, mode, re, srcPath string) string {
	t.Helper()
	ours, stderr, code := testutil.Run(t, cctopBin, "", "view", "--"+mode, re, "--source-path", srcPath, pb)
	if code != 0 {
		t.Fatalf("cctop view --%s %s: exit %d\n%s", mode, re, code, stderr)
	}
	out, err := exec.Command(goTool(t), "tool", "pprof", "-source_path", srcPath, "-"+mode, re, pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -%s: %v\n%s", mode, err, out)
	}
	// pprof prints why it could not open a mapping that has a match
	// ([kernel.kallsyms]: process_one_work) among its rows; cctop says
	// such things on stderr.
	var kept []string
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if !strings.HasPrefix(l, "open ") {
			kept = append(kept, l)
		}
	}
	theirs := strings.Join(kept, "")
	if ours != theirs {
		a, b := strings.Split(ours, "\n"), strings.Split(theirs, "\n")
		for i := range max(len(a), len(b)) {
			var x, y string
			if i < len(a) {
				x = a[i]
			}
			if i < len(b) {
				y = b[i]
			}
			if x != y {
				t.Errorf("--%s %s, row %d:\ncctop: %q\npprof: %q", mode, re, i, x, y)
			}
		}
		t.Fatalf("cctop:\n%s\npprof:\n%s", ours, theirs)
	}
	t.Logf("--%s %s: %d rows as pprof's", mode, re, strings.Count(ours, "\n"))
	return ours
}

// hottestRow is the line number of the --list row with the most flat.
func hottestRow(t *testing.T, list string) string {
	t.Helper()
	best, bestV := "", 0.0
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !strings.Contains(f[2], ":") || f[0] == "." {
			continue
		}
		if v := duration(f[0]); v > bestV {
			best, bestV = strings.SplitN(f[2], ":", 2)[0], v
		}
	}
	return best
}

// duration reads pprof's "392.39ms" in ns.
func duration(s string) float64 {
	for _, u := range []struct {
		suf string
		f   float64
	}{{"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"s", 1e9}} {
		if v, ok := strings.CutSuffix(s, u.suf); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return x * u.f
			}
		}
	}
	return 0
}

// TestListHotline: the C function with one hot line: --list and --disasm
// as pprof's, the hot line (13) first.
func TestListHotline(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program (about 3 s)")
	}
	goTool(t)
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "testdata/hotline.c", "-O1", "-g", "-fno-omit-frame-pointer")
	pb := record(t, dir, bin, "2")
	wd, _ := os.Getwd()
	list := samePprof(t, pb, "list", "^work$", wd)
	if h := hottestRow(t, list); h != "13" {
		t.Errorf("hottest line %s; want 13, the hot line\n%s", h, list)
	}
	// pprof's -disasm matches symbols and "ADDRESS name file:line": no
	// anchors.
	samePprof(t, pb, "disasm", "work", wd)
}

// TestListDensity: Go code, the density workload's leaf.
func TestListDensity(t *testing.T) {
	if testing.Short() {
		t.Skip("records a workload (about 2 s)")
	}
	goTool(t)
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	pb := record(t, dir, cctopBin, "workload", "density", "-rounds", "30")
	wd, _ := os.Getwd()
	samePprof(t, pb, "list", "densityLeaf", wd)
	samePprof(t, pb, "disasm", "densityLeaf", wd)
}

// TestListInlined: mix, inlined into left and right: --list as pprof's
// (the call site's cum in each caller, mix's lines under mix), and the
// annotate view's listing of each caller shows mix's hot line under the
// call site, with the chain.
func TestListInlined(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program (about 2 s)")
	}
	goTool(t)
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "testdata/inlined.c", "-O2", "-g")
	pb := record(t, dir, bin, "2")
	wd, _ := os.Getwd()
	samePprof(t, pb, "list", "^(left|right|mix)$", wd)

	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tree, _, err := cct.ReadProfile(f)
	if err != nil {
		t.Fatal(err)
	}
	self := make([]float64, tree.Len())
	for i := range self {
		self[i] = float64(tree.Node(cct.NodeID(i)).Self.Time)
	}
	a := annotate.New(annotate.Options{SourcePath: []string{wd}})
	for caller, at := range map[string]int{"left": 14, "right": 19} {
		id := funcNamed(t, tree, caller)
		l, err := a.Build(tree, self, id)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(l.Lines, func(r annotate.Line) bool { return r.Func == "mix" && r.Line == 9 })
		if i < 0 {
			t.Fatalf("%s: no row of mix's line 9: %+v", caller, l.Lines)
		}
		r := l.Lines[i]
		want := caller + " (testdata/inlined.c:" + strconv.Itoa(at) + ")"
		if len(r.Inline) != 1 || r.Inline[0] != want || !strings.Contains(r.Text, "the inlined hot line") {
			t.Errorf("%s: mix's row %+v; want chain [%s] and its text", caller, r, want)
		}
		if r.Flat < 0.5*l.Cum {
			t.Errorf("%s: mix's line 9 has %.0f of %.0f", caller, r.Flat, l.Cum)
		}
		// It sits under the call site's row.
		j := slices.IndexFunc(l.Lines, func(r annotate.Line) bool { return r.Func == "" && r.Line == at })
		if j < 0 || j > i || slices.ContainsFunc(l.Lines[j+1:i], func(r annotate.Line) bool { return r.Func == "" }) {
			t.Errorf("%s: mix's row at %d, the call site's at %d", caller, i, j)
		}
		if len(l.Insns) == 0 || l.Missing != "" {
			t.Errorf("%s: %d instructions, missing %q", caller, len(l.Insns), l.Missing)
		}
	}
}

func funcNamed(t *testing.T, tree *cct.Tree, name string) cct.FuncID {
	t.Helper()
	for id := cct.FuncID(1); int(id) < tree.NumFuncs(); id++ {
		if tree.Func(id).Name == name {
			return id
		}
	}
	t.Fatalf("no function %s", name)
	return 0
}

// TestListMissing: the source file moved away, the binary stripped of
// its lines, its line table cut short, its symbols stripped: each listing
// says what is missing in one line (on stderr, stdout staying pprof's)
// and shows what it has.
func TestListMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program (about 1 s)")
	}
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "hotline.c")
	data, err := os.ReadFile("testdata/hotline.c")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(src, data, 0o644)
	bin := testutil.Compile(t, dir, "gcc", src, "-O1", "-g", "-fno-omit-frame-pointer")
	pb := record(t, dir, bin, "1")
	orig, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	view := func(mode string) (string, string, int) {
		return testutil.Run(t, cctopBin, dir, "view", "--"+mode, "^work$", pb)
	}
	oneLine := func(stderr, want string) {
		t.Helper()
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], want) {
			t.Errorf("stderr %q; want one line saying %q", stderr, want)
		}
	}

	// The source moved away: the rows with weight, numbers only.
	os.Rename(src, src+".away")
	out, stderr, code := view("list")
	if code != 0 || !strings.Contains(out, " Error: could not find file hotline.c") || !strings.Contains(out, "     13:\n") {
		t.Errorf("list without the source: exit %d\n%s", code, out)
	}
	oneLine(stderr, "work: source file not found: could not find file hotline.c")
	os.Rename(src+".away", src)

	replace := func(with string) {
		t.Helper()
		b, err := os.ReadFile(with)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stripped := filepath.Join(dir, "stripped")
	if out, err := exec.Command("strip", "-g", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Skipf("strip: %v\n%s", err, out)
	}
	replace(stripped)
	out, stderr, code = view("disasm")
	if code != 0 || !strings.Contains(out, "ROUTINE ======================== work") {
		t.Errorf("disasm of a binary stripped of lines: exit %d\n%s", code, out)
	}
	oneLine(stderr, "stripped: "+filepath.Base(bin)+" has no line table")

	os.WriteFile(bin, orig, 0o755)
	cut := filepath.Join(dir, "cut")
	elftest.PatchSectionSize(t, bin, cut, ".debug_line", 16)
	replace(cut)
	out, stderr, code = view("disasm")
	if code != 0 || !strings.Contains(out, "ROUTINE ======================== work") {
		t.Errorf("disasm with its line table cut: exit %d\n%s", code, out)
	}
	oneLine(stderr, "truncated debug info")

	// Rebuilt since: other code at the path, not shown as the profile's.
	other := testutil.Compile(t, t.TempDir(), "gcc", src, "-O2", "-g")
	replace(other)
	_, stderr, code = view("disasm")
	if code == 0 {
		t.Errorf("disasm of a rebuilt binary succeeded")
	}
	if !strings.Contains(stderr, "changed since the profile") || strings.Count(stderr, "\n") > 2 {
		t.Errorf("stderr %q; want that the binary changed, in a line", stderr)
	}

	os.WriteFile(bin, orig, 0o755)
	all := filepath.Join(dir, "all")
	if out, err := exec.Command("strip", "-o", all, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	replace(all)
	_, stderr, code = view("disasm")
	if code == 0 {
		t.Errorf("disasm of a binary with no symbols succeeded")
	}
	if n := strings.Count(stderr, "\n"); n > 2 || !strings.Contains(stderr, "no symbol of "+filepath.Base(bin)) {
		t.Errorf("stderr %q; want why, in a line", stderr)
	}
}
