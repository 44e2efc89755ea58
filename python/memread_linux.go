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
	gap    []byte // what lies between two ranges read as one
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

// ReadMany reads every range in one process_vm_readv. Ranges that follow
// each other upwards within a page of each other are read as one remote
// range, the bytes between them into scratch: the kernel pins and looks up
// each remote range on its own, which costs more than copying a few
// hundred bytes more (a read of a Python stack: 12 ranges, 5 or 6 after
// merging). Only the pages of the ranges themselves, or the page right
// after one, are touched, so a merge never reads an unmapped page the
// ranges did not.
func (m *processMemory) ReadMany(bufs [][]byte, addrs []uint64) error {
	if len(bufs) > maxIovecs || len(bufs) == 0 {
		return errUnmapped
	}
	local, remote := m.local[:0], m.remote[:0]
	defer func() { m.local, m.remote = local[:0], remote[:0] }()
	if m.gap == nil {
		m.gap = make([]byte, 2*pageSize)
	}
	total := 0
	for i, b := range bufs {
		if len(b) == 0 {
			return errUnmapped
		}
		a := addrs[i]
		if k := len(remote) - 1; k >= 0 {
			end := uint64(remote[k].Base) + uint64(remote[k].Len)
			if a >= end && a/pageSize <= (end-1)/pageSize+1 && a-end <= uint64(len(m.gap)) &&
				len(local)+1+len(bufs)-i <= maxIovecs {
				if gap := int(a - end); gap > 0 {
					g := unix.Iovec{Base: &m.gap[0]}
					g.SetLen(gap)
					local = append(local, g)
					total += gap
				}
				l := unix.Iovec{Base: &b[0]}
				l.SetLen(len(b))
				local = append(local, l)
				remote[k].Len += int(a-end) + len(b)
				total += len(b)
				continue
			}
		}
		l := unix.Iovec{Base: &b[0]}
		l.SetLen(len(b))
		local = append(local, l)
		remote = append(remote, unix.RemoteIovec{Base: uintptr(a), Len: len(b)})
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
