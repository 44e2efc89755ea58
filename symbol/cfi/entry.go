package cfi

// entry is the common header of a CIE or FDE: every offset is relative to
// the start of its section.
type entry struct {
	idPos int // offset of the CIE id / CIE pointer field
	body  int // offset just past that field
	end   int // offset just past the entry
	id    uint64
	is64  bool // 64-bit DWARF: 8-byte id, set by the 0xffffffff length escape
}

type entryStatus uint8

const (
	entryOK   entryStatus = iota
	entrySkip             // unusable entry whose end is known: continue at e.end
	entryStop             // nothing from here on can be trusted
)

// readEntry parses the length and id of the entry at off. In .eh_frame a
// zero length is the terminator crtend.o appends; in .debug_frame there is
// no terminator, so a zero word is stepped over as padding.
func readEntry(b []byte, off int, debug bool) (entry, entryStatus) {
	var e entry
	r := reader{b: b, pos: off}
	n := uint64(r.u32())
	if r.bad {
		return e, entryStop
	}
	if n == 0 {
		if debug {
			e.end = r.pos
			return e, entrySkip
		}
		return e, entryStop
	}
	if n == 0xffffffff {
		e.is64 = true
		n = r.u64()
	} else if n >= 0xfffffff0 {
		// Reserved lengths: the rest of the section has an unknown layout.
		return e, entryStop
	}
	if r.bad || !r.need(n) {
		return e, entryStop
	}
	e.idPos = r.pos
	e.end = r.pos + int(n)
	r.b = b[:e.end]
	if e.is64 {
		e.id = r.u64()
	} else {
		e.id = uint64(r.u32())
	}
	if r.bad {
		return e, entrySkip
	}
	e.body = r.pos
	return e, entryOK
}

// isCIE tells CIEs from FDEs: .eh_frame marks CIEs with id 0 (FDEs hold a
// non-zero back pointer there), .debug_frame with all ones (FDEs hold a
// section offset, which may be 0).
func (e *entry) isCIE(debug bool) bool {
	if !debug {
		return e.id == 0
	}
	if e.is64 {
		return e.id == ^uint64(0)
	}
	return e.id == 0xffffffff
}

// ciePos returns the section offset of the CIE an FDE names.
func (e *entry) ciePos(debug bool, size int) (int, bool) {
	if debug {
		if e.id >= uint64(size) {
			return 0, false
		}
		return int(e.id), true
	}
	// .eh_frame: the distance back from the pointer field itself.
	if e.id > uint64(e.idPos) {
		return 0, false
	}
	return e.idPos - int(e.id), true
}
