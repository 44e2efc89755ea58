//go:build linux

package python

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSleepUntil sleeps until CLOCK_MONOTONIC reads t (ns), in the kernel,
// without telling the Go runtime: the goroutine keeps its P (GOMAXPROCS
// counts it), and the runtime's monitor is not woken by a system call. A
// signal (the runtime's preemption) ends the sleep early.
func rawSleepUntil(t uint64) {
	ts := unix.NsecToTimespec(int64(t))
	syscall.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME,
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
}

// threadCPU and processCPU are the calling thread's and the process's CPU
// time (ns), 0 if not known.
func threadCPU() uint64  { return cpuClock(unix.CLOCK_THREAD_CPUTIME_ID) }
func processCPU() uint64 { return cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID) }

func cpuClock(id int32) uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano())
}
