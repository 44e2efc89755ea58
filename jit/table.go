package jit

import (
	"cmp"
	"math"
	"slices"
	"unsafe"

	"github.com/cctop/cctop/symbol/cfi"
)

const (
	// maxPlaces bounds the table's code placements (a load, or a move's
	// new place). A runtime that runs for days compiles and moves code
	// without end; past the bound the older half is dropped, as
	// symbol's perf map starts over from its newest entries: code placed
	// long ago has mostly been freed, moved or compiled again since.
	maxPlaces = 1 << 20
	// maxBytes bounds what the table holds (names, lines, CFI, index),
	// by the same rule.
	maxBytes = 256 << 20
	// never is the end of a placement that no move or close ended.
	never = math.MaxUint64
)

// Table is the code of one jitdump by address and time: a code load at
// time T makes [addr, addr+size) that code from T on; a later load over
// the same addresses supersedes it from its own time; a move places the
// code of an index at its new address from its time and ends it at the
// old one; a close ends all the code loaded before it.
//
// Times are the records' (CLOCK_MONOTONIC ns, the clock writers use and
// the specification recommends), or their order in the file when the
// file says they are an architecture's counter (Timeless).
//
// A Table is not safe for concurrent use: even Lookup may fold the
// latest records into the index.
type Table struct {
	places  []place
	segs    []seg   // the index: disjoint address ranges, sorted
	pending []int32 // places not yet in segs
	// byIndex is the latest place of each code index, for moves.
	byIndex  map[uint64]int32
	timeless bool
	strs     map[string]string // interned function and file names
	bytes    int64
	dropped  uint64 // places dropped to stay within the bounds
}

// place is code at [start, end) from time from until time until.
type place struct {
	start, end  uint64
	from, until uint64
	code        *code
}

// seg is a range of addresses all covered by the same places, hist, in
// the order of their times (then of the file): which of them is there at
// a time is a binary search.
type seg struct {
	start, end uint64
	hist       []int32
}

// code is one code load: what a placement of it names.
type code struct {
	name  string
	addr  uint64 // code_addr of the load: where lines and CFI say it is
	size  uint64
	index uint64
	lines []line     // by offset from addr
	inl   []inlineAt // by offset from addr (inlineAt.addr)
	cfi   *cfi.Table
	mark  uint64 // the compaction that last counted it
}

// line says that code from off on is at file:line.
type line struct {
	off  uint32
	line uint32
	file string
}

// InlineFrame is one frame of an inline chain that a runtime recorded
// for its compiled code (cctop's JIT_CODE_INLINE): a method, the source
// file and line of the code in it (0: unknown).
type InlineFrame struct {
	Func string
	File string
	Line int
}

// inlineAt says that the code from addr on runs frames, innermost first:
// addr is absolute as a record gives it, an offset from the code's start
// once the code holds it.
type inlineAt struct {
	addr   uint64
	frames []InlineFrame
}

func newTable() *Table {
	return &Table{byIndex: map[uint64]int32{}, strs: map[string]string{}}
}

// Code is the code at a pc at a time: what Lookup answers.
type Code struct {
	Name  string
	Start uint64 // where the code was at that time (after any move)
	Size  uint64
	Index uint64 // the runtime's code_index
	Time  uint64 // when it was loaded or moved there (file order, Timeless)
	c     *code
}

// Line is the source file and line of pc in c, from the debug info the
// runtime wrote for it: the nearest entry at or below pc.
func (c Code) Line(pc uint64) (file string, lineno int, ok bool) {
	if c.c == nil || pc < c.Start || pc-c.Start >= c.Size || len(c.c.lines) == 0 {
		return "", 0, false
	}
	off := uint32(pc - c.Start)
	ls := c.c.lines
	i, found := slices.BinarySearchFunc(ls, off, func(l line, off uint32) int { return cmp.Compare(l.off, off) })
	if !found {
		if i == 0 {
			return "", 0, false
		}
		i--
	}
	return ls[i].file, int(ls[i].line), true
}

