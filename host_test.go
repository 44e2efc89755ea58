package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
)

// skipIfNoHost skips a test of sampling the whole host where perf or
// system-wide events are not allowed.
func skipIfNoHost(t *testing.T) {
	t.Helper()
	testutil.SkipIfNoPerf(t)
	if ok, why := sampler.SystemWideAllowed(); !ok {
		t.Skipf("system-wide sampling not permitted here: %s", why)
	}
}

// startWorkload starts `cctop workload ARGS...` for the test's length and
// returns its pid.
func startWorkload(t *testing.T, args ...string) int {
	t.Helper()
	w := exec.Command(cctopBin, append([]string{"workload"}, args...)...)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Process.Kill(); w.Wait() })
	return w.Process.Pid
}

// TestRecordHost (issue 32): `cctop record` with no target samples every
// process on the host, as perf record -a: two workloads started apart from
// it are in the profile under their own pid and comm labels with their hot
// functions, cctop itself is not, and the summary says it sampled the host.
// `-C` limits the CPUs, and a CPU that is not online is one line and exit 1.
func TestRecordHost(t *testing.T) {
	skipIfNoHost(t)
	spin := startWorkload(t, "spin", "-threads", "1", "-loop")
	density := startWorkload(t, "density", "-duration", "60s")
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "3s", "-o", "h.pb.gz")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "no target: sampled every process on the host") || !strings.Contains(stderr, "the host: ") || !strings.Contains(stderr, "call counter: none") {
		t.Errorf("the summary does not say the host was sampled:\n%s", stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "h.pb.gz"))
	type key struct {
		pid int64
		fn  string
	}
	by := map[key]int64{}
	comms := map[int64]string{}
	var all int64
	for _, s := range p.Sample {
		pid := int64(-1)
		if v := s.NumLabel["pid"]; len(v) == 1 {
			pid = v[0]
		}
		if c := s.Label["comm"]; len(c) == 1 {
			comms[pid] = c[0]
		}
		all += s.Value[0]
		for _, l := range s.Location {
			for _, ln := range l.Line {
				by[key{pid, ln.Function.Name}] += s.Value[0]
			}
		}
	}
	for _, c := range []struct {
		pid int
		fn  string
	}{{spin, "github.com/cctop/cctop/workload.spinLeaf"}, {density, "github.com/cctop/cctop/workload.densityLeaf"}} {
		if share := 100 * float64(by[key{int64(c.pid), c.fn}]) / float64(max(all, 1)); share < 10 {
			t.Errorf("pid %d: %s has %.1f%% of the host's samples, want >= 10%%:\n%s", c.pid, c.fn, share, stderr)
		}
		if comms[int64(c.pid)] != "cctop" {
			t.Errorf("pid %d: comm label %q, want cctop", c.pid, comms[int64(c.pid)])
		}
	}
	// Another test's cctop that quit with probes armed hands them to a
	// child that closes them (engine.Release): a process of its own,
	// which may still run, and is sampled like any other.
	releasing := map[int64]bool{}
	for k := range by {
		if strings.HasSuffix(k.fn, "cctop/engine.Release") || strings.HasSuffix(k.fn, "cctop/engine.closeInherited") {
			releasing[k.pid] = true
		}
	}
	for k := range by {
		if k.pid != int64(spin) && k.pid != int64(density) && !releasing[k.pid] && strings.Contains(k.fn, "cctop/engine.") {
			t.Errorf("cctop's own frames in the profile (pid %d: %s)", k.pid, k.fn)
			break
		}
	}

	// -C: one CPU of those online, then one that is not.
	_, stderr, code = testutil.Run(t, cctopBin, dir, "record", "-C", "0", "-d", "1s", "-o", "c.pb.gz")
	if code != 0 || !strings.Contains(stderr, "the host (1 CPU)") && !strings.Contains(stderr, "the host: ") {
		t.Errorf("-C 0: exit %d:\n%s", code, stderr)
	}
	_, stderr, code = testutil.Run(t, cctopBin, dir, "record", "-C", "4096", "-d", "1s", "-o", "x.pb.gz")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "CPU 4096 is not online") {
		t.Errorf("-C 4096: exit %d, want 1 and one line:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pb.gz")); err == nil {
		t.Error("a profile was written for a refused CPU list")
	}
}

