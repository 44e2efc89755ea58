package workload

import (
	"context"
	"io"
	"runtime"
	"sync"
	"time"
)

// The spin workload is the simplest steady target, for attach tests: a fixed
// set of OS threads that never block, each in one caller -> leaf pair. With
// -busy below 1 each thread sleeps between millisecond bursts of work, so
// that hundreds of threads can be busy-ish without each taking a CPU's worth
// (the load test's 500 threads).

func runSpin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("spin", stderr, 3*time.Second, "")
	threads := fs.Int("threads", 2, "spinning OS threads")
	size := fs.Int("size", 10000, "work per spinLeaf call, in loop iterations")
	busy := fs.Float64("busy", 1, "share of its time each thread works: below 1 it sleeps between 1 ms bursts")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case *threads <= 0:
		return usageError(fs, "-threads must be > 0")
	case *size <= 0:
		return usageError(fs, "-size must be > 0")
	case !(*busy > 0 && *busy <= 1):
		return usageError(fs, "-busy must be in (0, 1]")
	}

	s, release := t.start(ctx)
	defer release()
	var wg sync.WaitGroup
	per := make([]uint64, *threads)
	for i := range per {
		wg.Add(1)
		go spinCaller(s, *size, *busy, &per[i], &wg)
	}
	wg.Wait()

	var n uint64
	for _, c := range per {
		n += c
	}
	w := &errWriter{w: stdout}
	w.printf("threads %d\n", *threads)
	w.calls([]edge{{spinCaller, spinLeaf, n}})
	return w.err
}

//go:noinline
func spinCaller(s *stopper, size int, busy float64, out *uint64, wg *sync.WaitGroup) {
	// Never unlocked: the OS thread is this caller's and ends with it.
	runtime.LockOSThread()
	var n uint64
	if busy >= 1 {
		for !s.stopped() {
			spinLeaf(size)
			n++
		}
	} else {
		const burst = time.Millisecond
		rest := time.Duration(float64(burst) * (1 - busy) / busy)
		for !s.stopped() {
			for end := time.Now().Add(burst); time.Now().Before(end); {
				spinLeaf(size)
				n++
			}
			select {
			case <-time.After(rest):
			case <-s.done:
			}
		}
	}
	*out = n
	wg.Done()
}

//go:noinline
func spinLeaf(n int) {
	x := uint64(n) | 29
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
