package engine

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/symbol/cfi"
)

// Per-module unwinding (issue 13): testdata/unwmain.c calls
// testdata/unwlib.c's lib_entry -> lib_mid -> lib_inner, each module built
// its own way. With default flags every stack must cross the module
// boundary both ways, or stop with the module and the reason, never
// with frames that did not run.

// unwindLib builds testdata/unwlib.c as dir/libunw_NAME.so with flags.
// Without CFI it is compiled to an object first and linked without the
// linker's own unwind tables, and the test checks that no FDE is left.
func unwindLib(t *testing.T, dir, name string, cfi_ bool, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	lib := filepath.Join(dir, "libunw_"+name+".so")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	soname := "-Wl,-soname,libunw_" + name + ".so"
	if cfi_ {
		run(append(append([]string{"gcc", "-O2", "-shared", "-fPIC"}, flags...), soname, "-o", lib, "../testdata/unwlib.c")...)
		return lib
	}
	obj := filepath.Join(dir, name+".o")
	run(append(append([]string{"gcc", "-O2", "-fPIC", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"}, flags...), "-c", "-o", obj, "../testdata/unwlib.c")...)
	// gcc emits no .eh_frame with these flags; should one appear, strip it.
	run("objcopy", "--remove-section", ".eh_frame", "--remove-section", ".eh_frame_hdr", obj)
	run("gcc", "-shared", "-Wl,--no-ld-generated-unwind-info", soname, "-o", lib, obj)
	if n := fdes(t, lib); n != 0 {
		t.Fatalf("%s has %d FDEs, want none", lib, n)
	}
	return lib
}

// fdes is the number of FDEs in path's CFI.
func fdes(t *testing.T, path string) int {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := cfi.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return tab.Len()
}

// unwindProg builds testdata/unwmain.c against lib with flags.
func unwindProg(t *testing.T, dir, name, lib string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	libName := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(lib), "lib"), ".so")
	args := append(append([]string{"-O2"}, flags...), "-o", bin, "../testdata/unwmain.c",
		"-L"+filepath.Dir(lib), "-l"+libName, "-Wl,-rpath,"+filepath.Dir(lib))
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return bin
}

// recordDefault records bin for 2 seconds with cctop's default flags.
func recordDefault(t *testing.T, dir, bin string) (string, []stackSample) {
	t.Helper()
	out := filepath.Base(bin) + ".pb.gz"
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-o", out, "--", bin, "2")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "panic") {
		t.Fatalf("panic:\n%s", stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, out))
	col := testutil.ValueIndex(t, p, "samples")
	var ss []stackSample
	for _, s := range p.Sample {
		ss = append(ss, stackSample{names: testutil.StackNames(s), n: s.Value[col]})
	}
	return stderr, ss
}

type stackSample struct {
	names []string // leaf first
	n     int64
}

// inOrder reports whether names (leaf first) hold want as consecutive
// frames, innermost first.
func inOrder(names []string, want ...string) bool {
	for i := range names {
		if len(names)-i >= len(want) && slices.Equal(names[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// TestUnwindAcrossModules: a frame-pointer executable calling a library
// built without frame pointers, and the reverse, and a frame-pointer
// library without any CFI: with default flags at least 95% of samples
// reach main through the library's entry function, and the library's
// samples carry all three of its frames.
func TestUnwindAcrossModules(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	noFPLib := unwindLib(t, dir, "nofp", true, "-fomit-frame-pointer")
	if fdes(t, noFPLib) == 0 {
		t.Fatalf("%s has no .eh_frame", noFPLib)
	}
	fpLib := unwindLib(t, dir, "fp", true, "-fno-omit-frame-pointer")
	noCFIFPLib := unwindLib(t, dir, "nocfi_fp", false, "-fno-omit-frame-pointer")
	for _, c := range []struct {
		name, lib, prog string
	}{
		{"fp program, library without frame pointers", noFPLib, "-fno-omit-frame-pointer"},
		{"program without frame pointers, fp library", fpLib, "-fomit-frame-pointer"},
		{"fp program, fp library without CFI", noCFIFPLib, "-fno-omit-frame-pointer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := unwindProg(t, dir, "prog_"+filepath.Base(c.lib), c.lib, c.prog)
			stderr, ss := recordDefault(t, dir, bin)
			var n, through, inLib, whole int64
			for _, s := range ss {
				n += s.n
				outer := s.names[len(s.names)-1]
				e, m := slices.Index(s.names, "lib_entry"), slices.Index(s.names, "main")
				if e >= 0 && m > e && outer != cct.TruncatedName {
					through += s.n
				}
				if slices.Contains(s.names, "lib_inner") {
					inLib += s.n
					if inOrder(s.names, "lib_inner", "lib_mid", "lib_entry", "run", "main") && outer != cct.TruncatedName {
						whole += s.n
					}
				}
			}
			if n < 500 {
				t.Fatalf("only %d samples:\n%s", n, stderr)
			}
			if through*100 < n*95 {
				t.Errorf("%d of %d samples reach main through lib_entry, want >= 95%%\n%s", through, n, stderr)
			}
			if whole*100 < inLib*95 {
				t.Errorf("%d of %d samples in lib_inner have lib_inner, lib_mid, lib_entry, run, main, want >= 95%%\n%s", whole, inLib, stderr)
			}
			t.Logf("%d of %d samples (%.1f%%) reach main through lib_entry; %d of %d in lib_inner whole", through, n, 100*float64(through)/float64(n), whole, inLib)
		})
	}
}

// TestUnwindStopsWithoutCFI: a library with neither CFI nor frame pointers
// cannot be unwound. Its stacks stop there, under [truncated], and the
// summary names the module and the reason; no stack has frames above the
// library that skip its callers (a frame-pointer walk from it lands in
// main, skipping run and lib_entry).
func TestUnwindStopsWithoutCFI(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	lib := unwindLib(t, dir, "nocfi", false, "-fomit-frame-pointer")
	bin := unwindProg(t, dir, "prog_nocfi", lib, "-fno-omit-frame-pointer")
	stderr, ss := recordDefault(t, dir, bin)
	var inLib, stopped int64
	for _, s := range ss {
		i := slices.Index(s.names, "lib_inner")
		if i < 0 {
			continue
		}
		inLib += s.n
		above := s.names[i+1:]
		if slices.Contains(above, "main") && !inOrder(s.names, "lib_inner", "lib_mid", "lib_entry", "run", "main") {
			t.Errorf("garbage frames above the library: %v", s.names)
		}
		if len(above) > 0 && above[len(above)-1] == cct.TruncatedName {
			stopped += s.n
		}
	}
	if inLib < 500 {
		t.Fatalf("only %d samples in lib_inner:\n%s", inLib, stderr)
	}
	if stopped*100 < inLib*95 {
		t.Errorf("%d of %d samples in lib_inner stop under [truncated], want >= 95%%\n%s", stopped, inLib, stderr)
	}
	m := regexp.MustCompile(`stacks stop short in libunw_nocfi\.so: ([0-9.]+)% of stacks stop here, no CFI\n`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no line for libunw_nocfi.so in the summary:\n%s", stderr)
	}
	if pct, _ := strconv.ParseFloat(m[1], 64); pct < 90 {
		t.Errorf("libunw_nocfi.so: %.1f%% of stacks stop there, want >= 90\n%s", pct, stderr)
	}
}

// TestUnwindBadModules: a library whose .eh_frame is corrupt, and one
// whose file is truncated after it was mapped: cctop gives named frames
// where it can and [truncated] stacks where it cannot, and never panics.
func TestUnwindBadModules(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	lib := unwindLib(t, dir, "corrupt", true, "-fomit-frame-pointer")
	f, err := elf.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	eh := f.Section(".eh_frame")
	f.Close()
	if eh == nil {
		t.Fatalf("%s has no .eh_frame", lib)
	}
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	// Flip bytes all over the CIEs and FDEs: lengths, pointers, CFA
	// programs.
	for off := eh.Offset + 3; off < eh.Offset+eh.Size; off += 7 {
		data[off] ^= 0x5a
	}
	if err := os.WriteFile(lib, data, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := unwindProg(t, dir, "prog_corrupt", lib, "-fno-omit-frame-pointer")
	stderr, ss := recordDefault(t, dir, bin)
	checkNamedOrTruncated(t, ss, stderr)

	// Truncated: the section headers, symbols and part of the CFI cut
	// off the file the running program maps (its code and data pages
	// stay: cutting those would kill it with SIGBUS).
	tdir := filepath.Join(dir, "trunc")
	os.Mkdir(tdir, 0o755)
	tlib := unwindLib(t, tdir, "trunc", true, "-fomit-frame-pointer")
	tbin := unwindProg(t, tdir, "prog_trunc", tlib, "-fno-omit-frame-pointer")
	cut := int64(0)
	if f, err := elf.Open(tlib); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD {
				cut = max(cut, int64(p.Off+p.Filesz))
			}
		}
		f.Close()
	}
	st, err := os.Stat(tlib)
	if err != nil || cut >= st.Size() {
		t.Skipf("nothing to cut from %s past its segments (%d bytes of %v)", tlib, cut, st)
	}
	target := exec.Command(tbin, "4")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer target.Process.Kill()
	if err := os.Truncate(tlib, cut); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "2", "-o", "trunc.pb.gz", "-p", fmt.Sprint(target.Process.Pid))
	if code != 0 || strings.Contains(stderr, "panic") {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "trunc.pb.gz"))
	col := testutil.ValueIndex(t, p, "samples")
	ss = ss[:0]
	for _, s := range p.Sample {
		ss = append(ss, stackSample{names: testutil.StackNames(s), n: s.Value[col]})
	}
	checkNamedOrTruncated(t, ss, stderr)
}

// checkNamedOrTruncated: samples were taken, and each stack either
// reaches a thread's entry or ends in [truncated].
func checkNamedOrTruncated(t *testing.T, ss []stackSample, stderr string) {
	t.Helper()
	var n, bad int64
	for _, s := range ss {
		n += s.n
		if outer := s.names[len(s.names)-1]; outer != cct.TruncatedName && !rootFuncs[outer] {
			bad += s.n
			t.Errorf("stack neither whole nor truncated: %v", s.names)
		}
	}
	if n < 300 {
		t.Fatalf("only %d samples:\n%s", n, stderr)
	}
	t.Logf("%d samples; summary:\n%s", n, stderr)
}

// TestDoctorProcess: doctor -p samples a running process for about two
// seconds with default unwinding and says where its stacks stop, by
// module, after the usual checks.
func TestDoctorProcess(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	lib := unwindLib(t, dir, "nocfi", false, "-fomit-frame-pointer")
	bin := unwindProg(t, dir, "prog_nocfi", lib, "-fno-omit-frame-pointer")
	target := exec.Command(bin, "6")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	out, stderr, code := testutil.Run(t, cctopBin, dir, "doctor", "-p", fmt.Sprint(target.Process.Pid))
	if code != 0 {
		t.Fatalf("doctor -p exit %d:\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"stack unwinding", "kernel symbols", "(prog_nocfi): ", "% of samples unwound to a thread's entry",
		"bytes of user stack copied per sample", "stop short in libunw_nocfi.so: "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^stacks +NO +pid \d+ \(prog_nocfi\)`).MatchString(out) {
		t.Errorf("no failing stacks line:\n%s", out)
	}
	if _, _, code := testutil.Run(t, cctopBin, dir, "doctor", "-p", "0"); code != 2 {
		t.Errorf("doctor -p 0: exit %d, want 2", code)
	}
}
