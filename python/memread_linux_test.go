//go:build linux

package python

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestReadManyMerged reads ranges of this process's own memory through
// process_vm_readv: ranges next to each other are read as one (with the
// bytes between them into scratch), ranges out of order or pages apart are
// not, and a range on a page between which and the last range lies an
// unreadable page is still read, not lost to a merge that would cross it.
func TestReadManyMerged(t *testing.T) {
	const pages = 5
	mem, err := unix.Mmap(-1, 0, pages*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := range mem {
		mem[i] = byte(i*7 + i/pageSize)
	}
	// Page 3 unreadable: pages 0-2 and 4 stay.
	if err := unix.Mprotect(mem[3*pageSize:4*pageSize], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	type rng struct{ off, n int }
	cases := []struct {
		name   string
		ranges []rng
	}{
		{"one page, gaps", []rng{{8, 16}, {100, 8}, {1000, 64}, {4000, 96}}},
		{"across pages", []rng{{4000, 200}, {pageSize + 300, 8}, {2*pageSize + 10, 8}}},
		{"out of order", []rng{{2 * pageSize, 8}, {16, 8}, {pageSize, 8}, {16, 8}}},
		{"across the hole", []rng{{2*pageSize + 4000, 90}, {4*pageSize + 8, 16}}},
		{"touching", []rng{{0, 8}, {8, 8}, {16, 4000}}},
	}
	m := ProcessMemory(os.Getpid()).(*processMemory)
	for _, c := range cases {
		bufs := make([][]byte, len(c.ranges))
		addrs := make([]uint64, len(c.ranges))
		for i, r := range c.ranges {
			bufs[i] = make([]byte, r.n)
			addrs[i] = base + uint64(r.off)
		}
		if err := m.ReadMany(bufs, addrs); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for i, r := range c.ranges {
			if !bytes.Equal(bufs[i], mem[r.off:r.off+r.n]) {
				t.Errorf("%s: range %d (%#x+%d) read wrong bytes", c.name, i, r.off, r.n)
			}
		}
	}
	// A range on the unreadable page fails the read, merged or not.
	bufs := [][]byte{make([]byte, 8), make([]byte, 8)}
	if err := m.ReadMany(bufs, []uint64{base + 2*pageSize + 4000, base + 3*pageSize + 8}); err == nil {
		t.Error("a read of an unreadable page succeeded")
	}
}
