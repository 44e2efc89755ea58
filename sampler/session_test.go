//go:build linux

package sampler

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildAttachTarget compiles testdata/attach.c with frame pointers.
func buildAttachTarget(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(t.TempDir(), "attach")
	out, err := exec.Command("gcc", "-O0", "-fno-omit-frame-pointer", "-pthread", "-o", bin, "../testdata/attach.c").CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// skipIfNoPerf skips where perf_event_open is not allowed at all.
func skipIfNoPerf(t *testing.T) {
	t.Helper()
	if err := ProbeEvent(namedEvents["cpu-clock"], true); err != nil {
		t.Skipf("perf_event_open(cpu-clock) not permitted here: %v", err)
	}
}

// targetTIDs runs the attach target and collects the tids it prints.
type target struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	tids map[string]int // "worker N" -> tid
	pid  int
	done chan struct{}
}

func startTarget(t *testing.T, bin string, args ...string) *target {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tg := &target{cmd: cmd, tids: map[string]int{}, pid: cmd.Process.Pid, done: make(chan struct{})}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		defer close(tg.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var id, tid int
			if n, _ := fmt.Sscanf(sc.Text(), "worker %d tid %d", &id, &tid); n == 2 {
				tg.mu.Lock()
				tg.tids[fmt.Sprintf("worker %d", id)] = tid
				tg.mu.Unlock()
			}
		}
	}()
	return tg
}

func (tg *target) waitWorkers(t *testing.T, n int) map[string]int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		tg.mu.Lock()
		if len(tg.tids) >= n {
			m := map[string]int{}
			for k, v := range tg.tids {
				m[k] = v
			}
			tg.mu.Unlock()
			return m
		}
		tg.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("target printed fewer than %d workers", n)
	return nil
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func testAttach(t *testing.T, follow bool) {
	skipIfNoPerf(t)
	bin := buildAttachTarget(t)
	// 3 workers now, a 4th after 700 ms, exit after 2.5 s.
	tg := startTarget(t, bin, "3", "700", "2500")
	tg.waitWorkers(t, 3)
	before := openFDs(t)
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true, Follow: follow})
	if err != nil {
		t.Fatal(err)
	}
	perTID := map[int]int{}
	deepUser := map[int]int{}
	if err := s.Run(context.Background(), func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind != KindSample {
				continue
			}
			if int(r.PID) != tg.pid {
				t.Errorf("sample of pid %d, want %d", r.PID, tg.pid)
			}
			perTID[int(r.TID)]++
			// leaf_compute, work_loop, worker_main, start_thread
			if _, u := SplitChain(r.Chain); len(u) >= 4 {
				deepUser[int(r.TID)]++
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if !s.Exited() {
		t.Error("Run returned before the target exited")
	}
	s.Close()
	<-tg.done
	tids := tg.waitWorkers(t, 4)
	for name, tid := range tids {
		// Each worker spins for most of its life on a 2-CPU machine with 4
		// workers: hundreds of samples at 999 Hz even for the late one. The
		// floor is low because other tests may share the CPUs.
		if perTID[tid] < 40 {
			t.Errorf("%s (tid %d): %d samples, want >= 40 (all: %v)", name, tid, perTID[tid], perTID)
		}
		if deepUser[tid] < perTID[tid]*9/10 {
			t.Errorf("%s: %d of %d samples have a user stack of >= 4 frames", name, deepUser[tid], perTID[tid])
		}
	}
	if s.Followed() != follow && !follow {
		t.Logf("note: kernel forced thread following: %v", s.Notes())
	}
	if after := openFDs(t); after != before {
		t.Errorf("descriptors: %d before, %d after Close", before, after)
	}
}

func TestAttachInherit(t *testing.T) { testAttach(t, false) }
func TestAttachFollow(t *testing.T)  { testAttach(t, true) }

func TestLaunchExitStatus(t *testing.T) {
	skipIfNoPerf(t)
	s, err := Open(Config{Argv: []string{"sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3"}, UserOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var samples, comms int
	s.Run(context.Background(), func(b *Batch) {
		for _, r := range b.Records {
			switch r.Kind {
			case KindSample:
				samples++
				if int(r.PID) != s.PID() {
					t.Errorf("sample of pid %d", r.PID)
				}
			case KindComm:
				comms++
			}
		}
	})
	if code, sig := s.ExitCode(); code != 3 || sig != "" {
		t.Errorf("exit code %d %q, want 3", code, sig)
	}
	if samples < 20 {
		t.Errorf("%d samples of a ~0.2 s busy loop", samples)
	}
	if comms == 0 {
		t.Error("no comm record for the launched command")
	}
	if st := s.Stats(); st.Samples != uint64(samples) {
		t.Errorf("stats say %d samples, batches had %d", st.Samples, samples)
	}
}

// TestNextEndsReaped: Next says the run is over (io.EOF) only with the
// target reaped, its exit status known: a caller that stops there reports
// it. Short-lived targets, so that the exit often comes while a batch is
// being decoded.
func TestNextEndsReaped(t *testing.T) {
	skipIfNoPerf(t)
	for i := range 20 {
		s, err := Open(Config{Argv: []string{"sh", "-c", "exit 3"}, UserOnly: true, PollInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for {
			_, err := s.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		code, sig := s.ExitCode()
		s.Close()
		if code != 3 || sig != "" {
			t.Fatalf("run %d: exit code %d %q when Next ended, want 3", i, code, sig)
		}
	}
}

func TestLaunchStop(t *testing.T) {
	skipIfNoPerf(t)
	s, err := Open(Config{Argv: []string{"sleep", "30"}, UserOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	s.Run(ctx, func(*Batch) {})
	if s.Exited() {
		t.Fatal("sleep 30 exited early")
	}
	start := time.Now()
	s.Stop(2 * time.Second)
	s.Run(context.Background(), func(*Batch) {})
	if !s.Exited() || time.Since(start) > 3*time.Second {
		t.Fatalf("not stopped: exited=%v after %v", s.Exited(), time.Since(start))
	}
	if _, sig := s.ExitCode(); sig != "terminated" {
		t.Errorf("signal %q, want terminated", sig)
	}
}

func TestOpenErrors(t *testing.T) {
	skipIfNoPerf(t)
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{PID: 1 << 30}, "no such process"},
		{Config{Argv: []string{"/nonexistent/cctop-no-such-command"}}, "command not found"},
		{Config{}, "either a PID"},
		{Config{PID: 1, Argv: []string{"true"}}, "either a PID"},
	}
	for _, c := range cases {
		_, err := Open(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestCyclesWithoutPMU(t *testing.T) {
	skipIfNoPerf(t)
	cycles := namedEvents["cycles"]
	if ProbeEvent(cycles, true) == nil {
		t.Skip("this machine has a hardware PMU")
	}
	_, err := Open(Config{Argv: []string{"true"}, Leader: cycles, UserOnly: true})
	if err == nil || !strings.Contains(err.Error(), "no hardware PMU") {
		t.Fatalf("err = %v", err)
	}
}
