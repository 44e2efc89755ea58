package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
	"golang.org/x/sys/unix"
)

// TestRecordDensity is the first acceptance check of the engine: the
// density workload's leaf takes twice the time under call site D as under
// call site C, and the two phases are distinct contexts.
func TestRecordDensity(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	// A fixed amount of work (60 rounds, about 2 s of CPU), not a deadline:
	// a starved run under the race detector took 80 ms of leaf samples in
	// 3 s, too few for the ratio.
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-o", "d.pb.gz", "--", cctopBin, "workload", "density", "-rounds", "60")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	// Go keeps frame pointers: goroutines reach runtime.goexit.
	if u := testutil.UnwoundShare(t, stderr); u < 99 {
		t.Errorf("%.1f%% of stacks unwound, want >= 99%%:\n%s", u, stderr)
	}
	for _, want := range []string{"samples", "threads", "lost", "throttled", "densityLeaf", "wrote d.pb.gz"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", filepath.Join(dir, "d.pb.gz")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "workload.densityLeaf") {
		t.Fatalf("go tool pprof -top: %v\n%s", err, out)
	}

	p := testutil.ReadProfile(t, filepath.Join(dir, "d.pb.gz"))
	if got := []string{p.SampleType[0].Type, p.SampleType[1].Type + "/" + p.SampleType[1].Unit}; got[0] != "samples" || got[1] != "cpu/nanoseconds" {
		t.Fatalf("sample types %v", got)
	}
	cpu := testutil.ValueIndex(t, p, "cpu")
	const pkg = "github.com/cctop/cctop/workload."
	var underC, underD int64
	for _, s := range p.Sample {
		st := testutil.StackNames(s)
		if len(st) < 2 || st[0] != pkg+"densityLeaf" {
			continue
		}
		switch st[1] {
		case pkg + "densityPhaseC":
			underC += s.Value[cpu]
		case pkg + "densityPhaseD":
			underD += s.Value[cpu]
		}
		if len(s.Label["thread_name"]) == 0 || len(s.NumLabel["thread_id"]) == 0 {
			t.Fatalf("sample without thread labels: %v %v", s.Label, s.NumLabel)
		}
	}
	if underC == 0 || underD == 0 {
		t.Fatalf("leaf time under phase C %d ns, under D %d ns: phases are not distinct contexts", underC, underD)
	}
	ratio := float64(underD) / float64(underC)
	t.Logf("leaf time under D / under C = %.3f (%d / %d ns)", ratio, underD, underC)
	if ratio < 2.0*0.85 || ratio > 2.0*1.15 {
		t.Errorf("time ratio D/C = %.3f, want 2.0 within 15%%", ratio)
	}
}

// TestRecordAttach attaches to a running multi-threaded C program: every
// worker's samples carry full stacks from the thread start routine to the
// leaf, and a thread created after the attach is sampled too.
func TestRecordAttach(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "testdata/attach.c", "-O0", "-fno-omit-frame-pointer", "-pthread")
	// 3 workers at start, a 4th 1.5 s later (after the attach), exit at 60 s
	// or when the test kills it: a loaded machine can take seconds to start
	// cctop, and the target must outlive its 3 s.
	target := exec.Command(bin, "3", "1500", "60000")
	stdout, _ := target.StdoutPipe()
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { target.Process.Kill(); target.Wait() }()
	var mu sync.Mutex
	workers := map[int64]int{} // tid -> worker number
	ready := make(chan struct{}, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var id int
			var tid int64
			if n, _ := fmt.Sscanf(sc.Text(), "worker %d tid %d", &id, &tid); n == 2 {
				mu.Lock()
				workers[tid] = id
				mu.Unlock()
				ready <- struct{}{}
			}
		}
	}()
	for i := 0; i < 3; i++ {
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
			t.Fatal("workers did not start")
		}
	}
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-p", fmt.Sprint(target.Process.Pid), "-d", "3s", "-o", "a.pb.gz")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	// Built with frame pointers: every stack reaches start_thread or
	// _start (the issue asks at least 99%).
	if u := testutil.UnwoundShare(t, stderr); u < 99 {
		t.Errorf("%.1f%% of stacks unwound, want >= 99%%:\n%s", u, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(workers) != 4 {
		t.Fatalf("%d workers started, want 4", len(workers))
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "a.pb.gz"))
	perTID := map[int64]int64{}
	complete := map[int64]int64{}
	for _, s := range p.Sample {
		tids := s.NumLabel["thread_id"]
		if len(tids) != 1 {
			t.Fatalf("sample without thread_id: %v", s.NumLabel)
		}
		tid := tids[0]
		if _, ok := workers[tid]; !ok {
			continue
		}
		perTID[tid] += s.Value[0]
		if hasChain(testutil.StackNames(s), "leaf_compute", "work_loop", "worker_main") {
			complete[tid] += s.Value[0]
		}
	}
	t.Logf("samples per worker tid: %v", perTID)
	for tid, id := range workers {
		n := perTID[tid]
		// Kernel frames are included (root here), so a sample taken in an
		// interrupt or syscall may sit above the user frames: the user part
		// must still run from worker_main down to the leaf.
		// At least 50: generous, since other work on a 2-CPU machine
		// (parallel tests) takes CPU from the target.
		if n < 50 {
			t.Errorf("worker %d (tid %d): %d samples, want >= 50", id, tid, n)
		}
		if complete[tid] < n*97/100 {
			t.Errorf("worker %d: %d of %d samples have worker_main -> work_loop -> leaf_compute", id, complete[tid], n)
		}
	}
}

