package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// shareWith is the share of samples (by count) that satisfy ok.
func shareWith(t *testing.T, p *profile.Profile, ok func(names []string) bool) (with, n int64) {
	t.Helper()
	col := testutil.ValueIndex(t, p, "samples")
	for _, s := range p.Sample {
		n += s.Value[col]
		if ok(testutil.StackNames(s)) {
			with += s.Value[col]
		}
	}
	return with, n
}

// TestUnwindFramelessLeaves: gcc -O1 builds code with no frame pointers,
// whose leaves set up no frame at all. With default settings at least 95%
// of the leaves' samples carry their real caller, which a frame-pointer
// walk skips (perf record --call-graph fp shows the leaf under main).
func TestUnwindFramelessLeaves(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "../testdata/leaves.c", "-O1", "-g")
	// A fixed amount of work (about 2 s of CPU), not a deadline: the
	// samples are of the CPU time the program got, however loaded the
	// machine.
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-o", "l.pb.gz", "--", bin, "30000")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "l.pb.gz"))
	var leafSamples, withCaller int64
	col := testutil.ValueIndex(t, p, "samples")
	for _, s := range p.Sample {
		names := testutil.StackNames(s)
		i := slices.IndexFunc(names, func(n string) bool { return n == "mix" || n == "fold" })
		if i < 0 {
			continue
		}
		leafSamples += s.Value[col]
		if i+2 < len(names) && (names[i+1] == "caller_a" || names[i+1] == "caller_b") && names[i+2] == "main" {
			withCaller += s.Value[col]
		}
	}
	if leafSamples < 200 {
		t.Fatalf("only %d samples in the leaves:\n%s", leafSamples, stderr)
	}
	if withCaller*100 < leafSamples*95 {
		t.Errorf("%d of %d leaf samples have caller_a/caller_b under them, want >= 95%%", withCaller, leafSamples)
	}
	t.Logf("%d of %d leaf samples (%.1f%%) carry their caller", withCaller, leafSamples, 100*float64(withCaller)/float64(leafSamples))
}

// debianPython is the distribution's interpreter: built without frame
// pointers, the case --unwind auto must recognise.
const debianPython = "/usr/bin/python3.11"

// TestUnwindPython: the distribution's Python, which has no frame
// pointers, running a CPU-bound script: with default settings at least 95%
// of samples reach Py_BytesMain (perf's frame-pointer walk reaches it in
// none; its DWARF unwinding in over 99%).
func TestUnwindPython(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("%s not installed", debianPython)
	}
	dir := t.TempDir()
	script, err := filepath.Abs("../bench/cpu_bound.py")
	if err != nil {
		t.Fatal(err)
	}
	// A fixed amount of work (about 2 s of CPU): see TestUnwindFramelessLeaves.
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-o", "py.pb.gz", "--", debianPython, script, "2500")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "py.pb.gz"))
	with, n := shareWith(t, p, func(names []string) bool { return slices.Contains(names, "Py_BytesMain") })
	if n < 300 {
		t.Fatalf("only %d samples:\n%s", n, stderr)
	}
	if with*100 < n*95 {
		t.Errorf("%d of %d samples reach Py_BytesMain, want >= 95%%\n%s", with, n, stderr)
	}
	// The interpreter's loop, or the Python functions read from it that
	// replace its frames (issue 31).
	evals, _ := shareWith(t, p, func(names []string) bool {
		return slices.ContainsFunc(names, func(n string) bool {
			return n == "_PyEval_EvalFrameDefault" || strings.HasSuffix(n, " (cpu_bound.py)")
		})
	})
	if evals*2 < n {
		t.Errorf("%d of %d samples in _PyEval_EvalFrameDefault or a Python function", evals, n)
	}
	t.Logf("%d of %d samples (%.1f%%) reach Py_BytesMain", with, n, 100*float64(with)/float64(n))
}

