package workload

import (
	"context"
	"io"
	"runtime"
	"sync"
	"time"
)

// The latency workload is LatencyBias from Lee 2015 (Fig. 3): OS threads
// contend for one lock and, holding it, call the same leaf equally often
// from two call sites. Threads that wake up after waiting for the lock take
// their timer samples late, in whichever site runs first, which skews the
// sampled split between the two equal edges. The sites are separate
// functions so that the two edges differ by caller, not only by call site.

func runLatency(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("latency", stderr, 2500*time.Millisecond, "lock acquisitions per thread")
	threads := fs.Int("threads", 4, "OS threads contending for the lock")
	size := fs.Int("size", 600, "leaf work per call, in loop iterations")
	calls := fs.Int("calls", 50, "leaf calls from each site per lock acquisition")
	outside := fs.Int("outside", 3000, "work between lock acquisitions, in loop iterations")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case *threads <= 0:
		return usageError(fs, "-threads must be > 0")
	case *size <= 0:
		return usageError(fs, "-size must be > 0")
	case *calls <= 0:
		return usageError(fs, "-calls must be > 0")
	case *outside < 0:
		return usageError(fs, "-outside must be >= 0")
	}

	s, release := t.start(ctx)
	defer release()
	cfg := latencyConfig{size: *size, calls: *calls, outside: *outside}
	var mu sync.Mutex
	var wg sync.WaitGroup
	per := make([]latencyCounts, *threads)
	for i := range per {
		wg.Add(1)
		go latencyWorker(s, &mu, cfg, &per[i], &wg)
	}
	wg.Wait()

	var tot latencyCounts
	for _, c := range per {
		tot.siteA += c.siteA
		tot.siteB += c.siteB
		tot.outside += c.outside
		tot.leafA += c.leafA
		tot.leafB += c.leafB
	}
	w := &errWriter{w: stdout}
	w.printf("threads %d\n", *threads)
	w.calls([]edge{
		{latencyWorker, latencySiteA, tot.siteA},
		{latencyWorker, latencySiteB, tot.siteB},
		{latencyWorker, latencyOutside, tot.outside},
		{latencySiteA, latencyLeaf, tot.leafA},
		{latencySiteB, latencyLeaf, tot.leafB},
	})
	return w.err
}

type latencyConfig struct {
	size, calls, outside int
}

type latencyCounts struct {
	siteA, siteB, outside, leafA, leafB uint64
}

// latencyWorker is one contending thread. Blocking on the mutex parks the
// goroutine and, because it is locked, puts its OS thread to sleep: that
// sleep is the sampling latency the workload is about.
//
//go:noinline
func latencyWorker(s *stopper, mu *sync.Mutex, cfg latencyConfig, out *latencyCounts, wg *sync.WaitGroup) {
	// Never unlocked: the OS thread is this worker's and ends with it.
	runtime.LockOSThread()
	var c latencyCounts
	for r := 0; s.more(r); r++ {
		mu.Lock()
		c.leafA += latencySiteA(cfg.size, cfg.calls)
		c.siteA++
		c.leafB += latencySiteB(cfg.size, cfg.calls)
		c.siteB++
		mu.Unlock()
		latencyOutside(cfg.outside)
		c.outside++
	}
	*out = c
	wg.Done()
}

// latencySiteA runs first after the lock is taken: call site A.
//
//go:noinline
func latencySiteA(size, calls int) uint64 {
	var n uint64
	for i := 0; i < calls; i++ {
		latencyLeaf(size)
		n++
	}
	return n
}

// latencySiteB runs second, with the same calls as latencySiteA: call site B.
//
//go:noinline
func latencySiteB(size, calls int) uint64 {
	var n uint64
	for i := 0; i < calls; i++ {
		latencyLeaf(size)
		n++
	}
	return n
}

//go:noinline
func latencyLeaf(n int) {
	x := uint64(n) | 3
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

// latencyOutside is the work done without the lock, so that threads arrive
// at the lock at varying moments rather than in lockstep.
//
//go:noinline
func latencyOutside(n int) {
	x := uint64(n) | 5
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
