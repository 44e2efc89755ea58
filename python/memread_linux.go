//go:build linux

package python

import "golang.org/x/sys/unix"

// processMemory is a live process's memory, read with process_vm_readv:
// no ptrace stop, the same permission as ptrace's attach.
type processMemory struct {
	pid int
	// The vectors of ReadMany, kept: one process's memory is read by
	// one goroutine at a time.
	local  []unix.Iovec
	remote []unix.RemoteIovec
}

// ProcessMemory is pid's memory. ReadMany is not safe for concurrent use.
func ProcessMemory(pid int) Memory { return &processMemory{pid: pid} }

func (m *processMemory) ReadAt(p []byte, addr uint64) error {
	if len(p) == 0 {
		return nil
	}
	local := append(m.local[:0], unix.Iovec{Base: &p[0]})
	local[0].SetLen(len(p))
	remote := append(m.remote[:0], unix.RemoteIovec{Base: uintptr(addr), Len: len(p)})
	m.local, m.remote = local[:0], remote[:0]
	n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n != len(p) {
		return errUnmapped
	}
	return nil
}

func (m *processMemory) ReadMany(bufs [][]byte, addrs []uint64) error {
	if len(bufs) > maxIovecs || len(bufs) == 0 {
		return errUnmapped
	}
	local, remote := m.local[:0], m.remote[:0]
	defer func() { m.local, m.remote = local[:0], remote[:0] }()
	total := 0
	for i, b := range bufs {
		if len(b) == 0 {
			return errUnmapped
		}
		l := unix.Iovec{Base: &b[0]}
		l.SetLen(len(b))
		local = append(local, l)
		remote = append(remote, unix.RemoteIovec{Base: uintptr(addrs[i]), Len: len(b)})
		total += len(b)
	}
	n, err := unix.ProcessVMReadv(m.pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n != total {
		return errUnmapped
	}
	return nil
}