// TestRecordChildren (issue 32): a parent that forks four workers after
// `cctop record -p PARENT` started has each worker's time in the profile
// under its own process, at least 95% of the CPU time the workers used (as
// the kernel counted it for the parent that reaped them), and the
// parent's own time under the parent's.
func TestRecordChildren(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	forker := testutil.Compile(t, dir, "gcc", "testdata/forker.c", "-O0", "-fno-omit-frame-pointer")
	cmd := exec.Command(forker, "4", "700", "1500", "600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	parent := cmd.Process.Pid
	// The workers' CPU time, as the parent's cutime and cstime once it
	// reaped them: the last look before it exits.
	var childTicks int64
	looked := make(chan struct{})
	go func() {
		defer close(looked)
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", parent))
			if err != nil {
				return
			}
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
			if len(f) > 14 && f[0] != "Z" {
				cu, _ := strconv.ParseInt(f[13], 10, 64)
				cs, _ := strconv.ParseInt(f[14], 10, 64)
				childTicks = cu + cs
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(200 * time.Millisecond) // the parent spins; its workers come after
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-p", strconv.Itoa(parent), "-o", "f.pb.gz")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	io.Copy(io.Discard, out)
	cmd.Wait()
	<-looked
	p := testutil.ReadProfile(t, filepath.Join(dir, "f.pb.gz"))
	cpu := testutil.Column(t, p, "cpu")
	byPID := map[int64]int64{}
	procs := map[int64]string{}
	for _, s := range p.Sample {
		if len(s.NumLabel["pid"]) != 1 {
			continue
		}
		pid := s.NumLabel["pid"][0]
		if v := s.Label["process"]; len(v) == 1 {
			procs[pid] = v[0]
		}
		work := false
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function.Name == map[bool]string{true: "parent_work", false: "child_work"}[pid == int64(parent)] {
					work = true
				}
			}
		}
		if work {
			byPID[pid] += s.Value[cpu]
		}
	}
	var workers int64
	n := 0
	for pid, ns := range byPID {
		if pid == int64(parent) {
			continue
		}
		n++
		workers += ns
		if !strings.HasSuffix(procs[pid], fmt.Sprintf("[pid %d]", pid)) {
			t.Errorf("worker %d's samples are labelled process %q", pid, procs[pid])
		}
	}
	if n != 4 || byPID[int64(parent)] == 0 {
		t.Errorf("child_work in %d processes, parent_work %d ns; want 4 workers and the parent: %v", n, byPID[int64(parent)], byPID)
	}
	want := childTicks * 1e9 / 100 // USER_HZ
	if want == 0 || float64(workers) < 0.95*float64(want) {
		t.Errorf("the workers' child_work has %.2fs in the profile, they used %.2fs of CPU: want >= 95%%", float64(workers)/1e9, float64(want)/1e9)
	}
	t.Logf("workers: %.3fs in the profile of %.3fs used (%.1f%%)", float64(workers)/1e9, float64(want)/1e9, 100*float64(workers)/float64(max(want, 1)))
}

// TestTopHostInTmux (issue 32): `cctop top` with no arguments at 80x24, as
// perf top: with two busy workloads of cctop's own running, the first
// screen shows each process, by comm and pid, with its hot function, and
// the header counts the processes; q leaves no probe behind.
func TestTopHostInTmux(t *testing.T) {
	skipIfNoHost(t)
	spin := startWorkload(t, "spin", "-threads", "1", "-loop")
	density := startWorkload(t, "density", "-duration", "60s")
	s := newTmux(t, 80, 24, cctopBin+" top")
	s.waitFor(`\d+ processes`, 20*time.Second)
	time.Sleep(3 * time.Second)
	scr := s.screen()
	for _, w := range []struct {
		pid int
		hot string
	}{{spin, "spinLeaf"}, {density, "density"}} {
		row := ""
		for _, l := range strings.Split(scr, "\n") {
			if strings.Contains(l, fmt.Sprintf("cctop [pid %d]", w.pid)) {
				row = l
			}
		}
		if row == "" || !strings.Contains(row, w.hot) {
			t.Errorf("no row of process %d with %s on the first screen:\n%s", w.pid, w.hot, scr)
		}
	}
	if !regexp.MustCompile(`the host \(\d+ CPUs?\), \d+ processes`).MatchString(scr) {
		t.Errorf("the header does not say the host and its processes:\n%s", scr)
	}
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 15*time.Second)
	if b, err := os.ReadFile("/sys/kernel/tracing/uprobe_events"); err == nil && strings.Contains(string(b), "cctop") {
		t.Errorf("probes left behind:\n%s", b)
	}
}

