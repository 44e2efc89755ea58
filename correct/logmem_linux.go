package correct

import "golang.org/x/sys/unix"

// mapBytes is n bytes of anonymous memory, pages the kernel gives as they
// are first written; the Go heap if the kernel refuses.
func mapBytes(n int) []byte {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// unmapBytes returns what mapBytes gave; a slice of the Go heap is left to
// the collector.
func unmapBytes(b []byte) { _ = unix.Munmap(b) }
