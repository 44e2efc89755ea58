package sampler

import (
	_ "unsafe" // for go:linkname
)

// MonoNow is CLOCK_MONOTONIC in nanoseconds: the clock of the records when
// the events use it (use_clockid), read as Go's runtime reads its own
// monotonic clock, through the vDSO. unix.ClockGettime is a real system
// call, and every system call that finds the runtime idle wakes its sysmon
// thread for a millisecond of 20 µs naps: at a pass over the rings every
// 100 ms, that was a sixth of the live view's CPU time.
func MonoNow() uint64 { return uint64(nanotime()) }

//go:linkname nanotime runtime.nanotime
func nanotime() int64