// TestSignalsEndHostRuns (issue 32): SIGTERM, SIGINT and SIGHUP at any
// moment of a loaded start-up of `record -a` and `agent --all` (during
// symbol loading, the first batches, the run), once, twice in a row, or
// through timeout(1), end the command within signalBound with its profile
// written. 20 runs, spread over the first 1.5 s from 20 ms; a run whose
// signal came before cctop's main could run (mainAfter) need only end.
func TestSignalsEndHostRuns(t *testing.T) {
	skipIfNoHost(t)
	const signalBound = 10 * time.Second
	for i := 0; i < 4; i++ {
		startWorkload(t, "spin", "-threads", "1", "-loop")
	}
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}
	early := mainAfter(t)
	dir := t.TempDir()
	for run := 0; run < 20; run++ {
		out := filepath.Join(dir, fmt.Sprintf("s%d.pb.gz", run))
		args := []string{"record", "-a", "-F", "999", "-o", out}
		if run%2 == 1 {
			args = []string{"agent", "--all", "-F", "999", "--window", "20s", "-o", out}
		}
		delay := 20*time.Millisecond + time.Duration(run)*1500*time.Millisecond/20
		sig := sigs[run%len(sigs)]
		twice := run%3 == 2
		viaTimeout := run%4 == 3
		name := fmt.Sprintf("%s/%v/%v", args[0], unix.SignalName(sig), delay)
		var cmd *exec.Cmd
		if viaTimeout {
			// timeout(1) signals its child once the delay is up, as a
			// service manager would.
			d := fmt.Sprintf("%.3f", max(delay, time.Millisecond).Seconds())
			cmd = exec.Command("timeout", append([]string{"-s", unix.SignalName(sig), d, cctopBin}, args...)...)
			name += "/timeout"
		} else {
			cmd = exec.Command(cctopBin, args...)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if !viaTimeout {
			time.Sleep(delay)
			cmd.Process.Signal(sig)
			if twice {
				time.Sleep(30 * time.Millisecond)
				cmd.Process.Signal(sig)
				name += "/twice"
			}
		}
		sent := time.Now()
		if viaTimeout {
			sent = sent.Add(delay)
		}
		select {
		case <-done:
		case <-time.After(time.Until(sent.Add(signalBound))):
			cmd.Process.Kill()
			<-done
			t.Errorf("%s: still running %v after the signal:\n%s", name, signalBound, stderr.String())
			continue
		}
		if delay < early {
			t.Logf("%s: before main runs here (%v): ended %.2fs after the signal", name, early, time.Since(sent).Seconds())
			continue
		}
		f, err := os.Open(out)
		if err != nil {
			t.Errorf("%s: no profile: %v\n%s", name, err, stderr.String())
			continue
		}
		_, err = profile.Parse(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: profile unreadable: %v", name, err)
		}
		t.Logf("%s: ended %.2fs after the signal", name, time.Since(sent).Seconds())
	}
}

// TestRecordSeveral (issue 32): -p PID,PID samples those processes and no
// other; --pid-of NAME samples the processes of that name, one started
// after the recording began too, and not cctop itself.
func TestRecordSeveral(t *testing.T) {
	skipIfNoHost(t)
	start := func() int { return startWorkload(t, "spin", "-threads", "1", "-busy", "0.3", "-loop") }
	a, b, c := start(), start(), start()
	dir := t.TempDir()
	pids := func(file string) map[int64]int64 {
		m := map[int64]int64{}
		for _, s := range testutil.ReadProfile(t, filepath.Join(dir, file)).Sample {
			if v := s.NumLabel["pid"]; len(v) == 1 {
				m[v[0]] += s.Value[0]
			}
		}
		return m
	}
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-p", fmt.Sprintf("%d,%d", a, b), "-d", "2s", "-o", "ab.pb.gz")
	if code != 0 {
		t.Fatalf("record -p A,B exit %d:\n%s", code, stderr)
	}
	if got := pids("ab.pb.gz"); len(got) != 2 || got[int64(a)] == 0 || got[int64(b)] == 0 {
		t.Errorf("record -p %d,%d: samples by pid %v", a, b, got)
	}
	if !strings.Contains(stderr, "2 processes sampled") {
		t.Errorf("the summary does not count the processes:\n%s", stderr)
	}
	cmd := exec.Command(cctopBin, "record", "--pid-of", "cctop", "-d", "3s", "-o", "n.pb.gz")
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	d := start()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record --pid-of: %v\n%s", err, errb.String())
	}
	got := pids("n.pb.gz")
	for _, pid := range []int{a, b, c, d} {
		if got[int64(pid)] == 0 {
			t.Errorf("record --pid-of cctop: nothing of pid %d (samples by pid %v)", pid, got)
		}
	}
	if got[int64(cmd.Process.Pid)] != 0 {
		t.Errorf("cctop sampled itself: %v", got)
	}
}

