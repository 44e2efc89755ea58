package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// processCPU is the CPU time of the whole process in ns, 0 when it cannot
// be read. A raw system call: one the runtime sees would wake its monitor
// thread from its sleep, once a judgement.
func processCPU() uint64 {
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_PROCESS_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return uint64(ts.Nano())
}
