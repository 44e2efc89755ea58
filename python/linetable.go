package python

import (
	"math"
	"slices"
	"sort"
)

// lineFormat is the layout of a code object's line table, which changed in
// 3.10 (PEP 626) and again in 3.11 (the location table, with columns).
type lineFormat uint8

const (
	lnotab39     lineFormat = iota + 1 // 3.9 co_lnotab, offsets in bytes
	linetable310                       // 3.10 co_linetable, offsets in bytes (callers pass 2*f_lasti)
	locations311                       // 3.11+ location table, offsets in code units
)

// maxOffset bounds the offsets a table describes, so that a garbage table
// cannot overflow the int32 of a lineRange: a real one describes at most
// the code's length, far less.
const maxOffset = math.MaxInt32

// maxLineSum bounds the line a table's deltas add up to. Past it the table
// is garbage (a real line is an int32), and stopping there keeps the sum
// from ever overflowing an int64 whatever the table's length: one delta is
// at most a 36-bit varint.
const maxLineSum = 1 << 40

// lineAt returns the source line of the instruction at offset (in the unit
// the format says: bytes for lnotab39 and linetable310, code units for
// locations311), given the code object's co_firstlineno; 0 if the table has
// no line for it or is malformed there.
//
// It walks the table without allocating; decodeLines is for a table asked
// for many offsets.
func lineAt(format lineFormat, table []byte, firstLine int, offset int) int {
	if offset < 0 {
		return 0
	}
	it := newLineIter(format, table, firstLine)
	for {
		_, end, line, ok := it.next()
		if !ok {
			return 0
		}
		// Ranges are contiguous from offset 0, so the first one that ends
		// past offset holds it.
		if offset < end {
			return line
		}
	}
}

// lineIndex is a decoded table: sorted ranges of offsets (in the format's
// unit) with their line. The zero lineIndex has no line for any offset.
type lineIndex struct {
	// ranges are contiguous: the first starts at 0, each runs to the next
	// one's start and the last to end. Neighbours have different lines.
	ranges []lineRange
	end    int32
}

// lineRange is where a run of offsets with one line starts; int32s, as a
// profiler keeps thousands of these indexes.
type lineRange struct {
	start int32
	line  int32 // 0: none
}

// decodeLines decodes a table once for line. Its ranges are at most one per
// entry of the table, so bounded by len(table).
func decodeLines(format lineFormat, table []byte, firstLine int) lineIndex {
	var x lineIndex
	it := newLineIter(format, table, firstLine)
	for {
		start, end, line, ok := it.next()
		if !ok {
			break
		}
		if n := len(x.ranges); n == 0 || int(x.ranges[n-1].line) != line {
			x.ranges = append(x.ranges, lineRange{start: int32(start), line: int32(line)})
		}
		x.end = int32(end)
	}
	x.ranges = slices.Clip(x.ranges)
	return x
}

// line returns the line of the instruction at offset, 0 where the table
// has none.
func (x *lineIndex) line(offset int) int {
	if offset < 0 || offset >= int(x.end) {
		return 0
	}
	// The first range starts at 0 <= offset, so i >= 0.
	i := sort.Search(len(x.ranges), func(i int) bool { return int(x.ranges[i].start) > offset }) - 1
	return int(x.ranges[i].line)
}

// lineIter walks a table's ranges in order of offset, the one decoder that
// lineAt and decodeLines share so that they cannot disagree.
type lineIter struct {
	format lineFormat
	table  []byte
	pos    int   // the next entry's first byte
	addr   int   // where the next range starts
	line   int64 // the sum of firstLine and the line deltas so far
	done   bool
	// steps counts the entries read: at most one per byte of the table,
	// as each reads at least one (the tests check it).
	steps int
}

func newLineIter(format lineFormat, table []byte, firstLine int) lineIter {
	return lineIter{format: format, table: table, line: int64(firstLine)}
}

// next returns the next non-empty range of offsets [start, end) and its
// line (0: none); ok is false at the end of the table, or where it stops
// being well formed, as nothing after that can be trusted: the line of
// every later entry is relative to the one that could not be read.
func (it *lineIter) next() (start, end, line int, ok bool) {
	for !it.done {
		if it.line > maxLineSum || it.line < -maxLineSum {
			break
		}
		var n int
		var delta int64
		var none bool
		switch it.format {
		case lnotab39:
			n, delta, none, ok = it.lnotab()
		case linetable310:
			n, delta, none, ok = it.linetable()
		case locations311:
			n, delta, none, ok = it.location()
		}
		if !ok {
			break
		}
		it.steps++
		start = it.addr
		if n > maxOffset-start {
			n = maxOffset - start
			it.done = true
		}
		it.addr += n
		// The lnotab's delta is the line of the next range, the later
		// formats' one of this range.
		before := it.line
		it.line += delta
		if it.format != lnotab39 {
			before = it.line
		}
		if n == 0 {
			// An entry of no instructions only moves the line: a line
			// delta too large for one entry is split over several.
			continue
		}
		return start, it.addr, lineOf(before, none), true
	}
	it.done = true
	// In 3.9 the last line runs on to the end of the code, which the
	// table does not say (PyCode_Addr2Line gives it to any offset).
	if it.format == lnotab39 && it.addr < maxOffset && it.line <= maxLineSum && it.line >= -maxLineSum {
		start, it.addr = it.addr, maxOffset
		return start, maxOffset, lineOf(it.line, false), true
	}
	return 0, 0, 0, false
}

