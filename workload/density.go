package workload

import (
	"context"
	"io"
	"runtime"
	"sync"
	"time"
)

// The density workload is CallDensityBias from Lee 2015 (Fig. 1): two phases
// make the same number of calls to one leaf, but phase D's calls cost twice
// as much, so phase D takes twice the time with half the call density. A
// timer-driven sampler then credits the D edge with about twice the calls of
// the C edge, although the exact counts printed at exit are equal.
//
// Rounds alternate C and D every few tens of milliseconds, so a recording
// cut at any moment still sees D's time at about twice C's.

func runDensity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("density", stderr, 2500*time.Millisecond, "number of rounds (phase C, then phase D)")
	// 600 iterations take about 1.3 µs on a 2020s x86 core, and 7500 calls
	// of that make phase C about 10 ms.
	size := fs.Int("size", 600, "leaf work per call in phase C, in loop iterations (phase D uses twice this)")
	calls := fs.Int("calls", 7500, "leaf calls per phase per round")
	threads := fs.Int("threads", 1, "OS threads running the rounds; thread i's leaf work is (i+1) times -size, so per-call costs differ between threads")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	if *threads < 1 || *threads > 64 {
		return usageError(fs, "-threads must be in 1..64")
	}
	if *size <= 0 {
		return usageError(fs, "-size must be > 0")
	}
	if *calls <= 0 {
		return usageError(fs, "-calls must be > 0")
	}

	s, release := t.start(ctx)
	defer release()
	var tot densityTotals
	if *threads == 1 {
		densityRounds(s, *size, *calls, &tot)
	} else {
		per := densityThreads(s, *threads, *size, *calls)
		w := &errWriter{w: stdout}
		for _, p := range per {
			tot.add(p.densityTotals)
			for _, e := range densityEdges(&p.densityTotals) {
				w.printf("thread %d calls %s -> %s %d\n", p.tid, funcName(e.caller), funcName(e.callee), e.n)
			}
		}
		if w.err != nil {
			return w.err
		}
	}

	w := &errWriter{w: stdout}
	w.printf("rounds %d\n", tot.rounds)
	w.printf("wall %s %s\n", funcName(densityPhaseC), tot.wallC)
	w.printf("wall %s %s\n", funcName(densityPhaseD), tot.wallD)
	w.calls(densityEdges(&tot))
	return w.err
}

func densityEdges(tot *densityTotals) []edge {
	return []edge{
		{densityRounds, densityPhaseC, tot.rounds},
		{densityRounds, densityPhaseD, tot.rounds},
		{densityPhaseC, densityLeaf, tot.c},
		{densityPhaseD, densityLeaf, tot.d},
	}
}

type densityTotals struct {
	rounds, c, d uint64
	wallC, wallD time.Duration
}

func (t *densityTotals) add(o densityTotals) {
	t.rounds += o.rounds
	t.c += o.c
	t.d += o.d
	t.wallC += o.wallC
	t.wallD += o.wallD
}

type threadTotals struct {
	densityTotals
	tid int
}

// densityThreads runs the rounds on n OS threads at once, thread i with
// (i+1) times the leaf work: the call densities differ between threads as
// well as between phases.
func densityThreads(s *stopper, n, size, calls int) []threadTotals {
	per := make([]threadTotals, n)
	var wg sync.WaitGroup
	for i := range per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			per[i].tid = gettid()
			densityRounds(s, size*(i+1), calls, &per[i].densityTotals)
		}()
	}
	wg.Wait()
	return per
}

// densityRounds checks for the end only between rounds, so that both phases
// always make the same number of calls.
//
//go:noinline
func densityRounds(s *stopper, size, calls int, tot *densityTotals) {
	for r := 0; s.more(r); r++ {
		t0 := time.Now()
		tot.c += densityPhaseC(size, calls)
		t1 := time.Now()
		tot.d += densityPhaseD(size, calls)
		t2 := time.Now()
		tot.wallC += t1.Sub(t0)
		tot.wallD += t2.Sub(t1)
		tot.rounds++
	}
}

// densityPhaseC is the dense phase: call site C of the paper.
//
//go:noinline
func densityPhaseC(small, calls int) uint64 {
	var n uint64
	for i := 0; i < calls; i++ {
		densityLeaf(small)
		n++
	}
	return n
}

// densityPhaseD is the sparse phase: call site D of the paper.
//
//go:noinline
func densityPhaseD(small, calls int) uint64 {
	var n uint64
	for i := 0; i < calls; i++ {
		densityLeaf(2 * small)
		n++
	}
	return n
}

// densityLeaf costs time linear in n, with no fixed part worth mentioning,
// so that D's time is 2x C's.
//
//go:noinline
func densityLeaf(n int) {
	x := uint64(n) | 1
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