// Inline is the inline chain the runtime recorded for pc in c: the
// methods whose code is there, innermost first, the compiled method itself
// last, at the nearest recorded pc at or below pc; nil when the runtime
// recorded none there. The slice is shared: not to be changed.
func (c Code) Inline(pc uint64) []InlineFrame {
	if c.c == nil || pc < c.Start || pc-c.Start >= c.Size || len(c.c.inl) == 0 {
		return nil
	}
	off := pc - c.Start
	es := c.c.inl
	i, found := slices.BinarySearchFunc(es, off, func(e inlineAt, off uint64) int { return cmp.Compare(e.addr, off) })
	if !found {
		if i == 0 {
			return nil
		}
		i--
	}
	return es[i].frames
}

// Rule is the CFI rule at pc in c, from the unwinding information the
// runtime wrote for it (false without one, or where it does not cover
// pc). Moved code keeps the rules of its load, at its new address.
func (c Code) Rule(pc uint64) (cfi.Rule, bool) {
	if c.c == nil || c.c.cfi == nil || pc < c.Start || pc-c.Start >= c.Size {
		return cfi.Rule{}, false
	}
	return c.c.cfi.Rule(pc - c.Start + c.c.addr)
}

// HasCFI reports whether the runtime wrote unwinding information for c.
func (c Code) HasCFI() bool { return c.c != nil && c.c.cfi != nil }

// Lookup is the code at pc at time t: the latest code placed over pc at or
// before t, unless it was moved away or closed by t. A t of 0 (unknown)
// gets the latest code placed over pc, whenever that was; so does any t in
// a Timeless table.
func (t *Table) Lookup(pc, at uint64) (Code, bool) {
	if len(t.pending) > 0 {
		t.merge()
	}
	s := t.segs
	// Largest i with s[i].start <= pc.
	lo, hi := 0, len(s)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if s[h].start <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo == 0 || pc >= s[lo-1].end {
		return Code{}, false
	}
	hist := s[lo-1].hist
	var id int32
	if at == 0 || t.timeless {
		id = hist[len(hist)-1]
	} else {
		// The last place from at or before at.
		k, _ := slices.BinarySearchFunc(hist, at, func(id int32, at uint64) int {
			if t.places[id].from <= at {
				return -1
			}
			return 1
		})
		if k == 0 {
			return Code{}, false
		}
		id = hist[k-1]
		if t.places[id].until <= at {
			return Code{}, false
		}
	}
	p := &t.places[id]
	return Code{Name: p.code.name, Start: p.start, Size: p.end - p.start, Index: p.code.index, Time: p.from, c: p.code}, true
}

// Timeless reports whether the file's times are an architecture's counter
// (Header.ArchTimestamp), which cannot be compared with a sample's: the
// table then orders code by file order and Lookup answers the newest.
func (t *Table) Timeless() bool { return t.timeless }

// Len is how many placements of code the table holds.
func (t *Table) Len() int { return len(t.places) }

// Bytes estimates the memory the table holds.
func (t *Table) Bytes() int64 { return t.bytes }

// Dropped is how many placements were dropped to keep the table within
// its bounds.
func (t *Table) Dropped() uint64 { return t.dropped }

func (t *Table) intern(s string) string {
	if v, ok := t.strs[s]; ok {
		return v
	}
	t.strs[s] = s
	t.bytes += int64(len(s)) + 48
	return s
}

const (
	placeBytes = int64(unsafe.Sizeof(place{})) + int64(unsafe.Sizeof(seg{})) + 8
	codeBytes  = int64(unsafe.Sizeof(code{}))
	lineBytes  = int64(unsafe.Sizeof(line{}))
	inlBytes   = int64(unsafe.Sizeof(inlineAt{}))
	frameBytes = int64(unsafe.Sizeof(InlineFrame{}))
)

func (c *code) bytes() int64 {
	n := codeBytes + int64(cap(c.lines))*lineBytes + int64(cap(c.inl))*inlBytes
	for i, e := range c.inl {
		// Entries share their chain with the one before when equal.
		if i == 0 || !sameChain(e.frames, c.inl[i-1].frames) {
			n += int64(cap(e.frames)) * frameBytes
		}
	}
	if c.cfi != nil {
		n += c.cfi.Bytes()
	}
	return n
}

