package main

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestRecordCppNames: a C++ program's frames carry demangled names, with
// namespaces and template arguments, and pprof keeps the linkage name as
// the function's system name.
func TestRecordCppNames(t *testing.T) {
	skipIfNoPerf(t)
	dir := t.TempDir()
	bin := compile(t, dir, "g++", "testdata/templates.cc", "-O2", "-g", "-fno-omit-frame-pointer")
	_, stderr, code := runCctop(t, dir, "record", "--calls", "none", "-o", "t.pb.gz", "--", bin, "1")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := readProfile(t, filepath.Join(dir, "t.pb.gz"))
	// The leaf sets up no frame (gcc omits leaf frame pointers at -O2),
	// so the frame-pointer chain alone would skip its caller, shapes::spin:
	// the leaf's CFI recovers it.
	want := []string{"shapes::Accumulator<long>::add(long)", "shapes::spin(shapes::Accumulator<long>&, int)", "main"}
	col := valueIndex(t, p, "samples")
	n, with := sumValue(t, p, "samples"), int64(0)
	for _, s := range p.Sample {
		if names := stackNames(s); len(names) >= len(want) && slices.Equal(names[:len(want)], want) {
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