// TestPlanUnwind: auto picks DWARF unwinding for binaries without frame
// pointers, including through a script's #! line, and the frame-pointer
// chain for Go; the flags are checked.
func TestPlanUnwind(t *testing.T) {
	if !sampler.UnwindSupported {
		t.Skip("no DWARF unwinding on this architecture")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	check := func(argv []string, asked, wantMode string) unwindPlan {
		t.Helper()
		cfg := sampler.Config{Argv: argv}
		u, err := planUnwind(asked, defaultStackSize, &cfg, "")
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		if u.mode != wantMode {
			t.Errorf("%v --unwind %s: mode %s (%s), want %s", argv, asked, u.mode, u.why, wantMode)
		}
		if want := map[string]int{unwindFP: leafStackSize, unwindDWARF: defaultStackSize}[wantMode]; cfg.UserStack != want || u.stack != want {
			t.Errorf("%v: stack copy %d/%d, want %d", argv, cfg.UserStack, u.stack, want)
		}
		if wantMode == unwindDWARF && cfg.RingPages < ringPagesFor(defaultStackSize) {
			t.Errorf("%v: %d ring pages for stack copies", argv, cfg.RingPages)
		}
		return u
	}
	// auto copies the stack for every target but a statically linked Go
	// binary: a dynamically linked one may map libraries that need CFI.
	dir := t.TempDir()
	staticGo := filepath.Join(dir, "goinline")
	build := exec.Command("go", "build", "-o", staticGo, "../testdata/goinline")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if u := check([]string{staticGo}, unwindAuto, unwindFP); u.why != "goinline is statically linked Go, which keeps frame pointers" {
		t.Errorf("why: %q", u.why)
	}
	check([]string{staticGo}, unwindDWARF, unwindDWARF)
	if static, _ := symbol.Linkage(exe); !static {
		check([]string{exe}, unwindAuto, unwindDWARF)
	}
	check([]string{exe}, unwindDWARF, unwindDWARF)
	fpC := testutil.Compile(t, dir, "gcc", "../testdata/leaves.c", "-O2", "-fno-omit-frame-pointer")
	check([]string{fpC}, unwindAuto, unwindDWARF)
	check([]string{fpC}, unwindFP, unwindFP)
	if _, err := os.Stat(debianPython); err == nil {
		u := check([]string{debianPython}, unwindAuto, unwindDWARF)
		if u.why != "per module: python3.11 is dynamically linked, its libraries may need CFI" {
			t.Errorf("why: %q", u.why)
		}
		check([]string{debianPython}, unwindFP, unwindFP)
		t.Setenv("PATH", "/usr/bin:/bin")
		for i, line := range []string{"#!/usr/bin/env -S python3.11 -u", "#! " + debianPython} {
			script := filepath.Join(t.TempDir(), "s.py")
			if err := os.WriteFile(script, []byte(line+"\nprint(1)\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if got := interpreterOf(script); got != debianPython {
				t.Errorf("interpreter of script %d: %q", i, got)
			}
			check([]string{script}, unwindAuto, unwindDWARF)
		}
	}
	for _, bad := range []struct {
		mode  string
		stack int
	}{{"frames", defaultStackSize}, {unwindDWARF, 0}, {unwindDWARF, sampler.MaxUserStack + 8}} {
		cfg := sampler.Config{Argv: []string{exe}}
		if _, err := planUnwind(bad.mode, bad.stack, &cfg, exe); err == nil {
			t.Errorf("--unwind %s --stack-size %d accepted", bad.mode, bad.stack)
		}
	}
}

// TestMergeStacks: the unwound pcs are kept, and continued by the
// frame-pointer chain after the deepest return address they share.
func TestMergeStacks(t *testing.T) {
	fp := []uint64{0x10, 0x30, 0x40, 0x50} // skips 0x20, the leaf's caller
	cases := []struct {
		name string
		pcs  []uint64
		stop symbol.UnwindStop
		want []uint64
	}{
		{"complete", []uint64{0x10, 0x20, 0x30, 0x40, 0x50, 0x60}, symbol.StopRoot, []uint64{0x10, 0x20, 0x30, 0x40, 0x50, 0x60}},
		{"spliced", []uint64{0x10, 0x20, 0x30}, symbol.StopCopy, []uint64{0x10, 0x20, 0x30, 0x40, 0x50}},
		{"deepest shared", []uint64{0x10, 0x20, 0x30, 0x40}, symbol.StopCopy, []uint64{0x10, 0x20, 0x30, 0x40, 0x50}},
		{"no unwind info at the leaf", []uint64{0x10}, symbol.StopNoInfo, fp},
		{"nothing shared", []uint64{0x10, 0x21, 0x31}, symbol.StopBad, []uint64{0x10, 0x21, 0x31}},
	}
	for _, c := range cases {
		if got, _ := mergeStacks(c.pcs, c.stop, fp, true, nil); !slices.Equal(got, c.want) {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
		// Where the unwinder found the frame pointer unusable, the
		// kernel's chain, which followed it anyway, is not used.
		if got, _ := mergeStacks(c.pcs, c.stop, fp, false, nil); !slices.Equal(got, c.pcs) {
			t.Errorf("%s, frame pointer not trusted: %#x, want %#x", c.name, got, c.pcs)
		}
	}
}

// TestRecordGoInlined: a Go target's stacks are whole, on the main
// goroutine and on others, and code the compiler inlined shows as an
// inlined frame (a pprof Location with several Lines) under the function
// that holds it.
func TestRecordGoInlined(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "goinline")
	build := exec.Command("go", "build", "-o", bin, "../testdata/goinline")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-o", "g.pb.gz", "--", bin, "2")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if u := testutil.UnwoundShare(t, stderr); u < 99 {
		t.Errorf("unwound %.1f%%, want >= 99\n%s", u, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "g.pb.gz"))
	col := testutil.ValueIndex(t, p, "samples")
	var inSpin, inlined, fromMain, fromGoroutine int64
	for _, s := range p.Sample {
		names := testutil.StackNames(s)
		i := slices.Index(names, "main.spin")
		if i < 0 {
			continue
		}
		inSpin += s.Value[col]
		// The Location holding main.spin lists main.mix before it.
		for _, loc := range s.Location {
			if n := len(loc.Line); n >= 2 && loc.Line[n-1].Function.Name == "main.spin" && loc.Line[n-2].Function.Name == "main.mix" {
				inlined += s.Value[col]
				break
			}
		}
		switch outer := names[len(names)-1]; {
		case slices.Contains(names, "main.main") && outer == "runtime.goexit":
			fromMain += s.Value[col]
		case slices.Contains(names, "main.main.func1") && outer == "runtime.goexit":
			fromGoroutine += s.Value[col]
		}
	}
	// The shares below need about a hundred samples. The target runs for
	// wall time, and go test runs other packages' tests beside this one on
	// the same CPUs: a CI run got 216 samples in all where an idle machine
	// gets thousands.
	if inSpin < 100 {
		t.Fatalf("%d samples in main.spin:\n%s", inSpin, stderr)
	}
	if inlined*10 < inSpin {
		t.Errorf("%d of %d samples in main.spin are in the inlined main.mix", inlined, inSpin)
	}
	if fromMain*5 < inSpin || fromGoroutine*5 < inSpin || (fromMain+fromGoroutine)*100 < inSpin*99 {
		t.Errorf("main.spin samples: %d from main.main, %d from the goroutines, of %d; all should reach runtime.goexit", fromMain, fromGoroutine, inSpin)
	}
	t.Logf("main.spin %d samples: %d in inlined main.mix; %d via main.main, %d via goroutines", inSpin, inlined, fromMain, fromGoroutine)
}
