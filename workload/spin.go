package workload

import (
	"context"
	"io"
	"runtime"
	"sync"
	"time"
)

// The spin workload is the simplest steady target, for attach tests: a fixed
// set of OS threads that never block, each in one caller -> leaf pair.

func runSpin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("spin", stderr, 3*time.Second, "")
	threads := fs.Int("threads", 2, "spinning OS threads")
	size := fs.Int("size", 10000, "work per spinLeaf call, in loop iterations")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case *threads <= 0:
		return usageError(fs, "-threads must be > 0")
	case *size <= 0:
		return usageError(fs, "-size must be > 0")
	}

	s, release := t.start(ctx)
	defer release()
	var wg sync.WaitGroup
	per := make([]uint64, *threads)
	for i := range per {
		wg.Add(1)
		go spinCaller(s, *size, &per[i], &wg)
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
func spinCaller(s *stopper, size int, out *uint64, wg *sync.WaitGroup) {
	// Never unlocked: the OS thread is this caller's and ends with it.
	runtime.LockOSThread()
	var n uint64
	for !s.stopped() {
		spinLeaf(size)
		n++
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
