package workload

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The mutex workload is lock contention as off-CPU time: OS threads take
// one lock in mutexLock, hold it working in mutexHold, release it in
// mutexUnlock and work outside it in mutexOutside. The lock is a futex, so
// a thread that finds it taken sleeps in FUTEX_WAIT, a system call made in
// mutexLock's frame: an off-CPU profile must charge the waiting to
// mutexLock, as much of it as each thread measured itself.
//
// With the defaults (about 0.5 ms holding, 0.25 ms outside) the lock is
// never free for long: the four threads' holds take 2 ms in all, and each
// thread needs only 0.75 ms of it to come back. So a thread's round lasts
// about four holds, of which it waits 1.25 ms: about 60%, measured 0.61 to
// 0.66 on an idle 2-CPU VM, although the two CPUs are never both busy.
// Less work outside makes the share approach 3/4; more makes it smaller.

func runMutex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("mutex", stderr, 3*time.Second, "lock acquisitions per thread")
	threads := fs.Int("threads", 4, "OS threads contending for the lock")
	hold := fs.Int("hold", 200000, "work in mutexHold, holding the lock, in loop iterations")
	outside := fs.Int("outside", 100000, "work in mutexOutside, between acquisitions, in loop iterations")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case *threads <= 0:
		return usageError(fs, "-threads must be > 0")
	case *hold < 0:
		return usageError(fs, "-hold must be >= 0")
	case *outside < 0:
		return usageError(fs, "-outside must be >= 0")
	}

	// A P for every worker and one to spare: a worker whose futex wait
	// ends must not wait for a P in the Go scheduler, where its thread
	// blocks on the scheduler's stack, not under mutexLock, and out of the
	// lock's sight (its wait time would not be the lock's).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*threads + 1))
	s, release := t.start(ctx)
	defer release()
	var m futexMutex
	var locked uint64 // incremented under the lock only
	per := make([]mutexThread, *threads)
	var ready, wg sync.WaitGroup
	begin := make(chan struct{})
	for i := range per {
		ready.Add(1)
		wg.Add(1)
		go mutexWorker(s, &m, *hold, *outside, &locked, &per[i], &ready, begin, &wg)
	}
	// Start the loops together, so that every thread meets the others at the
	// lock however slowly the threads came up.
	ready.Wait()
	close(begin)
	wg.Wait()

	var tot mutexThread
	tot.sched.ok = true
	for _, p := range per {
		tot.add(p)
	}
	w := &errWriter{w: stdout}
	w.printf("threads %d\n", *threads)
	for _, p := range per {
		w.printf("thread %d %s\n", p.tid, p.fields())
	}
	w.printf("total %s\n", tot.fields())
	// The critical sections as counted inside them: equal to the rounds
	// unless the lock let two threads in at once.
	w.printf("locked %d\n", locked)
	w.calls([]edge{
		{mutexWorker, mutexLock, tot.rounds},
		{mutexWorker, mutexHold, tot.rounds},
		{mutexWorker, mutexUnlock, tot.rounds},
		{mutexWorker, mutexOutside, tot.rounds},
	})
	return w.err
}

// mutexThread is one thread's truth. The wall times are taken back to back
// around the four calls, so wait + hold + release + outside is the loop's
// time but for the end-of-loop checks. Summed over threads they are thread
// time.
type mutexThread struct {
	tid                                int
	rounds                             uint64
	sleeps                             uint64        // FUTEX_WAIT calls that slept
	wait, hold, release, outside, loop time.Duration // wall times
	sched                              schedstat     // during the loop
}

func (p *mutexThread) add(o mutexThread) {
	p.rounds += o.rounds
	p.sleeps += o.sleeps
	p.wait += o.wait
	p.hold += o.hold
	p.release += o.release
	p.outside += o.outside
	p.loop += o.loop
	p.sched.add(o.sched)
}

// fields prints the figures as name-value pairs; waitshare is wait / loop.
func (p *mutexThread) fields() string {
	share := 0.0
	if p.loop > 0 {
		share = float64(p.wait) / float64(p.loop)
	}
	return fmt.Sprintf("rounds %d sleeps %d wait %s hold %s release %s outside %s loop %s waitshare %.4f %s",
		p.rounds, p.sleeps, p.wait, p.hold, p.release, p.outside, p.loop, share, p.sched)
}

//go:noinline
func mutexWorker(s *stopper, m *futexMutex, hold, outside int, locked *uint64, out *mutexThread, ready *sync.WaitGroup, begin <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	// Never unlocked: the OS thread is this worker's and ends with it.
	runtime.LockOSThread()
	out.tid = gettid()
	ready.Done()
	<-begin
	before := readSchedstat(out.tid)
	start := mono()
	t0 := start
	for r := 0; s.more(r); r++ {
		out.sleeps += mutexLock(m)
		t1 := mono()
		mutexHold(hold, locked)
		t2 := mono()
		mutexUnlock(m)
		t3 := mono()
		mutexOutside(outside)
		t4 := mono()
		out.wait += t1 - t0
		out.hold += t2 - t1
		out.release += t3 - t2
		out.outside += t4 - t3
		out.rounds++
		t0 = t4
	}
	out.loop = mono() - start
	out.sched = readSchedstat(out.tid).since(before)
}

// futexMutex is Drepper's futex mutex ("Futexes Are Tricky", mutex 3): the
// word is 0 when free, 1 when taken and 2 when taken with threads possibly
// asleep on it, so that an unlock makes a FUTEX_WAKE system call only when
// someone may be waiting.
type futexMutex struct {
	state uint32
}

const (
	futexWait    = 0
	futexWake    = 1
	futexPrivate = 128 // the word is not shared with other processes
)

// mutexLock takes m, sleeping in FUTEX_WAIT from this frame while others hold
// it. It returns the number of times it slept (FUTEX_WAIT calls that did not
// find the word already changed).
//
//go:noinline
func mutexLock(m *futexMutex) (sleeps uint64) {
	if atomic.CompareAndSwapUint32(&m.state, 0, 1) {
		return 0
	}
	// Taken: mark it contended. Whoever swaps 0 out of it owns it, and
	// owns it marked 2, since it cannot know whether others wait too.
	for atomic.SwapUint32(&m.state, 2) != 0 {
		// Sleeps unless the word is no longer 2 (EAGAIN); a signal
		// (EINTR) or a wake-up both lead to another try.
		_, _, errno := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&m.state)), futexWait|futexPrivate, 2, 0, 0, 0)
		if errno != unix.EAGAIN {
			sleeps++
		}
	}
	return sleeps
}

// mutexUnlock releases m and, if it was contended, wakes one sleeper.
//
//go:noinline
func mutexUnlock(m *futexMutex) {
	if atomic.AddUint32(&m.state, ^uint32(0)) != 0 {
		atomic.StoreUint32(&m.state, 0)
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&m.state)), futexWake|futexPrivate, 1, 0, 0, 0)
	}
}

// mutexHold is the work done holding the lock, n loop iterations; it also
// counts the critical sections in *locked, a plain increment that only
// mutual exclusion keeps exact (and that the race detector checks).
//
//go:noinline
func mutexHold(n int, locked *uint64) {
	x := uint64(n) | 33
	for i := 0; i < n; i++ {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= mixMul
	}
	*locked++
	var frame [2]uint64 // gives the function a stack frame: see work.go
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
}

// mutexOutside is the work between acquisitions, n loop iterations.
//
//go:noinline
func mutexOutside(n int) {
	x := uint64(n) | 35
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