// hasChain reports whether names (leaf first) contain want as consecutive
// frames, want given leaf first.
func hasChain(names []string, want ...string) bool {
	for i := range names {
		if i+len(want) > len(names) {
			return false
		}
		ok := true
		for j, w := range want {
			if names[i+j] != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestRecordInterrupt: Ctrl-C (SIGINT), SIGTERM and SIGHUP during a
// launched recording with uprobe counters stop the target and still write
// the profile, with the samples taken up to then; once cctop and its
// release child have exited no perf event or uprobe of cctop is left.
func TestRecordInterrupt(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			before := pids()
			dir := t.TempDir()
			// Probes on spinCaller, called once a thread, and on wideLeaf0,
			// never called, cost nothing, and make enough events for
			// closeSession to hand them to the release child.
			cmd := exec.Command(cctopBin, "record", "-o", "i.folded", "--format", "folded",
				"--calls", "uprobe:"+testutil.WorkloadPkg+"spinCaller,"+testutil.WorkloadPkg+"wideLeaf0",
				"--", cctopBin, "workload", "spin", "-duration", "60s")
			cmd.Dir = dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			waitCPU(t, cmd.Process.Pid, "workload spin", time.Second)
			t.Logf("%d perf events open", perfEvents(cmd.Process.Pid))
			cmd.Process.Signal(sig)
			start := time.Now()
			select {
			case err := <-done:
				t.Logf("exited %.1f s after %v", time.Since(start).Seconds(), sig)
				if err != nil {
					t.Fatalf("record after %v: %v\n%s", sig, err, stderr.String())
				}
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatalf("record did not finish after %v", sig)
			}
			if !strings.Contains(stderr.String(), "killed by SIGTERM") && !strings.Contains(stderr.String(), "exited with status") {
				t.Errorf("no exit report:\n%s", stderr.String())
			}
			b, err := os.ReadFile(filepath.Join(dir, "i.folded"))
			if err != nil {
				t.Fatal(err)
			}
			var spin, all int
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				i := strings.LastIndexByte(line, ' ')
				if i < 0 {
					t.Fatalf("bad folded line %q", line)
				}
				var v int
				if _, err := fmt.Sscan(line[i+1:], &v); err != nil {
					t.Fatalf("bad count in folded line %q", line)
				}
				all += v
				if strings.Contains(line[:i], "spinLeaf") {
					spin += v
				}
			}
			// Every sample taken until the signal is written.
			var sampled int
			if _, err := fmt.Sscanf(stderr.String()[strings.Index(stderr.String(), "cctop: ")+len("cctop: "):], "%d samples", &sampled); err != nil {
				t.Fatalf("no sample count in the summary:\n%s", stderr.String())
			}
			if all != sampled {
				t.Errorf("folded output has %d samples, the summary says %d were taken", all, sampled)
			}
			// A second of the target's CPU time is about a thousand
			// samples, if its threads' events were open by then: on a
			// loaded machine opening uprobe events takes seconds.
			if spin == 0 {
				t.Errorf("folded output has no spinLeaf samples after a second of spinning:\n%.500s", b)
			}
			t.Logf("%d spinLeaf samples", spin)
			// The launched workload is gone.
			out, _ := exec.Command("pgrep", "-f", cctopBin+" workload spin").Output()
			if len(strings.TrimSpace(string(out))) > 0 {
				t.Errorf("workload still running: pids %s", out)
			}
			waitReleased(t, before)
		})
	}
}

// waitCPU waits for the child of parent whose command line holds cmd to
// have used cpu of CPU time (user and system), for at most a minute.
func waitCPU(t *testing.T, parent int, cmd string, cpu time.Duration) {
	t.Helper()
	const tick = 10 * time.Millisecond // USER_HZ 100
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, c := range children(parent) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
			if !strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), cmd) {
				continue
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c))
			if err != nil {
				continue
			}
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			// After the comm: state is field 3 of stat, utime 14, stime 15.
			utime, _ := strconv.Atoi(f[11])
			stime, _ := strconv.Atoi(f[12])
			if time.Duration(utime+stime)*tick >= cpu {
				return
			}
		}
	}
	t.Fatalf("no %q child of %d used %v of CPU within a minute", cmd, parent, cpu)
}
