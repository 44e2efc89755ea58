package python

import (
	_ "unsafe" // for go:linkname
)

// monoNow is CLOCK_MONOTONIC in ns, the clock of the kernel's samples, read
// through the vDSO as Go's runtime reads it (a system call each read would
// cost as much as a read of a frame).
func monoNow() uint64 { return uint64(nanotime()) }

//go:linkname nanotime runtime.nanotime
func nanotime() int64