// lineOf is the line a range reports: 0 for none, and for a sum that no
// real line is (a line is at least 1 and an int).
func lineOf(l int64, none bool) int {
	if none || l <= 0 || l > math.MaxInt32 {
		return 0
	}
	return int(l)
}

// lnotab reads a 3.9 co_lnotab pair: an unsigned byte offset increment and
// a signed line increment, as PyCode_Addr2Line does. A trailing odd byte
// is ignored, as there (it takes the pair count as the length / 2).
func (it *lineIter) lnotab() (n int, delta int64, none, ok bool) {
	if len(it.table)-it.pos < 2 {
		return 0, 0, false, false
	}
	n, delta = int(it.table[it.pos]), int64(int8(it.table[it.pos+1]))
	it.pos += 2
	return n, delta, false, true
}

// linetable reads a 3.10 co_linetable pair: an unsigned byte offset delta
// (the range's length) and a signed line delta, where -128 says the range
// has no line and leaves the line unchanged.
func (it *lineIter) linetable() (n int, delta int64, none, ok bool) {
	if len(it.table)-it.pos < 2 {
		return 0, 0, false, false
	}
	n, delta = int(it.table[it.pos]), int64(int8(it.table[it.pos+1]))
	it.pos += 2
	if delta == -128 {
		return n, 0, true, true
	}
	return n, delta, false, true
}

// Kinds of a location entry (_PyCodeLocationInfoKind of 3.11's
// Include/cpython/code.h); below locOneLine0 a short form of the same line.
const (
	locOneLine0  = 10 // 10–12: line delta kind-10, two column bytes
	locNoColumns = 13 // svarint line delta
	locLong      = 14 // svarint line delta, varint end line delta, varint columns+1
	locNone      = 15 // no line, no data
)

// location reads a 3.11+ location entry: a first byte 1kkkklll (kind,
// length-1 in code units), then the kind's data, every byte of which has
// its high bit clear, the mark CPython's own reader of lines skips to to
// find the next entry. An entry whose data is cut short by the table's end
// or by such a mark is malformed, not parsed on into the next entry.
func (it *lineIter) location() (n int, delta int64, none, ok bool) {
	t := it.table
	if it.pos >= len(t) || t[it.pos]&0x80 == 0 {
		return 0, 0, false, false
	}
	kind, n := int(t[it.pos]>>3&15), int(t[it.pos]&7)+1
	p := it.pos + 1
	switch {
	case kind == locNone:
		none = true
	case kind == locLong:
		if delta, p, ok = svarint(t, p); !ok {
			return 0, 0, false, false
		}
		for range 3 { // end line delta, start and end columns
			if _, p, ok = varint(t, p); !ok {
				return 0, 0, false, false
			}
		}
	case kind == locNoColumns:
		if delta, p, ok = svarint(t, p); !ok {
			return 0, 0, false, false
		}
	case kind >= locOneLine0:
		delta = int64(kind - locOneLine0)
		if !dataBytes(t, p, 2) {
			return 0, 0, false, false
		}
		p += 2
	default: // short form: one byte of columns, same line
		if !dataBytes(t, p, 1) {
			return 0, 0, false, false
		}
		p++
	}
	it.pos = p
	return n, delta, none, true
}

// dataBytes says whether t has n bytes of entry data at p.
func dataBytes(t []byte, p, n int) bool {
	if len(t)-p < n {
		return false
	}
	for _, b := range t[p : p+n] {
		if b&0x80 != 0 {
			return false
		}
	}
	return true
}

// varint reads a location table varint at p: 6-bit chunks, least
// significant first, bit 6 set on all but the last. CPython writes
// (unsigned) ints, so at most 6 chunks; a longer one is malformed.
func varint(t []byte, p int) (v uint64, next int, ok bool) {
	for shift := 0; shift < 36; shift += 6 {
		if p >= len(t) || t[p]&0x80 != 0 {
			return 0, p, false
		}
		b := t[p]
		p++
		v |= uint64(b&63) << shift
		if b&64 == 0 {
			return v, p, true
		}
	}
	return 0, p, false
}

// svarint reads a signed varint: the magnitude shifted left by one, with
// the sign in bit 0.
func svarint(t []byte, p int) (v int64, next int, ok bool) {
	u, p, ok := varint(t, p)
	if u&1 != 0 {
		return -int64(u >> 1), p, ok
	}
	return int64(u >> 1), p, ok
}
