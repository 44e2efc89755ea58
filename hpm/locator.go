package hpm

import (
	"os"
	"syscall"
	"time"

	"github.com/cctop/cctop/symbol"
)

// Locator remembers where functions are in their files, for automatic
// counting, which looks at the hottest functions again every few seconds:
// finding one reads the file's whole symbol table (tens of milliseconds
// and megabytes of garbage for a large Go binary, measured as a tenth of
// the live view's CPU on the density workload) and its first bytes of
// code. An answer holds while the file is the same one (device, inode,
// size and modification time, a stat each look). Not safe for concurrent
// use.
type Locator struct {
	known map[locKey]located
	find  func(name, path string) (Target, bool) // locate; tests count its calls
}

type locKey struct{ name, path string }

type fileID struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

type located struct {
	file fileID
	t    Target
	ok   bool // placeable: found, and its first instruction can be probed
}

// maxLocated bounds what a Locator remembers: a long session's hot
// functions come and go.
const maxLocated = 4096

// NewLocator returns an empty Locator.
func NewLocator() *Locator { return &Locator{known: map[locKey]located{}, find: locate} }

// HottestFunctions is the package's HottestFunctions, remembering where
// each candidate is.
func (l *Locator) HottestFunctions(flat []FuncSample, k int) []Target {
	return hottest(flat, k, l.locate)
}

func (l *Locator) locate(name, path string) (Target, bool) {
	id, err := identify(path)
	if err != nil {
		return Target{}, false
	}
	k := locKey{name, path}
	if e, ok := l.known[k]; ok && e.file == id {
		return e.t, e.ok
	}
	t, ok := l.find(name, path)
	if len(l.known) >= maxLocated {
		clear(l.known)
	}
	l.known[k] = located{id, t, ok}
	return t, ok
}

func identify(path string) (fileID, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	id := fileID{size: st.Size(), mtime: st.ModTime()}
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(s.Dev), uint64(s.Ino)
	}
	return id, nil
}

// locate finds name in path and checks that an entry probe can go there.
func locate(name, path string) (Target, bool) {
	vaddr, off, err := symbol.FuncLocation(path, name)
	if err != nil {
		return Target{}, false // stripped, or a name the symbolizer made up
	}
	t := Target{Func: name, Path: path, Offset: off, Vaddr: vaddr}
	return t, t.stepsSafely() == nil
}