// TestTopSignalsAtStart (issue 32): SIGTERM, SIGINT or SIGHUP at points of
// `cctop top`'s start-up over the host (flags, plan, session, the TUI's
// first frame) end it within signalBound with the terminal given back: no
// signal waits for a key. (Here top's start over the host reaches the TUI
// in under 20 ms, so these runs mostly see the TUI's own handling; signals
// before it, during a slower start-up, are caught from top's first line.)
func TestTopSignalsAtStart(t *testing.T) {
	skipIfNoHost(t)
	const signalBound = 10 * time.Second
	startWorkload(t, "spin", "-threads", "2", "-loop")
	early := mainAfter(t)
	for i, c := range []struct {
		delay time.Duration
		sig   syscall.Signal
	}{{0, syscall.SIGTERM}, {20 * time.Millisecond, syscall.SIGINT}, {40 * time.Millisecond, syscall.SIGHUP},
		{60 * time.Millisecond, syscall.SIGTERM}, {100 * time.Millisecond, syscall.SIGTERM}, {300 * time.Millisecond, syscall.SIGINT},
		{time.Second, syscall.SIGHUP}} {
		marker := fmt.Sprintf("%dms", 1000+i) // tells this run's process apart
		s := startTmux(t, fmt.Sprintf("-sig%d", i), 80, 24, cctopBin+" top --refresh "+marker+"; echo CCTOP-EXITED $?; sleep 60")
		pid := 0
		for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); {
			pid = findProcess(cctopBin, "--refresh", marker)
			time.Sleep(2 * time.Millisecond)
		}
		if pid == 0 {
			t.Fatalf("run %d: cctop top never started:\n%s", i, s.screen())
		}
		time.Sleep(c.delay)
		syscall.Kill(pid, c.sig)
		sent := time.Now()
		code := s.waitFor(`CCTOP-EXITED (\d+)`, signalBound)[1]
		// Before main runs (the runtime's start, the race detector's:
		// 60 ms was not enough under -race in CI) a signal has its
		// default effect; after it, it is top's.
		if c.delay >= early && code != "0" {
			t.Errorf("run %d (%v after %v): exit status %s, want 0 (quit, not killed)", i, unix.SignalName(c.sig), c.delay, code)
		}
		if scr := s.screen(); strings.Contains(scr, "view top-down") {
			t.Errorf("run %d (%v after %v): the TUI's screen is left behind:\n%s", i, unix.SignalName(c.sig), c.delay, scr)
		}
		t.Logf("%v %v after the start: exit %s within %.2fs", unix.SignalName(c.sig), c.delay, code, time.Since(sent).Seconds())
	}
}

// mainAfter is how long this machine, as loaded now, takes from starting
// cctop to its main running, twice over: the longest of five runs of a
// command that ends in its flag parsing. Before then a signal has the
// kernel's default effect (the Go runtime starting; seen in CI: 60 ms, with
// both CPUs busy).
func mainAfter(t *testing.T) time.Duration {
	var worst time.Duration
	for range 5 {
		start := time.Now()
		exec.Command(cctopBin, "workload").Run()
		worst = max(worst, time.Since(start))
	}
	t.Logf("cctop reaches main and exits within %v here", worst)
	// Three times, and at least 100 ms: the start of a race-detector
	// build varies by tens of milliseconds on a loaded machine (a CI run
	// got SIGTERM's default action 60 ms after exec, with 13 ms measured
	// here just before).
	return max(3*worst, 100*time.Millisecond)
}

// findProcess is the pid of a process whose command line has every one of
// args, 0 if none.
func findProcess(args ...string) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.Split(string(b), "\x00")
		all := true
		for _, a := range args {
			all = all && slices.Contains(cmd, a)
		}
		if all {
			return pid
		}
	}
	return 0
}
