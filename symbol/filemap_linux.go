package symbol

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// mapRange maps n bytes of r from off read-only when r is a file the
// kernel will map, or returns nil. The pages come from the page cache as
// they are first read, and the kernel may drop them again: a large table
// read a few entries at a time costs the pages read, not its size, and
// none of it is Go heap the collector scans or lets grow.
func mapRange(r io.ReaderAt, off, n, size uint64) ([]byte, *fileMap) {
	f, ok := r.(*os.File)
	if !ok || n == 0 || off > size || n > size-off || n > maxPclntab {
		return nil, nil
	}
	page := uint64(os.Getpagesize())
	start := off &^ (page - 1)
	mem, err := unix.Mmap(int(f.Fd()), int64(start), int(off-start+n), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil, nil
	}
	return mem[off-start:][:n:n], &fileMap{mem: mem}
}

// fileMap is a mapping mapRange made.
type fileMap struct{ mem []byte }

// release lets the kernel take the pages read so far: they are read again
// from the page cache when needed.
func (m *fileMap) release() { _ = unix.Madvise(m.mem, unix.MADV_DONTNEED) }

// unmap ends the mapping; nothing may read its bytes after.
func (m *fileMap) unmap() { _ = unix.Munmap(m.mem) }
