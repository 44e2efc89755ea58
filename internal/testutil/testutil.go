// Package testutil holds what the tests of cctop's packages share: a cctop
// binary built for them, running it, and skipping where perf_event_open or
// a compiler is missing.
package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
	"github.com/google/pprof/profile"
)

// BuildCctop builds the cctop command into a new temporary directory and
// returns its path; the caller removes filepath.Dir(bin) when done.
func BuildCctop() (bin string, err error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	dir, err := os.MkdirTemp("", "cctop-test-")
	if err != nil {
		return "", err
	}
	bin = filepath.Join(dir, "cctop")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cctop/cctop")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Run runs bin with args in dir and returns its stdout, stderr and exit
// code.
func Run(t *testing.T, bin, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// SkipIfNoPerf skips t where perf_event_open may not sample this user's
// own processes.
func SkipIfNoPerf(t *testing.T) {
	t.Helper()
	ev, _ := sampler.ParseEvent("cpu-clock")
	if err := sampler.ProbeEvent(ev, true); err != nil {
		t.Skipf("perf_event_open not permitted here: %v", err)
	}
}

// SkipIfNoPerfRecord skips t where Linux perf is not installed or its
// record, with flags, does not work here: the tests that compare with it.
func SkipIfNoPerfRecord(t *testing.T, flags ...string) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	args := append(append([]string{"record", "-q"}, flags...), "-o", "/dev/null", "true")
	if err := exec.Command("perf", args...).Run(); err != nil {
		t.Skipf("perf record does not work here: %v", err)
	}
}

// Compile builds src with compiler (gcc, g++) and flags into dir, skipping
// t where the compiler is missing, and returns the binary's path.
func Compile(t testing.TB, dir, compiler, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath(compiler); err != nil {
		t.Skipf("%s not installed", compiler)
	}
	bin := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	if out, err := exec.Command(compiler, append(flags, "-o", bin, src)...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, out)
	}
	return bin
}

// ReadTrim is the content of the file at path without surrounding space,
// or "unknown" when it cannot be read.
func ReadTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// WorkloadPkg prefixes the symbols of the built-in workloads' functions.
const WorkloadPkg = "github.com/cctop/cctop/workload."

// SkipIfNoUprobes skips t where this user may not count calls with a
// uprobe in bin, a cctop binary.
func SkipIfNoUprobes(t *testing.T, bin string) {
	t.Helper()
	SkipIfNoPerf(t)
	off, err := symbol.FuncOffset(bin, WorkloadPkg+"densityLeaf")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sampler.OpenUprobeCounter(bin, off, 0)
	if err != nil {
		t.Skipf("uprobes not permitted here: %v", err)
	}
	c.Close()
}

// ReadProfile parses the pprof profile at path.
func ReadProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return p
}

// StackNames is a sample's function names, leaf first.
func StackNames(s *profile.Sample) []string {
	var names []string
	for _, loc := range s.Location {
		for _, ln := range loc.Line {
			names = append(names, ln.Function.Name)
		}
	}
	return names
}

// SumValue is the total of the profile's column typ over all samples.
func SumValue(t *testing.T, p *profile.Profile, typ string) int64 {
	t.Helper()
	col := ValueIndex(t, p, typ)
	var n int64
	for _, s := range p.Sample {
		n += s.Value[col]
	}
	return n
}

// ValueIndex is the column of sample type typ in p.
func ValueIndex(t *testing.T, p *profile.Profile, typ string) int {
	t.Helper()
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	t.Fatalf("no sample type %q in %v", typ, p.SampleType)
	return -1
}

// UnwoundShare reads the summary's share of stacks that reached a root.
func UnwoundShare(t *testing.T, summary string) float64 {
	t.Helper()
	i := strings.Index(summary, "cctop: stacks: ")
	var pct float64
	if i < 0 {
		t.Fatalf("no stacks line in the summary:\n%s", summary)
	}
	if _, err := fmt.Sscanf(summary[i:], "cctop: stacks: %g%%", &pct); err != nil {
		t.Fatalf("stacks line: %v\n%s", err, summary)
	}
	return pct
}

// Main is the body of a TestMain whose tests need the cctop binary: it
// builds it into *bin, runs the tests, removes the binary and returns the
// exit code.
func Main(m *testing.M, bin *string) int {
	var err error
	if *bin, err = BuildCctop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(filepath.Dir(*bin))
	return m.Run()
}

// Column is the index of p's sample type typ, failing the test if p has none.
func Column(t testing.TB, p *profile.Profile, typ string) int {
	t.Helper()
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i
		}
	}
	t.Fatalf("no %s column: %v", typ, p.SampleType)
	return -1
}
