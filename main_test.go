package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/sampler"
)

// cctopBin is a cctop binary built once for the end-to-end tests, which run
// it as a user would.
var cctopBin string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == releaseCmd {
		// A helper process running cctop's top (see runHelper) hands its
		// probe events to its own executable, this test binary, to close.
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "cctop-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cctopBin = filepath.Join(dir, "cctop")
	if out, err := exec.Command("go", "build", "-o", cctopBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCctop runs the built binary and returns stdout, stderr and exit code.
func runCctop(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(cctopBin, args...)
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

func skipIfNoPerf(t *testing.T) {
	t.Helper()
	ev, _ := sampler.ParseEvent("cpu-clock")
	if err := sampler.ProbeEvent(ev, true); err != nil {
		t.Skipf("perf_event_open not permitted here: %v", err)
	}
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"record", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"record"}, 2, "nothing to sample"},
		{[]string{"record", "-p", "1", "--", "true"}, 2, "not both"},
		{[]string{"record", "-F", "99", "-c", "1000", "--", "true"}, 2, "exclusive"},
		{[]string{"record", "-e", "nosuch", "--", "true"}, 2, `unknown event "nosuch"`},
		{[]string{"record", "-d", "soon", "--", "true"}, 2, "bad duration"},
		{[]string{"record", "--format", "svg", "--", "true"}, 2, "unknown --format"},
		{[]string{"record", "-p", "999999999"}, 1, "no such process: 999999999"},
		{[]string{"record", "--", "/nonexistent/prog"}, 1, "command not found: /nonexistent/prog"},
		{[]string{"record", "-o", "/nonexistent-dir/x.pb.gz", "--", "true"}, 1, "cannot write /nonexistent-dir/x.pb.gz"},
		{[]string{"workload", "nosuch"}, 2, "nosuch"},
		{[]string{"doctor", "extra"}, 2, "doctor takes no arguments"},
		{[]string{"record", "--trigger", "bogus", "--", "true"}, 2, `unknown --trigger "bogus"`},
		{[]string{"record", "--trigger", "exact", "--calls", "none", "--", "true"}, 2, "--trigger exact needs the functions to probe"},
		{[]string{"record", "--calls", "uprobe:", "--", "true"}, 2, "no functions given"},
		{[]string{"record", "--calls", "sometimes", "--", "true"}, 2, "--calls"},
		{[]string{"record", "--alpha", "-1", "--", "true"}, 2, "--alpha must be >= 0"},
		{[]string{"eval", "--workload", "nope"}, 2, `unknown --workload "nope"`},
	}
	for _, c := range cases {
		_, stderr, code := runCctop(t, dir, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("cctop %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
			t.Errorf("cctop %s: stack trace on bad input:\n%s", strings.Join(c.args, " "), stderr)
		}
		if c.code == 1 && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("cctop %s: error is not one line:\n%s", strings.Join(c.args, " "), stderr)
		}
	}
	cycles, _ := sampler.ParseEvent("cycles")
	if sampler.ProbeEvent(cycles, true) != nil {
		_, stderr, code := runCctop(t, dir, "record", "--calls", "hw", "--", "true")
		if code != 1 || !strings.Contains(stderr, "--calls hw: no hardware PMU here") {
			t.Errorf("record --calls hw without a PMU: exit %d, %q", code, stderr)
		}
		_, stderr, code = runCctop(t, dir, "record", "-e", "cycles", "--", "true")
		if code != 1 || !strings.Contains(stderr, "no hardware PMU") || !strings.Contains(stderr, "-e cpu-clock") {
			t.Errorf("record -e cycles without a PMU: exit %d, %q", code, stderr)
		}
	}
	if _, _, code := runCctop(t, dir, "help"); code != 0 {
		t.Errorf("help exits %d", code)
	}
}

func TestDoctor(t *testing.T) {
	out, _, code := runCctop(t, t.TempDir(), "doctor")
	cycles, _ := sampler.ParseEvent("cycles")
	clock, _ := sampler.ParseEvent("cpu-clock")
	sampling := sampler.ProbeEvent(clock, true) == nil
	if (code == 0) != sampling {
		t.Fatalf("doctor exits %d while cpu-clock sampling works=%v\n%s", code, sampling, out)
	}
	line := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, name) {
				return l
			}
		}
		t.Fatalf("no %q line in:\n%s", name, out)
		return ""
	}
	hw := line("hardware PMU")
	if hasPMU := sampler.ProbeEvent(cycles, true) == nil; hasPMU != strings.Contains(hw, " ok ") {
		t.Errorf("PMU present=%v but doctor says %q", hasPMU, hw)
	}
	if !strings.Contains(hw, " ok ") && !strings.Contains(out, "fix:") {
		t.Errorf("no fix given:\n%s", out)
	}
	up := line("uprobes")
	if os.Geteuid() == 0 {
		if _, err := sampler.UprobeType(); err == nil && !strings.Contains(up, "counted 1000 of 1000") {
			t.Errorf("running as root with a uprobe PMU, but: %q", up)
		}
	}
	cc := line("call counter")
	if sampler.ProbeEvent(cycles, true) != nil && strings.Contains(up, " ok ") {
		if !strings.Contains(cc, "hardware counters absent") || !strings.Contains(cc, "uprobes") || !strings.Contains(cc, "per hit") {
			t.Errorf("without a PMU the doctor must name the uprobe fallback and its cost: %q", cc)
		}
	}
	line("perf_event_paranoid")
	line("kernel")
}
