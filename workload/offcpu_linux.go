package workload

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The off-CPU workloads (sleep, mutex, pingpong) are the targets of cctop's
// off-CPU profiling (issue 17), which samples a thread when it leaves the
// CPU and weighs that stack by the time until the thread runs again. Each
// blocks its OS threads in a system call made on the goroutine's own stack,
// so that a blocked thread's user stack is the workload's call path.
//
// That rules out time.Sleep, sync.Mutex, channels and files the runtime
// polls (os.Pipe is non-blocking): they park the goroutine, and its thread
// then sleeps inside the Go scheduler (a futex in runtime.mPark, epoll_wait
// in netpoll) on the g0 stack, which does not show who was waiting. So each
// worker locks its goroutine to its OS thread and makes the blocking call
// itself: nanosleep, FUTEX_WAIT, read on a blocking pipe. Going through
// syscall.Syscall the runtime is told first (entersyscall) and may give the
// thread's P to another thread, but the thread itself stays in the kernel
// with the workload's frames under the system call until it returns.
//
// The Go runtime still takes a computing thread off the CPU now and then,
// briefly. Its sysmon thread wakes about every millisecond while a
// goroutine runs long, and when it wakes on the worker's CPU it preempts the
// worker for some microseconds (most of a computing thread's involuntary
// switches and timeslices); and a goroutine that has run for 10 ms is
// preempted, which for a locked one means its thread sleeps in the
// scheduler until the goroutine is rescheduled. That off-CPU time falls
// inside the workloads' compute functions and is in the schedstat figures
// (run-queue wait, timeslices); it is small next to the blocking the
// workloads are built around.
//
// Every workload measures itself per thread: wall times on the monotonic
// clock (Go's runtime reads CLOCK_MONOTONIC, through the vDSO), and the
// kernel's own accounting from /proc/self/task/TID/schedstat and status,
// read by the thread before and after its loop. Workers return while still
// locked, which ends their OS threads, so no thread outlives its workload's
// figures or carries other goroutines' history into them.

var offCPUWorkloads = []entry{
	{"sleep", runSleep},
	{"mutex", runMutex},
	{"pingpong", runPingpong},
}

var monoEpoch = time.Now()

// mono reads the monotonic clock (CLOCK_MONOTONIC), as a time since the
// package was initialized: one vDSO call, no system call.
func mono() time.Duration { return time.Since(monoEpoch) }

// threadCPU is the calling thread's CPU time, CLOCK_THREAD_CPUTIME_ID.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}

// schedstat is a thread's /proc/self/task/TID/schedstat: time on the CPU,
// time runnable but waiting on a run queue, and the number of times it was
// given the CPU (timeslices). ok is false where the kernel does not provide
// the file (no CONFIG_SCHED_INFO); the figures then print as "-".
type schedstat struct {
	oncpu, runqueue time.Duration
	slices          uint64
	ok              bool
}

func readSchedstat(tid int) schedstat {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
	if err != nil {
		return schedstat{}
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return schedstat{}
	}
	var v [3]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(string(f[i]), 10, 64); err != nil {
			return schedstat{}
		}
	}
	return schedstat{oncpu: time.Duration(v[0]), runqueue: time.Duration(v[1]), slices: v[2], ok: true}
}

// since is what the thread accumulated from before to s.
func (s schedstat) since(before schedstat) schedstat {
	if !s.ok || !before.ok {
		return schedstat{}
	}
	return schedstat{oncpu: s.oncpu - before.oncpu, runqueue: s.runqueue - before.runqueue, slices: s.slices - before.slices, ok: true}
}

// add sums over threads; the sum is known only if every part is.
func (s *schedstat) add(o schedstat) {
	s.oncpu += o.oncpu
	s.runqueue += o.runqueue
	s.slices += o.slices
	s.ok = s.ok && o.ok
}

// String is the fields as printed at the end of a thread's line.
func (s schedstat) String() string {
	if !s.ok {
		return "oncpu - runqueue - slices -"
	}
	return fmt.Sprintf("oncpu %s runqueue %s slices %d", s.oncpu, s.runqueue, s.slices)
}

// ctxSwitches are a thread's voluntary and involuntary context switches,
// from /proc/self/task/TID/status: voluntary when it blocked (or yielded),
// involuntary when it was preempted.
type ctxSwitches struct {
	voluntary, involuntary uint64
}

func readCtxSwitches(tid int) (ctxSwitches, error) {
	path := fmt.Sprintf("/proc/self/task/%d/status", tid)
	b, err := os.ReadFile(path)
	if err != nil {
		return ctxSwitches{}, err
	}
	var c ctxSwitches
	found := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		var dst *uint64
		key, val, ok := bytes.Cut(line, []byte(":"))
		switch {
		case !ok:
			continue
		case string(key) == "voluntary_ctxt_switches":
			dst = &c.voluntary
		case string(key) == "nonvoluntary_ctxt_switches":
			dst = &c.involuntary
		default:
			continue
		}
		if *dst, err = strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64); err != nil {
			return ctxSwitches{}, fmt.Errorf("%s: %s: %w", path, line, err)
		}
		found++
	}
	if found != 2 {
		return ctxSwitches{}, fmt.Errorf("%s: no voluntary_ctxt_switches and nonvoluntary_ctxt_switches lines", path)
	}
	return c, nil
}
