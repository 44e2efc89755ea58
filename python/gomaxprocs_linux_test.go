package python

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestPollerFromOneP: between passes the poller sleeps keeping its P, so
// a cctop given one P (GOMAXPROCS=1, a container of one CPU) would run
// only when the runtime preempted the poller. The poller raises GOMAXPROCS
// to two while it reads, and puts it back at Close; from two or more it
// leaves it alone. HoldsP says it holds one while it reads, for the
// engine's governor of the Ps (engine/procs.go).
func TestPollerFromOneP(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reading another process's memory needs root or ptrace rights here")
	}
	pys := interpreters()
	if len(pys) == 0 {
		t.Skip("no CPython on this machine")
	}
	cmd := startSleeper(t, pys[0].path)
	for _, from := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(from)
		p := NewPoller(time.Millisecond, DefaultBudget)
		p.Add(cmd.Process.Pid)
		deadline := time.Now().Add(10 * time.Second)
		for p.Stats().Reads < 10 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if p.Stats().Reads < 10 {
			p.Close()
			runtime.GOMAXPROCS(prev)
			t.Fatalf("%s: %d reads in 10 s", pys[0].name, p.Stats().Reads)
		}
		reading, held := runtime.GOMAXPROCS(0), p.HoldsP()
		p.Close()
		after := runtime.GOMAXPROCS(prev)
		if !held || p.HoldsP() {
			t.Errorf("from %d: HoldsP %v while reading, %v after Close; want true, then false", from, held, p.HoldsP())
		}
		if want := max(from, 2); reading != want {
			t.Errorf("from %d: GOMAXPROCS %d while reading, want %d", from, reading, want)
		}
		if after != from {
			t.Errorf("from %d: GOMAXPROCS %d after Close", from, after)
		}
	}
}
