package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
)

// cctopBin is a cctop binary built once for the end-to-end tests, which run
// it as a user would.
var cctopBin string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == engine.ReleaseCmd {
		// A helper process running cctop's top (see runHelper) hands its
		// probe events to its own executable, this test binary, to close,
		// and their tracefs probes to delete, as cctop's release child does.
		engine.Release(os.Args[2:])
		os.Exit(0)
	}
	os.Exit(testutil.Main(m, &cctopBin))
}

// TestCLIErrors runs the binary on bad arguments: each gets a non-zero
// exit and one line of error starting "cctop: ", never a panic or a stack
// trace. A usage error (exit 2) prints the usage after its line.
func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "notexec")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	aFile := filepath.Join(dir, "afile")
	os.WriteFile(aFile, nil, 0o644)
	os.Symlink("/dev/null", filepath.Join(dir, "devlink"))
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	waitZombie(t, zombie.Process.Pid)
	zpid := fmt.Sprint(zombie.Process.Pid)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"record", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"agent", "-o", filepath.Join(dir, "a.pb.gz")}, 2, "nothing to sample"},
		{[]string{"agent", "-o", filepath.Join(dir, "a.pb.gz"), "--"}, 2, "nothing to sample"},
		{[]string{"record", "-a", "-p", "1"}, 2, "-a samples every process: give no -p PID or command with it"},
		{[]string{"top", "--all", "--", "true"}, 2, "-a samples every process"},
		{[]string{"record", "-C", "x", "--", "true"}, 2, `-C: bad CPU list "x"`},
		{[]string{"record", "-p", "1,999999999"}, 1, "no such process: 999999999"},
		{[]string{"record", "-p", "1,0"}, 2, "bad PID 0"},
		{[]string{"record", "-p", "1,x"}, 2, `bad PID "x"`},
		{[]string{"record", "--pid-of", "postgres", "--", "true"}, 2, "not both"},
		{[]string{"record", "-a", "--pid-of", "postgres"}, 2, "-a samples every process: give no -p or --pid-of with it"},
		{[]string{"record", "--pid-of", "a,,b"}, 2, "empty name"},
		{[]string{"record", "-C", "4096", "--", "true"}, 1, "-C: CPU 4096 is not online"},
		{[]string{"record", "-p", "1", "--", "true"}, 2, "not both"},
		{[]string{"record", "-p", "0"}, 2, "bad PID 0"},
		{[]string{"record", "-p", "-1"}, 2, "bad PID -1"},
		{[]string{"record", "-p", "abc"}, 2, `invalid value "abc" for flag -p`},
		{[]string{"record", "-p", "999999999"}, 1, "no such process: 999999999"},
		{[]string{"record", "-p", zpid}, 1, "no such process: " + zpid},
		{[]string{"top", "-p", "0"}, 2, "bad PID 0"},
		{[]string{"top", "-p", "999999999"}, 1, "no such process: 999999999"},
		{[]string{"record", "-F", "99", "-c", "1000", "--", "true"}, 2, "exclusive"},
		{[]string{"record", "-F", "0", "--", "true"}, 2, "-F must be at least 1"},
		{[]string{"record", "-F", "fast", "--", "true"}, 2, `invalid value "fast" for flag -F`},
		{[]string{"record", "-F", "-5", "--", "true"}, 2, `invalid value "-5" for flag -F`},
		{[]string{"record", "-c", "0", "--", "true"}, 2, "-c must be at least 1"},
		{[]string{"record", "-c", "x", "--", "true"}, 2, `invalid value "x" for flag -c`},
		{[]string{"record", "-e", "nosuch", "--", "true"}, 2, `unknown event "nosuch"`},
		{[]string{"record", "-d", "soon", "--", "true"}, 2, "bad duration"},
		{[]string{"record", "-d", "0", "--", "true"}, 2, "duration must be positive"},
		{[]string{"record", "-d", "-1s", "--", "true"}, 2, "duration must be positive"},
		{[]string{"record", "--format", "svg", "--", "true"}, 2, "unknown --format"},
		{[]string{"record", "--unwind", "sideways", "--", "true"}, 2, `unknown --unwind "sideways"`},
		{[]string{"record", "--unwind", "dwarf", "--stack-size", "0", "--", "true"}, 2, "--stack-size must be between"},
		{[]string{"record", "--stack-size", "100000000", "--", "true"}, 2, "--stack-size must be between"},
		{[]string{"record", "--stack-size", "big", "--", "true"}, 2, `invalid value "big" for flag -stack-size`},
		{[]string{"top", "--refresh", "0s", "--", "true"}, 2, "--refresh must be a positive duration"},
		{[]string{"top", "--refresh", "soon", "--", "true"}, 2, `invalid value "soon" for flag -refresh`},
		{[]string{"record", "--refresh", "1s", "--", "true"}, 2, "flag provided but not defined: -refresh"},
		{[]string{"record", "--", "/nonexistent/prog"}, 1, "command not found: /nonexistent/prog"},
		{[]string{"record", "--", "cctop-no-such-command"}, 1, "command not found: cctop-no-such-command"},
		{[]string{"record", "--", notExec}, 1, "cannot run " + notExec + ": permission denied"},
		{[]string{"record", "--", dir}, 1, "cannot run " + dir + ": is a directory"},
		{[]string{"top", "--", "/nonexistent/prog"}, 1, "command not found: /nonexistent/prog"},
		{[]string{"record", "-o", "/nonexistent-dir/x.pb.gz", "--", "true"}, 1, "cannot write /nonexistent-dir/x.pb.gz: no such file or directory"},
		{[]string{"record", "-o", "/proc/x.pb.gz", "--", "true"}, 1, "cannot write /proc/x.pb.gz: "},
		{[]string{"record", "-o", aFile + "/x.pb.gz", "--", "true"}, 1, "cannot write " + aFile + "/x.pb.gz: not a directory"},
		{[]string{"record", "-o", dir, "--", "true"}, 1, "cannot write " + dir + ": is a directory"},
		{[]string{"record", "-o", "/dev/null", "--", "true"}, 1, "cannot write /dev/null: not a regular file"},
		{[]string{"record", "-o", filepath.Join(dir, "devlink"), "--", "true"}, 1, "not a regular file"},
		{[]string{"record", "-o", "", "--", "true"}, 2, "-o needs a file name"},
		{[]string{"workload", "nosuch"}, 2, "nosuch"},
		{[]string{"workload"}, 2, "workload needs a name"},
		{[]string{"doctor", "extra"}, 2, "doctor takes no arguments"},
		{[]string{"demo", "extra"}, 2, "demo takes no arguments"},
		{[]string{"record", "--trigger", "bogus", "--", "true"}, 2, `unknown --trigger "bogus"`},
		{[]string{"record", "--trigger", "calls", "--", "true"}, 2, "--trigger calls needs the functions to probe"},
		{[]string{"record", "--trigger", "exact", "--calls", "none", "--", "true"}, 2, "--trigger exact needs the functions to probe"},
		{[]string{"record", "--calls", "uprobe:", "--", "true"}, 2, "no functions given"},
		{[]string{"record", "--calls", "uprobe:,", "--", "true"}, 2, "is empty"},
		{[]string{"record", "--calls", "sometimes", "--", "true"}, 2, "--calls"},
		{[]string{"record", "--calls", "uprobe:NoSuchFunction", "--", "true"}, 1, "NoSuchFunction"},
		{[]string{"record", "--alpha", "-1", "--", "true"}, 2, "--alpha must be >= 0"},
		{[]string{"record", "--alpha", "NaN", "--", "true"}, 2, "--alpha must be >= 0 and finite"},
		{[]string{"record", "--alpha", "Inf", "--", "true"}, 2, "--alpha must be >= 0 and finite"},
		{[]string{"record", "--alpha", "x", "--", "true"}, 2, `invalid value "x" for flag -alpha`},
		{[]string{"eval", "--workload", "nope"}, 2, `unknown --workload "nope"`},
		{[]string{"eval", "--alpha", "1,NaN"}, 2, "bad --alpha list"},
		{[]string{"eval", "--default-alpha", "-1"}, 2, "--default-alpha must be >= 0"},
		{[]string{"eval", "extra"}, 2, "eval takes no arguments"},
		{[]string{"eval", "--json", "/nonexistent-dir/e.json"}, 1, "cannot write /nonexistent-dir/e.json: no such file or directory"},
	}
	var usage strings.Builder
	printUsage(&usage)
	for _, c := range cases {
		_, stderr, code := testutil.Run(t, cctopBin, dir, c.args...)
		checkCLIError(t, strings.Join(c.args, " "), code, stderr, c.code, c.want, usage.String())
	}
	if os.Geteuid() == 0 {
		// Root writes anywhere it likes: nobody cannot write into a
		// directory of root's.
		ro, err := os.MkdirTemp("", "cctop-ro-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(ro)
		os.Chmod(ro, 0o755)
		os.Chmod(filepath.Dir(cctopBin), 0o755)
		cmd := exec.Command(cctopBin, "record", "-o", filepath.Join(ro, "x.pb.gz"), "--", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err = cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("record as nobody into a directory of root's: %v", err)
		}
		checkCLIError(t, "record -o (read-only directory)", ee.ExitCode(), stderr.String(), 1,
			"cannot write "+filepath.Join(ro, "x.pb.gz")+": permission denied", usage.String())
	}
	cycles, _ := sampler.ParseEvent("cycles")
	if sampler.ProbeEvent(cycles, true) != nil {
		_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "hw", "--", "true")
		if code != 1 || !strings.Contains(stderr, "--calls hw: no hardware PMU here") {
			t.Errorf("record --calls hw without a PMU: exit %d, %q", code, stderr)
		}
		_, stderr, code = testutil.Run(t, cctopBin, dir, "record", "-e", "cycles", "--", "true")
		if code != 1 || !strings.Contains(stderr, "no hardware PMU") || !strings.Contains(stderr, "-e cpu-clock") {
			t.Errorf("record -e cycles without a PMU: exit %d, %q", code, stderr)
		}
	}
	if _, _, code := testutil.Run(t, cctopBin, dir, "help"); code != 0 {
		t.Errorf("help exits %d", code)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".cctop-*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// checkCLIError checks what cctop printed on an error: exit status code,
// a first line "cctop: ..." holding want, and after it nothing, or for a
// usage error (exit 2) the usage; never a panic or a stack trace. With no
// arguments at all cctop prints only the usage.
func checkCLIError(t *testing.T, what string, code int, stderr string, wantCode int, want, usage string) {
	t.Helper()
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
		t.Errorf("cctop %s: stack trace on bad input:\n%s", what, stderr)
		return
	}
	first, rest, _ := strings.Cut(stderr, "\n")
	if code != wantCode || !strings.Contains(stderr, want) {
		t.Errorf("cctop %s: exit %d, stderr %q; want exit %d and %q", what, code, stderr, wantCode, want)
		return
	}
	if stderr == usage {
		return
	}
	if !strings.HasPrefix(first, "cctop: ") || !strings.Contains(first, want) {
		t.Errorf("cctop %s: the first line is not the error: %q", what, first)
	}
	switch {
	case code == 2 && rest != usage:
		t.Errorf("cctop %s: the usage does not follow the error:\n%s", what, stderr)
	case code != 2 && rest != "":
		t.Errorf("cctop %s: error is not one line:\n%s", what, stderr)
	}
}

