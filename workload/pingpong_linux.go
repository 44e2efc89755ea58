package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The pingpong workload is off-CPU time in many short waits: two OS threads
// pass one byte back and forth over two pipes, each blocking in
// pingpongRead (a read system call on a blocking pipe) until the other
// answers. Every round takes each thread off the CPU about once, tens of
// thousands of times a second, so it tests that an off-CPU profiler keeps up
// with context switches and what that costs. The threads count their own
// context switches (/proc/self/task/TID/status, before and after): about one
// voluntary switch per round each. How fast the rounds go depends on where
// the scheduler puts the two threads: on one CPU a round is two cheap
// switches, across two CPUs it waits for cross-CPU wake-ups.

func runPingpong(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("pingpong", stderr, 3*time.Second, "round trips (150000, 1 to 4 s on a 2-CPU VM, unless -duration is given)")
	t.defaultRounds = 150000
	// SCHED_BATCH tasks do not preempt the running task when they wake up.
	// A normal pong woken on ping's CPU takes it from ping between ping's
	// write and its read: ping is then preempted in the write rather than
	// blocked in pingpongRead, and finds the answer waiting. That was a
	// quarter of the switches here; with SCHED_BATCH nearly every read
	// blocks, as the workload means.
	batch := fs.Bool("batch", true, "run both threads as SCHED_BATCH, so that waking the other side does not preempt the waker before it blocks in its read")
	if err := parse(fs, t, args); err != nil {
		return err
	}

	// Blocking pipes (no O_NONBLOCK), which the runtime does not poll: a
	// read waits in the kernel, in pingpongRead's frame. O_CLOEXEC only
	// keeps them out of child processes.
	var toPong, toPing [2]int
	if err := syscall.Pipe2(toPong[:], syscall.O_CLOEXEC); err != nil {
		return fmt.Errorf("pipe2: %w", err)
	}
	if err := syscall.Pipe2(toPing[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(toPong[0])
		syscall.Close(toPong[1])
		return fmt.Errorf("pipe2: %w", err)
	}

	s, release := t.start(ctx)
	defer release()
	var ping, pong pingpongThread
	var wg sync.WaitGroup
	wg.Add(2)
	// Each thread closes its write end when it is done, which ends the
	// other's read with end of file: neither can be left blocked.
	go pingpongPong(toPong[0], toPing[1], *batch, &pong, &wg)
	go pingpongPing(s, toPing[0], toPong[1], *batch, &ping, &wg)
	wg.Wait()
	syscall.Close(toPong[0])
	syscall.Close(toPing[0])
	if err := errors.Join(ping.err, pong.err); err != nil {
		return err
	}

	w := &errWriter{w: stdout}
	w.printf("rounds %d\n", ping.rounds)
	w.printf("wall %s\n", ping.wall)
	w.printf("rounds/s %.1f\n", perSecond(ping.rounds, ping.wall))
	var tot ctxSwitches
	for _, p := range []*pingpongThread{&ping, &pong} {
		w.printf("thread %d func %s rounds %d wall %s voluntary %d involuntary %d switches/s %.1f\n",
			p.tid, funcName(p.fn), p.rounds, p.wall, p.switches.voluntary, p.switches.involuntary,
			perSecond(p.switches.voluntary+p.switches.involuntary, p.wall))
		tot.voluntary += p.switches.voluntary
		tot.involuntary += p.switches.involuntary
	}
	// Both threads run for the whole exchange: the total rate is over the
	// longer of their times.
	w.printf("total voluntary %d involuntary %d switches/s %.1f\n", tot.voluntary, tot.involuntary,
		perSecond(tot.voluntary+tot.involuntary, max(ping.wall, pong.wall)))
	w.calls([]edge{
		{pingpongPing, pingpongRead, ping.reads},
		{pingpongPong, pingpongRead, pong.reads},
	})
	return w.err
}

func perSecond(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// pingpongThread is one side's truth: bytes passed on, pingpongRead calls
// (pong's last read is the end of file), its loop's wall time and its
// context switches during the loop.
type pingpongThread struct {
	fn            any
	tid           int
	rounds, reads uint64
	wall          time.Duration
	switches      ctxSwitches
	err           error
}

// begin readies the calling thread, which it locks for good: its OS thread
// is this side's and ends with it (and so does its scheduling policy).
func (p *pingpongThread) begin(fn any, batch bool) (before ctxSwitches) {
	runtime.LockOSThread()
	p.fn = fn
	p.tid = gettid()
	if batch {
		if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_BATCH}, 0); err != nil {
			p.err = fmt.Errorf("sched_setattr(SCHED_BATCH): %w (-batch=false runs without it)", err)
			return ctxSwitches{}
		}
	}
	before, p.err = readCtxSwitches(p.tid)
	return before
}

// end records the loop's wall time and switches since before.
func (p *pingpongThread) end(start time.Duration, before ctxSwitches) {
	p.wall = mono() - start
	after, err := readCtxSwitches(p.tid)
	if err != nil {
		p.err = errors.Join(p.err, err)
		return
	}
	p.switches = ctxSwitches{after.voluntary - before.voluntary, after.involuntary - before.involuntary}
}

// pingpongPing serves: it writes the byte, waits for it to come back, and
// checks for the end between rounds. Closing its write end tells pong.
//
//go:noinline
func pingpongPing(s *stopper, r, w int, batch bool, out *pingpongThread, wg *sync.WaitGroup) {
	defer wg.Done()
	defer syscall.Close(w)
	before := out.begin(pingpongPing, batch)
	if out.err != nil {
		return
	}
	buf := []byte{1}
	start := mono()
	for n := 0; s.more(n); n++ {
		if _, err := syscall.Write(w, buf); err != nil {
			out.err = fmt.Errorf("ping: write: %w", err)
			break
		}
		out.reads++
		ok, err := pingpongRead(r, buf)
		if err == nil && !ok {
			err = io.ErrUnexpectedEOF // pong hung up
		}
		if err != nil {
			out.err = fmt.Errorf("ping: read: %w", err)
			break
		}
		out.rounds++
	}
	out.end(start, before)
}

// pingpongPong answers every byte until ping closes its end.
//
//go:noinline
func pingpongPong(r, w int, batch bool, out *pingpongThread, wg *sync.WaitGroup) {
	defer wg.Done()
	defer syscall.Close(w)
	before := out.begin(pingpongPong, batch)
	if out.err != nil {
		return
	}
	buf := []byte{0}
	start := mono()
	for {
		out.reads++
		ok, err := pingpongRead(r, buf)
		if err != nil {
			out.err = fmt.Errorf("pong: read: %w", err)
			break
		}
		if !ok {
			break
		}
		if _, err := syscall.Write(w, buf); err != nil {
			out.err = fmt.Errorf("pong: write: %w", err)
			break
		}
		out.rounds++
	}
	out.end(start, before)
}

// pingpongRead reads one byte from a blocking pipe, sleeping in read(2)
// from this frame until the other side writes; false at end of file.
//
//go:noinline
func pingpongRead(fd int, buf []byte) (bool, error) {
	for {
		n, err := syscall.Read(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		return n > 0, err
	}
}
