//go:build linux

package sampler

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is the consumer side of one perf mmap ring: a metadata page followed
// by 2^n data pages that the kernel writes records into. This file is the
// only one that touches mmap.
type ring struct {
	mem     []byte // the whole mapping (nil for a fake ring in tests)
	meta    *unix.PerfEventMmapPage
	data    []byte
	mask    uint64
	scratch []byte // a record that wraps around the end is copied here
}

// mmapRing maps 1+pages pages of fd. pages must be a power of two.
func mmapRing(fd, pages int) (*ring, error) {
	if pages <= 0 || pages&(pages-1) != 0 {
		return nil, fmt.Errorf("ring size %d pages is not a power of two", pages)
	}
	size := (1 + pages) * os.Getpagesize()
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap perf ring (%d KiB): %w", size/1024, err)
	}
	r, err := newRing(mem)
	if err != nil {
		unix.Munmap(mem)
		return nil, err
	}
	r.mem = mem
	return r, nil
}

// newRing interprets mem as a perf mmap region: the metadata page then the
// data area it describes. Tests pass plain memory here.
func newRing(mem []byte) (*ring, error) {
	page := os.Getpagesize()
	if len(mem) < 2*page || uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, fmt.Errorf("perf ring mapping too small or misaligned")
	}
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
	off, size := meta.Data_offset, meta.Data_size
	if off == 0 { // kernels before 4.1 leave these zero: data follows the first page
		off, size = uint64(page), uint64(len(mem)-page)
	}
	if size == 0 || size&(size-1) != 0 || off+size > uint64(len(mem)) {
		return nil, fmt.Errorf("perf ring data area %d+%d does not fit %d bytes", off, size, len(mem))
	}
	return &ring{
		meta:    meta,
		data:    mem[off : off+size],
		mask:    size - 1,
		scratch: make([]byte, 0, 1<<16),
	}, nil
}

// readAll calls fn for every complete record between the consumer tail and
// the kernel's head, then hands the space back to the kernel. fn's argument
// aliases the ring or the scratch buffer and is only valid during the call.
// It returns the number of records read and stops early at a corrupt header
// (a size of zero would otherwise spin forever), dropping the rest of that
// batch.
func (r *ring) readAll(fn func(raw []byte)) (n int, corrupt bool) {
	head := atomic.LoadUint64(&r.meta.Data_head) // acquire: records before head are complete
	tail := atomic.LoadUint64(&r.meta.Data_tail)
	size := uint64(len(r.data))
	for tail < head {
		if head-tail < 8 {
			corrupt = true
			break
		}
		off := tail & r.mask
		var hdr [8]byte
		r.copyOut(hdr[:], off)
		recSize := uint64(binary.NativeEndian.Uint16(hdr[6:]))
		if recSize < 8 || recSize > head-tail || recSize > size {
			corrupt = true
			break
		}
		if off+recSize <= size {
			fn(r.data[off : off+recSize])
		} else {
			r.scratch = r.scratch[:recSize]
			r.copyOut(r.scratch, off)
			fn(r.scratch)
		}
		tail += recSize
		n++
	}
	if corrupt {
		tail = head
	}
	atomic.StoreUint64(&r.meta.Data_tail, tail) // release: the kernel may reuse the space
	return n, corrupt
}

// copyOut copies len(dst) bytes starting at data offset off, wrapping.
func (r *ring) copyOut(dst []byte, off uint64) {
	n := copy(dst, r.data[off:])
	if n < len(dst) {
		copy(dst[n:], r.data)
	}
}

// unread is how many bytes of records the kernel has written and the
// reader not read yet, at most the ring's size (a head past that is
// corrupt, and readAll stops at it).
func (r *ring) unread() uint64 {
	head := atomic.LoadUint64(&r.meta.Data_head)
	tail := atomic.LoadUint64(&r.meta.Data_tail)
	if head < tail {
		return 0
	}
	return min(head-tail, uint64(len(r.data)))
}

func (r *ring) close() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.mem, r.meta, r.data = nil, nil, nil
	return err
}
