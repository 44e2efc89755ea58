package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// Load (issue 6): a target with 500 threads sampled at 999 Hz. The long
// version, against perf record on the same target, is bench/load.sh.

// startManyThreads starts the spin workload with n busy-ish OS threads
// (each works 0.4% of its time: about 2 CPUs' worth in all), as uid when uid
// is not 0, and waits until they all exist.
func startManyThreads(t *testing.T, n int, uid uint32) int {
	t.Helper()
	cmd := exec.Command(cctopBin, "workload", "spin", "-threads", strconv.Itoa(n), "-busy", "0.004", "-duration", "120s")
	// Every locked thread may run at once: hundreds of runnable threads
	// on a 2-CPU machine, as a server under load has.
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(n))
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	startCmd(t, cmd)
	pid := cmd.Process.Pid
	deadline := time.Now().Add(30 * time.Second)
	for {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if len(ents) >= n {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the target has %d threads after 30 s, want %d", len(ents), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRecordLoad: 500 threads sampled at 999 Hz for 3 s. Records the
// rings could not hold are counted as lost in the summary, and the profile
// is whole: as many samples as the summary says, every one with a stack
// and a thread, from hundreds of the threads.
func TestRecordLoad(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	pid := startManyThreads(t, 500, 0)
	dir := t.TempDir()
	c := startCctop(t, dir, "record", "-F", "999", "-d", "3s", "-p", strconv.Itoa(pid), "-o", "load.pb.gz")
	stderr, code := c.wait(t, 180*time.Second)
	if code != 0 {
		t.Fatalf("cctop exit %d:\n%s", code, stderr)
	}
	m := summaryRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary line:\n%s", stderr)
	}
	samples, _ := strconv.Atoi(m[1])
	threads, _ := strconv.Atoi(m[2])
	lost, _ := strconv.Atoi(m[3])
	p := testutil.ReadProfile(t, filepath.Join(dir, "load.pb.gz"))
	if got := testutil.SumValue(t, p, "samples"); got != int64(samples) {
		t.Errorf("the profile holds %d samples, the summary says %d", got, samples)
	}
	tids := map[int64]bool{}
	cpu := testutil.ValueIndex(t, p, "cpu")
	flow := testutil.ValueIndex(t, p, "calls_flow")
	for _, s := range p.Sample {
		if s.Value[0] == 0 && s.Value[flow] > 0 && len(s.NumLabel["thread_id"]) == 1 {
			continue // an edge control-flow correction predicts: no sample fell there
		}
		if len(s.Location) == 0 || s.Value[0] <= 0 || s.Value[cpu] <= 0 || len(s.NumLabel["thread_id"]) != 1 {
			t.Fatalf("malformed sample: %d locations, values %v, labels %v", len(s.Location), s.Value, s.NumLabel)
		}
		tids[s.NumLabel["thread_id"][0]] = true
	}
	spin := 0
	for _, s := range p.Sample {
		if hasChain(testutil.StackNames(s), pkg+"spinLeaf", pkg+"spinCaller") {
			spin += int(s.Value[0])
		}
	}
	t.Logf("%d samples from %d threads (%d seen), %d lost; %d in spinCaller -> spinLeaf", samples, len(tids), threads, lost, spin)
	if threads < 500 {
		t.Errorf("the summary counts %d threads, want the target's 500 and more", threads)
	}
	if samples < 300 || len(tids) < 100 {
		t.Errorf("%d samples from %d threads: want hundreds from hundreds", samples, len(tids))
	}
	if spin < samples/2 {
		t.Errorf("%d of %d samples in spinCaller -> spinLeaf", spin, samples)
	}
	for _, bad := range []string{"malformed record", "too many open files", "not sampled"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("%q in the output:\n%s", bad, stderr)
		}
	}
}

// hasCap reports whether this process has capability bit c effective.
func hasCap(c uint) bool {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n&(1<<c) != 0
		}
	}
	return false
}

const capSysResource = 24

// TestRecordFileLimit: attaching to 500 threads takes about 1000
// descriptors. Under a low soft limit cctop raises it to the hard one;
// under a low hard limit it raises that where it may (CAP_SYS_RESOURCE) and
// otherwise says in one line which limit, how many it needs and the fix.
func TestRecordFileLimit(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to set limits and switch users")
	}
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) not installed")
	}
	record := func(t *testing.T, dir string, uid uint32, limit string, pid int) (string, int) {
		cmd := exec.Command("prlimit", "--nofile="+limit, cctopBin, "record", "--calls", "none", "-d", "1s", "-p", strconv.Itoa(pid), "-o", "l.folded", "--format", "folded")
		cmd.Dir = dir
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	oneLine := func(t *testing.T, out string, want ...string) {
		t.Helper()
		if strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("not one line:\n%s", out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("no %q in %q", w, out)
			}
		}
		var n, need int
		if i := strings.Index(out, "sampling "); i < 0 {
			t.Errorf("no thread count in %q", out)
		} else if fmt.Sscanf(out[i:], "sampling %d threads takes about %d descriptors", &n, &need); n < 500 || need < 2*n {
			t.Errorf("%d threads, %d descriptors in %q: want the target's 500 threads on 2 or more CPUs", n, need, out)
		}
	}

	t.Run("root", func(t *testing.T) {
		pid := startManyThreads(t, 500, 0)
		dir := t.TempDir()
		out, code := record(t, dir, 0, "64:4096", pid)
		if code != 0 || !summaryRe.MatchString(out) {
			t.Errorf("soft limit 64, hard 4096: exit %d\n%s", code, out)
		}
		out, code = record(t, dir, 0, "64:64", pid)
		if hasCap(capSysResource) {
			if code != 0 || !strings.Contains(out, "raised the open-file limit (RLIMIT_NOFILE) from 64 to") {
				t.Errorf("hard limit 64 with CAP_SYS_RESOURCE: exit %d\n%s", code, out)
			}
		} else {
			if code != 1 {
				t.Errorf("hard limit 64 without CAP_SYS_RESOURCE: exit %d\n%s", code, out)
			}
			oneLine(t, out, "RLIMIT_NOFILE is 64 (hard 64)", "ulimit -Hn", "CAP_SYS_RESOURCE")
		}
		t.Logf("hard limit 64 as root: %s", strings.TrimSpace(out))
	})

	t.Run("nobody", func(t *testing.T) {
		dir := nobodyDir(t)
		pid := startManyThreads(t, 500, 65534)
		out, code := record(t, dir, 65534, "64:64", pid)
		if code != 1 {
			t.Errorf("as nobody under 64 descriptors: exit %d\n%s", code, out)
		}
		oneLine(t, out, "RLIMIT_NOFILE is 64 (hard 64)", "ulimit -n ", "run cctop as root")
		t.Logf("as nobody: %s", strings.TrimSpace(out))
		out, code = record(t, dir, 65534, "64:4096", pid)
		if code != 0 || !summaryRe.MatchString(out) {
			t.Errorf("as nobody, soft limit 64, hard 4096: exit %d\n%s", code, out)
		}
	})
}
