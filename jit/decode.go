package jit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// Decoder decodes a jitdump file fed in chunks, in file order, into a
// Table. A runtime appends to its file while it runs, and a read may end
// inside a record: the bytes of that record are held until the rest
// comes. No size is taken on trust: a record claiming more than
// MaxRecord bytes, fields that do not fit their record, or a count of
// entries its record cannot hold stop decoding there with a
// *FormatError; what was decoded before stays in the table.
//
// A Decoder is not safe for concurrent use.
type Decoder struct {
	tab   *Table
	order binary.ByteOrder // nil until the file header is in
	hdr   Header
	off   int64  // file offset of the header or record being decoded
	buf   []byte // its bytes so far, when a chunk ended inside it
	err   *FormatError
	// seq numbers the records, for the table's file order.
	seq uint64
	// debug and eh are the debug and unwinding information that the
	// next code load takes: the writer puts them just before it.
	debug   *pendingDebug
	inline  *pendingInline
	eh      []byte
	records [5]uint64 // records of each known type decoded
	inlines uint64    // JIT_CODE_INLINE records decoded
	unknown uint64    // records of other types, skipped
}

type pendingInline struct {
	addr    uint64
	entries []inlineAt // by absolute address
}

type pendingDebug struct {
	addr  uint64
	lines []debugLine // by absolute address
}

type debugLine struct {
	addr uint64
	line uint32
	file string
}

// NewDecoder returns a decoder filling a new, empty Table.
func NewDecoder() *Decoder { return &Decoder{tab: newTable()} }

// Table is the code decoded so far.
func (d *Decoder) Table() *Table { return d.tab }

// Header is the file header, once decoded (the zero Header before).
func (d *Decoder) Header() Header { return d.hdr }

// Err is the *FormatError that stopped decoding, or nil.
func (d *Decoder) Err() error {
	if d.err == nil {
		return nil
	}
	return d.err
}

// Offset is the file offset up to which the file is decoded: the start of
// the header or record that is incomplete or, after an error, damaged.
func (d *Decoder) Offset() int64 { return d.off }

// Fed is how many bytes have been fed: the file offset of the next byte
// Feed expects.
func (d *Decoder) Fed() int64 { return d.off + int64(len(d.buf)) }

// Waiting is how many bytes of an incomplete header or record are held.
func (d *Decoder) Waiting() int { return len(d.buf) }

// Records is how many records of each type were decoded: code loads,
// moves, debug infos, closes and unwinding infos, in the order of their
// ids; and how many of unknown types were skipped.
func (d *Decoder) Records() (byType [5]uint64, unknown uint64) { return d.records, d.unknown }

// Inlines is how many of cctop's JIT_CODE_INLINE records were decoded.
func (d *Decoder) Inlines() uint64 { return d.inlines }

// Incomplete describes the header or record the file ends inside, for
// when the file is known to be final (its process is gone): nil when it
// ends between records, or decoding stopped at an error.
func (d *Decoder) Incomplete() error {
	if d.err != nil || len(d.buf) == 0 {
		return nil
	}
	what := "header"
	if d.order != nil {
		what = "record"
	}
	size := d.size(d.buf)
	if size <= 0 {
		return &FormatError{d.off, fmt.Sprintf("file ends %d bytes into a %s", len(d.buf), what)}
	}
	return &FormatError{d.off, fmt.Sprintf("file ends %d bytes into a %s of %d bytes", len(d.buf), what, size)}
}

// Feed decodes the next bytes of the file. It returns Err: once decoding
// has stopped at a damaged record, further bytes are ignored.
func (d *Decoder) Feed(p []byte) error {
	for d.err == nil && len(p) > 0 {
		if len(d.buf) > 0 {
			// Complete the held unit first.
			size := d.size(d.buf)
			if size == 0 {
				// Not even its size is in: take what tells it.
				n := min(d.prefix()-len(d.buf), len(p))
				d.buf = append(d.buf, p[:n]...)
				p = p[n:]
				size = d.size(d.buf)
			}
			if d.err != nil {
				d.buf = d.buf[:0]
				break
			}
			if size == 0 {
				continue
			}
			n := min(size-len(d.buf), len(p))
			d.buf = append(d.buf, p[:n]...)
			p = p[n:]
			if len(d.buf) < size {
				continue
			}
			d.unit(d.buf)
			d.buf = d.buf[:0]
			if d.err == nil {
				d.off += int64(size)
			}
			continue
		}
		size := d.size(p)
		if d.err != nil {
			d.buf = d.buf[:0]
			break
		}
		if size == 0 || len(p) < size {
			// Cut at the end of what was read: wait for the rest.
			// size is at most MaxRecord, so this holds at most that.
			d.buf = append(d.buf, p...)
			break
		}
		d.unit(p[:size])
		if d.err == nil {
			d.off += int64(size)
		}
		p = p[size:]
	}
	if len(d.buf) == 0 && cap(d.buf) > 1<<20 {
		d.buf = nil // a large record is decoded: do not keep its buffer
	}
	return d.Err()
}

