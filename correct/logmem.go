package correct

import (
	"runtime"
	"unsafe"
)

// logMem holds the log's columns outside the Go heap. The log is the
// largest table of a long live session (millions of entries) and holds no
// pointers: in the heap, the collector's growth allowance (GOGC) would be
// taken on it too, half as much memory again as the log for nothing to
// collect. Outside, its bytes are what it holds. A column's memory is
// returned when the column is replaced or dropped, and the rest when the
// log is collected.
type logMem struct {
	maps map[unsafe.Pointer][]byte // each mapping by its first byte
}

func newLogMem(owner *Log) *logMem {
	m := &logMem{maps: map[unsafe.Pointer][]byte{}}
	runtime.AddCleanup(owner, func(m *logMem) { m.freeAll() }, m)
	return m
}

// colType is what the log's columns hold.
type colType interface {
	uint16 | int32 | float32 | lat16
}

// column returns a column of n entries, room for c.
func column[T colType](m *logMem, n, c int) []T {
	if c == 0 {
		return nil
	}
	var zero T
	b := mapBytes(c * int(unsafe.Sizeof(zero)))
	p := unsafe.Pointer(unsafe.SliceData(b))
	m.maps[p] = b
	return unsafe.Slice((*T)(p), c)[:n]
}

// free returns col's memory; col must not be used after.
func free[T colType](m *logMem, col []T) {
	if cap(col) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(col))
	if b, ok := m.maps[p]; ok {
		delete(m.maps, p)
		unmapBytes(b)
	}
}

func (m *logMem) freeAll() {
	for p, b := range m.maps {
		delete(m.maps, p)
		unmapBytes(b)
	}
}
