package python

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Memory is a process's address space, read-only.
type Memory interface {
	// ReadAt fills p from addr, whole or with an error.
	ReadAt(p []byte, addr uint64) error
}

// maxIovecs bounds a vectored read: the kernel's IOV_MAX is 1024.
const maxIovecs = 1024

// vectorMemory reads several ranges in one call.
type vectorMemory interface {
	ReadMany(bufs [][]byte, addrs []uint64) error
}

// readMany fills bufs[i] from addrs[i], in one system call where mem can.
func readMany(mem Memory, bufs [][]byte, addrs []uint64) error {
	if v, ok := mem.(vectorMemory); ok {
		if v.ReadMany(bufs, addrs) == nil {
			return nil
		}
		// One range failed; which, the reads one by one say.
	}
	for i, b := range bufs {
		if err := mem.ReadAt(b, addrs[i]); err != nil {
			return err
		}
	}
	return nil
}

// readManyOnce is readMany in one system call, or an error: a speculative
// read that failed is not worth a read per range.
func readManyOnce(mem Memory, bufs [][]byte, addrs []uint64) error {
	if v, ok := mem.(vectorMemory); ok {
		return v.ReadMany(bufs, addrs)
	}
	for i, b := range bufs {
		if err := mem.ReadAt(b, addrs[i]); err != nil {
			return err
		}
	}
	return nil
}

// errUnmapped: the address is not mapped readable, or the process is gone.
var errUnmapped = errors.New("memory not readable")

const pageSize = 4096

// pageCache reads whole pages through a Memory and keeps up to cap of
// them for one pass over a thread's stack: frames sit next to each other
// (3.11+ in one data stack chunk), so one system call serves several
// reads, and a page that changed between two passes is read again.
type pageCache struct {
	mem   Memory
	addrs []uint64
	pages [][]byte
	next  int // the slot to replace when full
	reads int // system calls made, for the cost counters
}

const maxCachedPages = 16

func newPageCache(mem Memory) *pageCache {
	c := &pageCache{mem: mem}
	for i := 0; i < maxCachedPages; i++ {
		c.pages = append(c.pages, make([]byte, pageSize))
	}
	return c
}

// reset forgets the pages: the next pass reads the memory as it is then.
func (c *pageCache) reset() { c.addrs = c.addrs[:0]; c.next = 0 }

// page is the cached copy of the page at base, read if needed.
func (c *pageCache) page(base uint64) ([]byte, error) {
	for i, a := range c.addrs {
		if a == base {
			return c.pages[i], nil
		}
	}
	var slot int
	if len(c.addrs) < maxCachedPages {
		slot = len(c.addrs)
		c.addrs = append(c.addrs, ^uint64(0))
	} else {
		slot = c.next
		c.next = (c.next + 1) % maxCachedPages
	}
	c.reads++
	if err := c.mem.ReadAt(c.pages[slot], base); err != nil {
		c.addrs[slot] = ^uint64(0)
		return nil, err
	}
	c.addrs[slot] = base
	return c.pages[slot], nil
}

// read fills p from addr through the cached pages.
func (c *pageCache) read(p []byte, addr uint64) error {
	if addr == 0 || addr+uint64(len(p)) < addr {
		return errUnmapped
	}
	for len(p) > 0 {
		base := addr &^ (pageSize - 1)
		pg, err := c.page(base)
		if err != nil {
			return err
		}
		n := copy(p, pg[addr-base:])
		p, addr = p[n:], addr+uint64(n)
	}
	return nil
}

// u64 reads one pointer-sized word.
func (c *pageCache) u64(addr uint64) (uint64, error) {
	var b [8]byte
	if err := c.read(b[:], addr); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// le64 and le32 read little-endian fields of a struct read whole; a field
// past the end of b reads as zero, never a panic: the layouts come from
// tables and from the target's own debug offsets.
func le64(b []byte, off uint64) uint64 {
	if off+8 > uint64(len(b)) {
		return 0
	}
	return binary.LittleEndian.Uint64(b[off:])
}

func le32(b []byte, off uint64) uint32 {
	if off+4 > uint64(len(b)) {
		return 0
	}
	return binary.LittleEndian.Uint32(b[off:])
}

func le8(b []byte, off uint64) byte {
	if off >= uint64(len(b)) {
		return 0
	}
	return b[off]
}

// ReadError is a read of the target's memory that failed, with what was
// being read.
type ReadError struct {
	What string
	Addr uint64
	Err  error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("reading %s at %#x: %v", e.What, e.Addr, e.Err)
}
func (e *ReadError) Unwrap() error { return e.Err }
