package workload

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The sleep workload is the simplest off-CPU shape: each OS thread computes
// for a fixed amount of its own CPU time in sleepCompute, then sleeps in
// sleepNap, a raw nanosleep, round after round. With the defaults (30 ms of
// CPU, 70 ms asleep) an on-CPU profile sees only sleepCompute, while an
// off-CPU or wall-clock profile must give sleepNap 70% of each thread's time.
// Each thread prints the wall time it spent in either call and its loop's
// wall time, so the share a profile finds can be checked against the nap
// share the thread measured.

func runSleep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("sleep", stderr, 3*time.Second, "rounds per thread (30, about 3 s with the default -compute and -sleep, unless -duration is given)")
	t.defaultRounds = 30
	threads := fs.Int("threads", 1, "OS threads, each computing and sleeping in turn")
	compute := fs.Duration("compute", 30*time.Millisecond, "CPU time per round in sleepCompute, by the thread's own CPU clock")
	nap := fs.Duration("sleep", 70*time.Millisecond, "time asleep per round in sleepNap (a raw nanosleep)")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case *threads <= 0:
		return usageError(fs, "-threads must be > 0")
	case *compute < 0:
		return usageError(fs, "-compute must be >= 0")
	case *nap <= 0:
		return usageError(fs, "-sleep must be > 0")
	}

	s, release := t.start(ctx)
	defer release()
	per := make([]sleepThread, *threads)
	var wg sync.WaitGroup
	for i := range per {
		wg.Add(1)
		go sleepWorker(s, *compute, *nap, &per[i], &wg)
	}
	wg.Wait()

	var tot sleepThread
	tot.sched.ok = true
	for _, p := range per {
		if p.err != nil {
			return p.err
		}
		tot.add(p)
	}
	w := &errWriter{w: stdout}
	w.printf("threads %d\n", *threads)
	for _, p := range per {
		w.printf("thread %d %s\n", p.tid, p.fields())
	}
	w.printf("total %s\n", tot.fields())
	w.calls([]edge{
		{sleepWorker, sleepCompute, tot.rounds},
		{sleepWorker, sleepNap, tot.rounds},
	})
	return w.err
}

// sleepThread is one thread's truth; summed over threads, the times are
// thread time (the loop's total is each thread's loop wall time added up).
type sleepThread struct {
	tid                int
	rounds             uint64
	compute, nap, loop time.Duration // wall times
	sched              schedstat     // during the loop
	err                error
}

func (p *sleepThread) add(o sleepThread) {
	p.rounds += o.rounds
	p.compute += o.compute
	p.nap += o.nap
	p.loop += o.loop
	p.sched.add(o.sched)
}

// fields prints the figures as name-value pairs; napshare is nap / loop.
func (p *sleepThread) fields() string {
	share := 0.0
	if p.loop > 0 {
		share = float64(p.nap) / float64(p.loop)
	}
	return fmt.Sprintf("rounds %d compute %s nap %s loop %s napshare %.4f %s", p.rounds, p.compute, p.nap, p.loop, share, p.sched)
}

// sleepWorker is one thread's loop. Wall times are taken back to back, so
// compute and nap add up to the loop's time but for the end-of-loop checks.
//
//go:noinline
func sleepWorker(s *stopper, compute, nap time.Duration, out *sleepThread, wg *sync.WaitGroup) {
	defer wg.Done()
	// Never unlocked: the OS thread is this worker's and ends with it.
	runtime.LockOSThread()
	out.tid = gettid()
	before := readSchedstat(out.tid)
	start := mono()
	t0 := start
	for r := 0; s.more(r); r++ {
		if out.err = sleepCompute(compute); out.err != nil {
			break
		}
		t1 := mono()
		if out.err = sleepNap(nap); out.err != nil {
			break
		}
		t2 := mono()
		out.compute += t1 - t0
		out.nap += t2 - t1
		out.rounds++
		t0 = t2
	}
	out.loop = mono() - start
	out.sched = readSchedstat(out.tid).since(before)
}

// sleepChunk is the work between two reads of the thread's CPU clock, about
// 30 µs: a round overshoots -compute by at most that.
const sleepChunk = 16384

// sleepCompute works until the calling thread's CPU clock has advanced by d:
// CPU time, not wall time, so a thread kept off the CPU by others still does
// all its work (its wall time here grows instead).
//
//go:noinline
func sleepCompute(d time.Duration) error {
	start, err := threadCPU()
	if err != nil {
		return err
	}
	x := uint64(d) | 31
	for {
		for i := 0; i < sleepChunk; i++ {
			x ^= x >> 12
			x ^= x << 25
			x ^= x >> 27
			x *= mixMul
		}
		now, err := threadCPU()
		if err != nil {
			return err
		}
		if now-start >= d {
			break
		}
	}
	var frame [2]uint64 // gives the function a stack frame: see work.go
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
	return nil
}

// sleepNap sleeps for d in nanosleep, from this frame: the thread blocks in
// the kernel with sleepNap on its stack. A signal that interrupts the sleep
// (EINTR) resumes it for the time left, so a nap is never short.
//
//go:noinline
func sleepNap(d time.Duration) error {
	ts := unix.NsecToTimespec(int64(d))
	for {
		var left unix.Timespec
		err := unix.Nanosleep(&ts, &left)
		if err == nil {
			return nil
		}
		if err != unix.EINTR {
			return fmt.Errorf("nanosleep: %w", err)
		}
		ts = left
	}
}