// prefix is how many bytes of the next unit tell its size.
func (d *Decoder) prefix() int {
	if d.order == nil {
		return 12 // magic, version, total_size
	}
	return 8 // id, total_size
}

// size is the size of the unit (header or record) b starts, 0 when b is
// too short to tell, or -1 after setting d.err for a size out of bounds.
func (d *Decoder) size(b []byte) int {
	if len(b) < d.prefix() {
		return 0
	}
	if d.order == nil {
		var order binary.ByteOrder
		switch binary.LittleEndian.Uint32(b) {
		case magic:
			order = binary.LittleEndian
		case magicSwapped:
			order = binary.BigEndian
		default:
			d.fail(0, "not a jitdump: magic %#08x, want %#08x (\"JiTD\")", binary.LittleEndian.Uint32(b), magic)
			return -1
		}
		v, total := order.Uint32(b[4:]), order.Uint32(b[8:])
		if v != version {
			d.fail(0, "jitdump version %d, this reader knows version %d", v, version)
			return -1
		}
		if total < headerSize || total > maxHeader {
			d.fail(0, "header size %d, want %d to %d bytes", total, headerSize, maxHeader)
			return -1
		}
		return int(total)
	}
	total := d.order.Uint32(b[4:])
	if total < recordHeader {
		d.fail(d.off, "record of type %d claims %d bytes, less than its %d-byte header", d.order.Uint32(b), total, recordHeader)
		return -1
	}
	if total > MaxRecord {
		d.fail(d.off, "record of type %d claims %d bytes, more than the %d MiB bound", d.order.Uint32(b), total, MaxRecord>>20)
		return -1
	}
	return int(total)
}

func (d *Decoder) fail(off int64, format string, args ...any) {
	if d.err == nil {
		d.err = &FormatError{off, fmt.Sprintf(format, args...)}
	}
}

// unit decodes one complete header or record.
func (d *Decoder) unit(b []byte) {
	if d.order == nil {
		d.header(b)
		return
	}
	d.record(b)
}

func (d *Decoder) header(b []byte) {
	order := binary.ByteOrder(binary.LittleEndian)
	swapped := binary.LittleEndian.Uint32(b) == magicSwapped
	if swapped {
		order = binary.BigEndian
	}
	r := reader{b: b, order: order}
	r.u32() // magic
	d.hdr.Version = r.u32()
	r.u32() // total_size
	d.hdr.ElfMach = r.u32()
	r.u32() // pad1
	d.hdr.PID = r.u32()
	d.hdr.Timestamp = r.u64()
	d.hdr.Flags = r.u64()
	d.hdr.Swapped = swapped
	d.order = order
	d.tab.timeless = d.hdr.ArchTimestamp()
}

// record decodes one record; b is exactly its total_size bytes.
func (d *Decoder) record(b []byte) {
	r := reader{b: b, order: d.order}
	id := r.u32()
	r.u32() // total_size: len(b)
	ts := r.u64()
	d.seq++
	key := ts
	if d.tab.timeless {
		// An architecture's counter: order by the file instead.
		key = d.seq
	}
	switch id {
	case recLoad:
		d.load(&r, key)
	case recMove:
		d.move(&r, key)
	case recDebugInfo:
		d.debugInfo(&r)
	case recClose:
		d.tab.close(key)
	case recUnwinding:
		d.unwinding(&r)
	case recInline:
		if d.inlineInfo(&r); d.err == nil {
			d.inlines++
		}
		return
	default:
		// A record type of a later version: perf skips them too.
		d.unknown++
		return
	}
	if d.err == nil {
		d.records[id]++
	}
}

func (d *Decoder) load(r *reader, key uint64) {
	if !d.holds(r, "JIT_CODE_LOAD", loadFixed) {
		return
	}
	r.u32() // pid
	r.u32() // tid
	r.u64() // vma: where perf's generated ELF says the code is; code_addr is where it runs
	addr := r.u64()
	size := r.u64()
	index := r.u64()
	name, ok := r.cstring()
	if !ok {
		d.fail(d.off, "JIT_CODE_LOAD name is not terminated within its record of %d bytes", len(r.b))
		return
	}
	// The code follows the name; writers may pad the record after it.
	if size > uint64(r.left()) {
		d.fail(d.off, "JIT_CODE_LOAD code_size %d exceeds the %d bytes left in its record", size, r.left())
		return
	}
	if addr+size < addr {
		d.fail(d.off, "JIT_CODE_LOAD code at %#x of %d bytes wraps around the address space", addr, size)
		return
	}
	debug, eh, inl := d.debug, d.eh, d.inline
	d.debug, d.eh, d.inline = nil, nil, nil
	if size == 0 {
		return // the format allows empty functions: nothing to name
	}
	c := &code{name: d.tab.intern(CleanName(name)), addr: addr, size: size, index: index}
	if debug != nil && debug.addr == addr {
		c.lines = codeLines(debug.lines, addr, size)
	}
	if inl != nil && inl.addr == addr {
		c.inl = codeInlines(inl.entries, addr, size)
	}
	if eh != nil {
		c.setCFI(eh)
	}
	d.tab.load(c, key)
}