// setCFI indexes the .eh_frame a runtime wrote for c. Its pcrel pointers
// are relative to where it would be mapped: right after the code, at the
// next 8-byte boundary. That is where perf inject puts it in the ELF file
// it generates for the code (genelf.c: .eh_frame at ALIGN_8(text + size),
// .text 16-aligned), and what writers compute their FDEs' initial
// locations against (CPython's perf_jit_trampoline.c: the code is
// ROUND_UP(code_size, 8) before the .eh_frame; V8 likewise).
func (c *code) setCFI(eh []byte) {
	tab := cfi.FromEHFrame(eh, c.addr+(c.size+7)&^7)
	if tab.Len() > 0 {
		c.cfi = tab
	}
}

// codeLines turns debug entries (absolute addresses) into c's lines,
// keeping those inside the code, sorted by address (stably: of entries at
// the same address the last written wins the search, as a later line
// would).
func codeLines(ds []debugLine, addr, size uint64) []line {
	var ls []line
	for _, d := range ds {
		if d.addr < addr || d.addr-addr >= size || d.addr-addr > math.MaxUint32 {
			continue
		}
		ls = append(ls, line{uint32(d.addr - addr), d.line, d.file})
	}
	return lastOfEach(ls, func(l line) uint32 { return l.off })
}

// lastOfEach sorts s stably by key and keeps, of entries with equal keys,
// the last written, so that a binary search finds it.
func lastOfEach[T any, K cmp.Ordered](s []T, key func(T) K) []T {
	slices.SortStableFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	out := s[:0]
	for i, e := range s {
		if i+1 < len(s) && key(s[i+1]) == key(e) {
			continue
		}
		out = append(out, e)
	}
	return slices.Clip(out)
}

// sameChain reports whether a and b are the same slice.
func sameChain(a, b []InlineFrame) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// codeInlines turns inline entries (absolute addresses) into c's, by
// offset from addr, keeping those inside the code, sorted by address (the
// last written of equal addresses wins, as for lines).
func codeInlines(es []inlineAt, addr, size uint64) []inlineAt {
	var out []inlineAt
	for _, e := range es {
		if e.addr < addr || e.addr-addr >= size {
			continue
		}
		out = append(out, inlineAt{e.addr - addr, e.frames})
	}
	return lastOfEach(out, func(e inlineAt) uint64 { return e.addr })
}

// load places c at its address from time at.
func (t *Table) load(c *code, at uint64) {
	id := t.add(place{start: c.addr, end: c.addr + c.size, from: at, until: never, code: c})
	t.byIndex[c.index] = id
	t.bytes += c.bytes()
}

// move places the code of index at addr from time at, ending its latest
// place then. A move of an index never loaded is ignored: there is no
// name to give the new place.
func (t *Table) move(index, old, addr, at uint64) {
	id, ok := t.byIndex[index]
	if !ok {
		return
	}
	p := &t.places[id]
	c := p.code
	if addr+c.size < addr {
		return
	}
	// old is where the writer thought the code was; the index says which
	// code moved even if the two disagree.
	_ = old
	p.until = min(p.until, at)
	t.byIndex[index] = t.add(place{start: addr, end: addr + c.size, from: at, until: never, code: c})
}

// close ends, at time at, all code placed before it: the runtime is gone.
func (t *Table) close(at uint64) {
	for i := range t.places {
		if p := &t.places[i]; p.from <= at && p.until > at {
			p.until = at
		}
	}
}

func (t *Table) add(p place) int32 {
	if len(t.places) >= maxPlaces || t.bytes > maxBytes {
		t.compact()
	}
	id := int32(len(t.places))
	t.places = append(t.places, p)
	t.pending = append(t.pending, id)
	t.bytes += placeBytes
	return id
}

