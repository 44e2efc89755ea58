//go:build linux

package python

import "golang.org/x/sys/unix"

// processMemory is a live process's memory, read with process_vm_readv:
// no ptrace stop, the same permission as ptrace's attach.
type processMemory struct{ pid int }

// ProcessMemory is pid's memory.
func ProcessMemory(pid int) Memory { return processMemory{pid} }

func (m processMemory) ReadAt(p []byte, addr uint64) error {
	if len(p) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &p[0]}}
	local[0].SetLen(len(p))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
	n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n != len(p) {
		return errUnmapped
	}
	return nil
}

func (m processMemory) ReadMany(bufs [][]byte, addrs []uint64) error {
	if len(bufs) > maxIovecs {
		return errUnmapped
	}
	var local [maxIovecs]unix.Iovec
	var remote [maxIovecs]unix.RemoteIovec
	total := 0
	for i, b := range bufs {
		if len(b) == 0 {
			return errUnmapped
		}
		local[i].Base = &b[0]
		local[i].SetLen(len(b))
		remote[i] = unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(b)}
		total += len(b)
	}
	n, err := unix.ProcessVMReadv(m.pid, local[:len(bufs)], remote[:len(bufs)], 0)
	if err != nil {
		return err
	}
	if n != total {
		return errUnmapped
	}
	return nil
}