// waitZombie waits for pid, a child not waited for, to be a zombie.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return
		}
	}
	t.Fatalf("process %d did not become a zombie", pid)
}

func TestDoctor(t *testing.T) {
	out, _, code := testutil.Run(t, cctopBin, t.TempDir(), "doctor")
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
	// Branch stacks need the PMU: where it is absent the line says so.
	if br := line("branch stacks"); (sampler.ProbeBranchStack() == nil) != strings.Contains(br, " ok ") ||
		sampler.ProbeEvent(cycles, true) != nil && !strings.Contains(br, "no hardware PMU") {
		t.Errorf("branch stacks available=%v, but doctor says %q", sampler.ProbeBranchStack() == nil, br)
	}
	line("perf_event_paranoid")
	line("kernel")
	// The permission checks: each has its line; as root they all pass
	// (launching as long as no tracer or seccomp filter is in the way).
	for _, name := range []string{"capabilities", "attach (-p)", "ring buffers", "launch (ptrace)", "kernel frames", "kernel symbols"} {
		l := line(name)
		if os.Geteuid() == 0 && sampling && name != "launch (ptrace)" && name != "kernel symbols" && !strings.Contains(l, " ok ") {
			t.Errorf("as root: %q", l)
		}
	}
	if strings.Contains(out, "goroutine ") {
		t.Errorf("stack trace:\n%s", out)
	}
}

// TestWorkloadFlagError: a workload's bad flag is said once, after the
// workload's own flags, not buried under cctop's usage.
func TestWorkloadFlagError(t *testing.T) {
	_, stderr, code := testutil.Run(t, cctopBin, t.TempDir(), "workload", "sleep", "-threads", "0")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; last != "cctop: workload sleep: -threads must be > 0" {
		t.Errorf("last line %q, want the error once:\n%s", last, stderr)
	}
	if strings.Contains(stderr, "live calling-context profiler") {
		t.Errorf("cctop's usage follows a workload's flag error:\n%s", stderr)
	}
}
