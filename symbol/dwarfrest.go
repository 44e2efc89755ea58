package symbol

import (
	"bytes"
	"debug/elf"
	"os"
	"slices"
	"time"
)

// A module's debug info is mostly needed while a profile finds its code:
// the first lookups in a unit parse its functions and line table, and the
// first lookups of an inlined function resolve its name. From then on the
// parsed tables answer, and the sections and debug/dwarf's abbreviation
// tables behind them sit unused: libc's separate debug file alone holds
// 28 MB of them, which on a Go or C program whose threads all start in
// libc was more than half of `cctop top`'s heap.
//
// So a source whose sections have not been used for restIdle looks
// (restEvery apart) lets them go, keeping its units' parsed tables and the
// names it resolved, and reads the file again when a lookup reaches a unit
// not parsed yet or a name not resolved yet. The file read again must have
// the build ID the module was loaded with, and the same units; if it does
// not (the package was upgraded), the source keeps what it has parsed and
// the symbol table names the rest. Each wake doubles the idle time before
// the next rest, so code that keeps finding new units keeps its sections.

// restEvery is how often RestDebugInfo looks, restIdle how many looks a
// source must go unused before it rests, doubled per wake up to
// restIdle<<maxRestDoublings.
const (
	restEvery        = 5 * time.Second
	restIdle         = 2
	maxRestDoublings = 5
)

// dwarfRest is a dwarfSource's state of rest.
type dwarfRest struct {
	// reopen reads the same file's sections again (ok false when it
	// cannot: gone, or another build); nil when a file read again
	// could not be checked to be the same (no build ID, no path, an
	// image in memory).
	reopen  func() (secs dwarfSecs, held int64, ok bool)
	resting bool
	used    bool // sections used since the last look
	idle    int  // looks in a row without use
	wakes   int
}

// reopenDWARF returns how to read path's debug sections again, or nil when
// there is nothing to check a file read again against. Only the sections:
// the units parsed and the index stay the source's.
func reopenDWARF(open func(string) (*os.File, error), path string, id []byte) func() (dwarfSecs, int64, bool) {
	if open == nil || path == "" || len(id) == 0 {
		return nil
	}
	id = bytes.Clone(id)
	return func() (dwarfSecs, int64, bool) {
		file, err := open(path)
		if err != nil {
			return dwarfSecs{}, 0, false
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil || !st.Mode().IsRegular() {
			return dwarfSecs{}, 0, false
		}
		f, err := elf.NewFile(file)
		if err != nil || !bytes.Equal(buildID(f), id) {
			return dwarfSecs{}, 0, false
		}
		secs, _, held, ok := readDWARFSecs(f, st.Size())
		return secs, held, ok
	}
}

// awake makes sure the sections are there before they are used,
// reading them again if the source rests; false when they cannot be.
func (s *dwarfSource) awake() bool {
	r := &s.rest
	r.used = true
	if !r.resting {
		return true
	}
	if r.reopen == nil {
		return false
	}
	secs, held, ok := r.reopen()
	if !ok || !sameUnits(listUnits(secs.info, s.order), s.units) {
		r.reopen = nil // not the file it was: never again
		return false
	}
	s.secs, s.held = secs, held
	s.acct.add(s.held)
	r.resting = false
	r.wakes++
	if s.acct != nil && s.acct.cache != nil {
		s.acct.cache.wakes++
	}
	return true
}

// sameUnits reports whether a and b list the same units.
func sameUnits(a, b []dwarfUnit) bool {
	return slices.EqualFunc(a, b, func(x, y dwarfUnit) bool {
		return x.base == y.base && x.end == y.end && x.off == y.off
	})
}

// look is one of RestDebugInfo's looks at the source; it reports whether
// the source went to rest.
func (s *dwarfSource) look() bool {
	r := &s.rest
	if r.used {
		r.used, r.idle = false, 0
		return false
	}
	if r.resting || r.reopen == nil {
		return false
	}
	r.idle++
	if r.idle < restIdle<<min(r.wakes, maxRestDoublings) {
		return false
	}
	s.secs = dwarfSecs{}
	s.decoded = [decodedUnits]unitData{}
	s.acct.add(-s.held)
	r.resting, r.idle = true, 0
	return true
}

// RestDebugInfo lets go of the debug info sections that no lookup has used
// for a while (restEvery × restIdle, more for a module that woke before):
// their parsed parts stay, and a lookup that needs more reads the file
// again. The engine calls it between batches with the time; it looks at
// most every restEvery, and returns how many modules went to rest.
func (r *Resolver) RestDebugInfo(now time.Time) int {
	c := &r.mods
	if now.Before(c.restAt) {
		return 0
	}
	c.restAt = now.Add(restEvery)
	n := 0
	for _, mod := range c.byFile {
		for _, src := range mod.sources {
			if d, ok := src.(*dwarfSource); ok && d.look() {
				n++
			}
		}
	}
	c.rests += uint64(n)
	return n
}
