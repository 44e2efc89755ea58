package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// TestRecordUnprivileged: at perf_event_paranoid 2 an ordinary user can
// profile their own processes: cctop must not demand root, and it says that
// it left kernel frames out.
func TestRecordUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	if p := testutil.ReadTrim("/proc/sys/kernel/perf_event_paranoid"); p != "2" {
		t.Skipf("perf_event_paranoid is %s, this test is about 2", p)
	}
	dir := nobodyDir(t)
	cmd := exec.Command(cctopBin, "record", "-o", "u.folded", "--format", "folded", "--", cctopBin, "workload", "spin", "-duration", "1s")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("record as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kernel frames excluded") {
		t.Errorf("no note about kernel frames:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.folded"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "workload.spinCaller;github.com/cctop/cctop/workload.spinLeaf") {
		t.Errorf("no spinCaller;spinLeaf stacks in:\n%.400s", b)
	}
	fi, _ := os.Stat(filepath.Join(dir, "u.folded"))
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 {
		t.Errorf("output owned by uid %d", st.Uid)
	}
}

// TestOffCPUUnprivileged: at perf_event_paranoid 2 an ordinary user gets
// off-CPU and wall time of their own process, with user stacks: the sleep
// workload's naps are under sleepNap, named by their system call, in the
// folded wall stacks; and doctor, run as that user, says the stacks come
// from the wait probes and what is missing.
func TestOffCPUUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	if p := testutil.ReadTrim("/proc/sys/kernel/perf_event_paranoid"); p != "2" {
		t.Skipf("perf_event_paranoid is %s, this test is about 2", p)
	}
	dir := nobodyDir(t)
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd := exec.Command(cctopBin, "record", "--mode", "wall", "--calls", "none", "-o", "w.folded", "--format", "folded",
		"--", cctopBin, "workload", "sleep", "-rounds", "15")
	cmd.Dir, cmd.SysProcAttr = dir, nobody
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("record --mode wall as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stacks by wait probes") {
		t.Errorf("the summary does not say the stacks came from the wait probes:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "w.folded"))
	if err != nil {
		t.Fatal(err)
	}
	// Folded wall stacks: "...;workload.sleepNap;...;[off-cpu: clock_nanosleep] NS".
	var nap, all int64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("bad folded line %q", line)
		}
		if strings.Contains(line, "workload.sleepWorker") {
			all += v
			if strings.Contains(line, "workload.sleepNap;") && strings.Contains(line, "nanosleep]") {
				nap += v
			}
		}
	}
	// Against the workload's own measure: on a loaded machine its compute
	// takes longer than 30 ms of wall time, and its nap share drops.
	var truth, rq, loop float64
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "total" {
			for i := 1; i+1 < len(f); i++ {
				switch f[i] {
				case "napshare":
					truth, _ = strconv.ParseFloat(f[i+1], 64)
				case "runqueue":
					d, _ := time.ParseDuration(f[i+1])
					rq = float64(d)
				case "loop":
					d, _ := time.ParseDuration(f[i+1])
					loop = float64(d)
				}
			}
		}
	}
	share := float64(nap) / float64(max(all, 1))
	t.Logf("as nobody: the naps hold %.1f%% of the sleep thread's wall time; the workload measured %.1f%%, and waited to run %.0f%% of its loop", 100*share, 100*truth, 100*rq/max(loop, 1))
	tol := 0.05
	if rq > 0.05*loop {
		tol = 0.10 // a loaded machine: see engine's TestOffCPUSleep
	}
	switch {
	case truth == 0:
		t.Errorf("no nap share in the workload's output:\n%s", out)
	case rq > loop/3:
		t.Logf("the machine is too loaded to judge the split")
	case math.Abs(share-truth) > tol:
		t.Errorf("the naps hold %.1f%% of the sleep thread's wall time, the workload measured %.1f%%:\n%.600s", 100*share, 100*truth, b)
	}

	doc := exec.Command(cctopBin, "doctor")
	doc.SysProcAttr = nobody
	dout, _ := doc.CombinedOutput()
	if !regexp.MustCompile(`off-CPU \(wall\)\s+ok\s+wait probes: .*Missing without kernel samples`).Match(dout) {
		t.Errorf("doctor as nobody does not say how off-CPU stacks are taken and what is missing:\n%s", dout)
	}
}

// TestHostUnprivileged (issue 32): at perf_event_paranoid 2 an ordinary
// user's `cctop record` and `cctop top` with no target (the host) are
// refused in one line that says why and how to allow it, exit 1, as perf
// record -a is.
func TestHostUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	if p := testutil.ReadTrim("/proc/sys/kernel/perf_event_paranoid"); p != "2" {
		t.Skipf("perf_event_paranoid is %s, this test is about 2", p)
	}
	dir := nobodyDir(t)
	for _, args := range [][]string{{"record", "-d", "1s", "-o", "h.pb.gz"}, {"top"}, {"record", "-p", "1,2", "-d", "1s"}} {
		cmd := exec.Command(cctopBin, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		out := strings.TrimSpace(stderr.String())
		if code != 1 || strings.Contains(out, "\n") || !strings.Contains(out, "system-wide sampling refused") || !strings.Contains(out, "perf_event_paranoid=0") {
			t.Errorf("%v as nobody: exit %d (%v), want 1 and one line with the fix:\n%s", args, code, err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "h.pb.gz")); err == nil {
			t.Errorf("%v: a profile written for a refused run", args)
		}
	}
}
