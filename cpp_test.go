package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
)

// TestRecordCppNames: a C++ program's frames carry demangled names, with
// namespaces and template arguments, and pprof keeps the linkage name as
// the function's system name.
func TestRecordCppNames(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "g++", "testdata/templates.cc", "-O2", "-g", "-fno-omit-frame-pointer")
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-o", "t.pb.gz", "--", bin, "1")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "t.pb.gz"))
	// The leaf sets up no frame (gcc omits leaf frame pointers at -O2),
	// so the frame-pointer chain alone would skip its caller, shapes::spin:
	// the leaf's CFI recovers it.
	want := []string{"shapes::Accumulator<long>::add(long)", "shapes::spin(shapes::Accumulator<long>&, int)", "main"}
	col := testutil.ValueIndex(t, p, "samples")
	n, with := testutil.SumValue(t, p, "samples"), int64(0)
	for _, s := range p.Sample {
		if names := testutil.StackNames(s); len(names) >= len(want) && slices.Equal(names[:len(want)], want) {
			with += s.Value[col]
		}
	}
	if n == 0 || with*100 < n*90 {
		t.Errorf("%d of %d samples run %v", with, n, want)
	}
	sys := map[string]string{}
	for _, f := range p.Function {
		sys[f.Name] = f.SystemName
	}
	if got := sys[want[0]]; got != "_ZN6shapes11AccumulatorIlE3addEl" {
		t.Errorf("system name of %s: %q", want[0], got)
	}
	if got := sys["main"]; got != "main" {
		t.Errorf("system name of main: %q", got)
	}
}

// TestRecordCppInlined: code of an always-inline template helper shows as
// an inlined frame (a Location with several Lines) under the member
// function it was inlined into, with demangled names; and the same binary
// stripped, with its debug information in a separate file found through
// .gnu_debuglink, symbolizes the same.
func TestRecordCppInlined(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "g++", "testdata/inline.cc", "-O2", "-g")
	stripped := filepath.Join(dir, "stripped")
	for _, c := range [][]string{
		{"objcopy", "--only-keep-debug", bin, stripped + ".debug"},
		{"objcopy", "--strip-debug", "--strip-unneeded", bin, stripped},
		{"objcopy", "--add-gnu-debuglink=" + stripped + ".debug", stripped},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	const helper, caller = "long geo::detail::mix<long>(long)", "geo::Grid<long>::sweep(int)"
	for _, target := range []string{bin, stripped} {
		_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-d", "2", "-o", "i.pb.gz", "--", target, "60")
		if code != 0 {
			t.Fatalf("record exit %d:\n%s", code, stderr)
		}
		p := testutil.ReadProfile(t, filepath.Join(dir, "i.pb.gz"))
		col := testutil.ValueIndex(t, p, "samples")
		var n, inlined int64
		for _, s := range p.Sample {
			n += s.Value[col]
			if len(s.Location) == 0 {
				continue
			}
			l := s.Location[0].Line
			if len(l) == 2 && l[0].Function.Name == helper && l[1].Function.Name == caller && l[0].Line > 0 &&
				strings.HasSuffix(l[0].Function.Filename, "inline.cc") {
				inlined += s.Value[col]
			}
		}
		if n < 100 || inlined*2 < n {
			t.Errorf("%s: %d of %d samples are in %s inlined into %s\n%s", filepath.Base(target), inlined, n, helper, caller, stderr)
		}
		t.Logf("%s: %d of %d samples in the inlined helper", filepath.Base(target), inlined, n)
	}
	if out, _ := exec.Command("readelf", "-S", stripped).Output(); strings.Contains(string(out), ".debug_info") {
		t.Fatal("the stripped binary still has .debug_info")
	}
}
