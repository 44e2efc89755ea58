package workload

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The threads workload keeps OS threads coming and going, so that a profiler
// must pick up threads created after it attached and handle their exits
// (FORK/EXIT records, per-thread events, lost tails). Each worker locks its
// goroutine to its OS thread and returns still locked, which makes the Go
// runtime end that thread; the runtime starts fresh threads to replace them.

func runThreads(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("threads", stderr, 2500*time.Millisecond, "")
	rate := fs.Float64("rate", 200, "threads started per second")
	life := fs.Duration("life", 5*time.Millisecond, "how long each thread works before it exits")
	concurrency := fs.Int("concurrency", 8, "most threads working at once (starting waits for a free slot)")
	size := fs.Int("size", 10000, "work per threadsWork call, in loop iterations")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case !(*rate > 0) || *rate > 1e6:
		return usageError(fs, "-rate must be in (0, 1e6]")
	case *life <= 0:
		return usageError(fs, "-life must be > 0")
	case *concurrency <= 0:
		return usageError(fs, "-concurrency must be > 0")
	case *size <= 0:
		return usageError(fs, "-size must be > 0")
	}

	s, release := t.start(ctx)
	defer release()
	var calls atomic.Uint64
	created := threadsSpawn(s, time.Duration(float64(time.Second) / *rate), *life, *concurrency, *size, &calls)

	w := &errWriter{w: stdout}
	w.printf("threads %d\n", created)
	w.calls([]edge{{threadsWorker, threadsWork, calls.Load()}})
	return w.err
}

// threadsSpawn starts a worker every interval until the end, and waits for
// them all. It paces against the clock rather than sleeping interval after
// each start, so the rate holds; after a stall (all slots busy) it restarts
// the schedule instead of bursting to catch up.
func threadsSpawn(s *stopper, interval, life time.Duration, concurrency, size int, calls *atomic.Uint64) (created uint64) {
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	timer := time.NewTimer(0)
	defer timer.Stop()
	next := time.Now()
loop:
	for !s.stopped() {
		select {
		case slots <- struct{}{}:
		case <-s.done:
			break loop
		}
		wg.Add(1)
		created++
		go threadsWorker(s, life, size, calls, slots, &wg)

		now := time.Now()
		next = next.Add(interval)
		if next.Before(now.Add(-interval)) {
			next = now
		}
		timer.Reset(next.Sub(now))
		select {
		case <-timer.C:
		case <-s.done:
			break loop
		}
	}
	wg.Wait()
	return created
}

// threadsWorker is the body of one short-lived OS thread.
//
//go:noinline
func threadsWorker(s *stopper, life time.Duration, size int, calls *atomic.Uint64, slots chan struct{}, wg *sync.WaitGroup) {
	// Never unlocked: returning while locked is what ends the OS thread.
	runtime.LockOSThread()
	var n uint64
	end := time.Now().Add(life)
	for {
		threadsWork(size)
		n++
		if s.stopped() || !time.Now().Before(end) {
			break
		}
	}
	calls.Add(n)
	<-slots
	wg.Done()
}

//go:noinline
func threadsWork(n int) {
	x := uint64(n) | 27
	for i := 0; i < n; i++ {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= mixMul
	}
	var frame [2]uint64 // gives the function a stack frame: see work.go
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
}