// merge folds the pending places into the index, in one pass over it: the
// ranges they cover are split at their bounds, and each piece's history
// gets the places that cover it.
func (t *Table) merge() {
	news := newSegs(t.places, t.pending)
	t.pending = t.pending[:0]
	if len(news) == 0 {
		return
	}
	if len(t.segs) == 0 || t.segs[len(t.segs)-1].end <= news[0].start {
		// Code placed past everything so far: nothing to split.
		t.segs = append(t.segs, news...)
		return
	}
	out := make([]seg, 0, len(t.segs)+2*len(news))
	old := t.segs
	i, j := 0, 0
	var a, b seg // the current pieces of old[i] and news[j]
	if len(old) > 0 {
		a = old[0]
	}
	b = news[0]
	for i < len(old) && j < len(news) {
		switch {
		case a.end <= b.start:
			out = append(out, a)
			if i++; i < len(old) {
				a = old[i]
			}
		case b.end <= a.start:
			out = append(out, b)
			if j++; j < len(news) {
				b = news[j]
			}
		case a.start < b.start:
			out = append(out, seg{a.start, b.start, a.hist})
			a.start = b.start
		case b.start < a.start:
			out = append(out, seg{b.start, a.start, b.hist})
			b.start = a.start
		default: // same start
			end := min(a.end, b.end)
			out = append(out, seg{a.start, end, t.sorted(slices.Concat(a.hist, b.hist))})
			a.start, b.start = end, end
			if a.start == a.end {
				if i++; i < len(old) {
					a = old[i]
				}
			}
			if b.start == b.end {
				if j++; j < len(news) {
					b = news[j]
				}
			}
		}
	}
	if i < len(old) {
		out = append(out, a)
		out = append(out, old[i+1:]...)
	}
	if j < len(news) {
		out = append(out, b)
		out = append(out, news[j+1:]...)
	}
	t.segs = out
}

// sorted sorts a history by time, then file order (the ids'), in place.
func (t *Table) sorted(h []int32) []int32 {
	slices.SortFunc(h, func(x, y int32) int {
		if c := cmp.Compare(t.places[x].from, t.places[y].from); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return h
}

// newSegs partitions the ranges of places ids into disjoint segments,
// each with the places covering it, by time and file order.
func newSegs(places []place, ids []int32) []seg {
	byStart := slices.Clone(ids)
	slices.SortFunc(byStart, func(x, y int32) int {
		if c := cmp.Compare(places[x].start, places[y].start); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	bounds := make([]uint64, 0, 2*len(ids))
	for _, id := range ids {
		bounds = append(bounds, places[id].start, places[id].end)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var out []seg
	var live []int32
	next := 0
	for k := 0; k+1 < len(bounds); k++ {
		x := bounds[k]
		live = slices.DeleteFunc(live, func(id int32) bool { return places[id].end <= x })
		for next < len(byStart) && places[byStart[next]].start <= x {
			live = append(live, byStart[next])
			next++
		}
		if len(live) == 0 {
			continue
		}
		h := slices.Clone(live)
		slices.SortFunc(h, func(x, y int32) int {
			if c := cmp.Compare(places[x].from, places[y].from); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		if n := len(out); n > 0 && out[n-1].end == x && slices.Equal(out[n-1].hist, h) {
			out[n-1].end = bounds[k+1]
			continue
		}
		out = append(out, seg{x, bounds[k+1], h})
	}
	return out
}

// compact drops the older half of the places (by file order), to stay
// within maxPlaces and maxBytes.
func (t *Table) compact() {
	t.merge()
	cut := int32(len(t.places) / 2)
	if cut == 0 {
		return
	}
	t.dropped += uint64(cut)
	t.places = slices.Delete(t.places, 0, int(cut))
	segs := t.segs[:0]
	for _, s := range t.segs {
		var h []int32
		for _, id := range s.hist {
			if id >= cut {
				h = append(h, id-cut)
			}
		}
		if len(h) > 0 {
			segs = append(segs, seg{s.start, s.end, h})
		}
	}
	t.segs = slices.Clip(segs)
	for k, id := range t.byIndex {
		if id < cut {
			delete(t.byIndex, k)
		} else {
			t.byIndex[k] = id - cut
		}
	}
	// Count again what stays, names included.
	mark := uint64(t.dropped)
	t.strs = map[string]string{}
	t.bytes = 0
	for i := range t.places {
		t.bytes += placeBytes
		c := t.places[i].code
		if c.mark == mark {
			continue
		}
		c.mark = mark
		t.bytes += c.bytes()
		c.name = t.intern(c.name)
		for k := range c.lines {
			c.lines[k].file = t.intern(c.lines[k].file)
		}
		for k, e := range c.inl {
			if k > 0 && sameChain(e.frames, c.inl[k-1].frames) {
				continue
			}
			for j := range e.frames {
				e.frames[j].Func = t.intern(e.frames[j].Func)
				e.frames[j].File = t.intern(e.frames[j].File)
			}
		}
	}
}
