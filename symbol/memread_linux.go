//go:build linux

package symbol

import "golang.org/x/sys/unix"

// readProcessMemory fills buf with pid's memory at addr: code that has no
// file behind it (JIT code, runtime trampolines) is read where it runs. It
// reports false when the process is gone, the range is not mapped
// readable, or we may not read it (the same permission as ptrace's
// attach: ours, a child's, or root's).
func readProcessMemory(pid int, addr uint64, buf []byte) bool {
	if pid <= 0 || len(buf) == 0 {
		return false
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	return err == nil && n == len(buf)
}