func (d *Decoder) move(r *reader, key uint64) {
	if !d.holds(r, "JIT_CODE_MOVE", moveFixed) {
		return
	}
	r.u32() // pid
	r.u32() // tid
	r.u64() // vma
	old := r.u64()
	addr := r.u64()
	size := r.u64()
	index := r.u64()
	if addr+size < addr {
		d.fail(d.off, "JIT_CODE_MOVE to %#x of %d bytes wraps around the address space", addr, size)
		return
	}
	d.tab.move(index, old, addr, key)
}

// holds reports whether a record of kind holds its fixed bytes of
// fields, header included, and fails the decoder if not.
func (d *Decoder) holds(r *reader, kind string, fixed int) bool {
	if r.left()+recordHeader < fixed {
		d.fail(d.off, "%s record of %d bytes, less than its %d bytes of fields", kind, len(r.b), fixed)
		return false
	}
	return true
}

// entries reads the code address and entry count that begin a record of
// entries (debug info, inline chains), checking that the record holds its
// fixed fields and could hold that many entries of at least entryMin
// bytes: a count is never taken on trust.
func (d *Decoder) entries(r *reader, kind string, fixed, entryMin int) (addr, n uint64, ok bool) {
	if !d.holds(r, kind, fixed) {
		return 0, 0, false
	}
	addr = r.u64()
	n = r.u64()
	if n > uint64(r.left()/entryMin) {
		d.fail(d.off, "%s claims %d entries, its record holds at most %d", kind, n, r.left()/entryMin)
		return 0, 0, false
	}
	return addr, n, true
}

func (d *Decoder) debugInfo(r *reader) {
	addr, n, ok := d.entries(r, "JIT_CODE_DEBUG_INFO", debugFixed, debugEntryMin)
	if !ok {
		return
	}
	lines := make([]debugLine, 0, min(n, 4096))
	for i := uint64(0); i < n; i++ {
		a := r.u64()
		line := r.u32()
		r.u32() // discrim
		file, ok := r.cstring()
		if r.bad || !ok {
			d.fail(d.off, "JIT_CODE_DEBUG_INFO entry %d of %d runs past its record of %d bytes", i, n, len(r.b))
			return
		}
		if len(lines) < maxLines {
			lines = append(lines, debugLine{a, line, d.tab.intern(CleanName(file))})
		}
	}
	d.debug = &pendingDebug{addr: addr, lines: lines}
}

// inlineInfo decodes a JIT_CODE_INLINE record (recInline), which the next
// code load takes.
func (d *Decoder) inlineInfo(r *reader) {
	addr, n, ok := d.entries(r, "JIT_CODE_INLINE", inlineFixed, inlineEntryMin)
	if !ok {
		return
	}
	entries := make([]inlineAt, 0, min(n, 4096))
	var prev []InlineFrame
	var chain []InlineFrame
	for i := uint64(0); i < n; i++ {
		pc := r.u64()
		depth := r.u32()
		if r.bad || depth > maxInlineDepth || int(depth) > r.left()/inlineFrameMin {
			d.fail(d.off, "JIT_CODE_INLINE entry %d of %d: %d frames do not fit its record of %d bytes", i, n, depth, len(r.b))
			return
		}
		chain = chain[:0]
		for k := uint32(0); k < depth; k++ {
			line := r.u32()
			name, ok1 := r.cstring()
			file, ok2 := r.cstring()
			if r.bad || !ok1 || !ok2 {
				d.fail(d.off, "JIT_CODE_INLINE entry %d of %d runs past its record of %d bytes", i, n, len(r.b))
				return
			}
			chain = append(chain, InlineFrame{Func: d.tab.intern(CleanName(name)), File: d.tab.intern(CleanName(file)), Line: int(line)})
		}
		if len(entries) >= maxLines || depth == 0 {
			continue
		}
		// Neighboring pcs mostly share their chain: share its frames.
		if !slices.Equal(chain, prev) {
			prev = slices.Clone(chain)
		}
		entries = append(entries, inlineAt{addr: pc, frames: prev})
	}
	d.inline = &pendingInline{addr: addr, entries: entries}
}

func (d *Decoder) unwinding(r *reader) {
	if !d.holds(r, "JIT_CODE_UNWINDING_INFO", unwindFixed) {
		return
	}
	size := r.u64()
	hdr := r.u64()
	r.u64() // mapped_size
	if size > uint64(r.left()) {
		d.fail(d.off, "JIT_CODE_UNWINDING_INFO unwinding_size %d exceeds the %d bytes left in its record", size, r.left())
		return
	}
	if hdr > size {
		d.fail(d.off, "JIT_CODE_UNWINDING_INFO eh_frame_hdr_size %d exceeds its unwinding_size %d", hdr, size)
		return
	}
	// The data is .eh_frame followed by .eh_frame_hdr, as perf's
	// genelf.c and the writers (V8, CPython) lay it out; the header's
	// search table is not needed to index one function's FDEs.
	eh := r.take(int(size - hdr))
	if len(eh) == 0 || len(eh) > maxEHFrame {
		d.eh = nil
		return
	}
	d.eh = bytes.Clone(eh)
}
