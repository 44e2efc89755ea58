package symbol

import (
	"bytes"
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"slices"
)

// lineTable is a unit's line table decoded once into rows sorted by
// address: the row for a pc is the last one at or below it. files holds
// the unit's file names by DWARF file index, which is what both the rows
// and DW_AT_call_file refer to.
type lineTable struct {
	rows  []lineRow
	files []string
}

// lineRow starts a run of instructions at addr from file:line. A row with
// file endSeq ends a sequence: the addresses from it on are in no row
// until the next sequence starts.
type lineRow struct {
	addr       uint64
	file, line uint32
}

// endSeq marks the end of a sequence, noFile a row whose file index names
// no file.
const (
	endSeq = ^uint32(0)
	noFile = endSeq - 1
)

// readLineTable decodes the line table of unit cu; line is the
// .debug_line section. It keeps the sequences it read before any decoding
// error: a truncated table still names what it covers.
func readLineTable(d *dwarf.Data, cu *dwarf.Entry, line []byte, order binary.ByteOrder) lineTable {
	if off, ok := cu.Val(dwarf.AttrStmtList).(int64); ok && !lineHeaderSane(line, off, order) {
		return lineTable{}
	}
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return lineTable{}
	}
	var (
		t        lineTable
		index    = make(map[*dwarf.LineFile]uint32)
		seqStart = 0
		seqs     [][2]int // [start, end) of each sequence in rows
		e        dwarf.LineEntry
	)
	fileIndex := func(f *dwarf.LineFile) uint32 {
		if f == nil {
			return noFile
		}
		if i, ok := index[f]; ok {
			return i
		}
		// The header's files are indexed up front; only a file defined
		// inside the program (DW_LNE_define_file, long obsolete) gets here.
		for i, g := range lr.Files() {
			if g != nil {
				index[g] = uint32(i)
			}
		}
		if i, ok := index[f]; ok {
			return i
		}
		return noFile
	}
	for {
		if err := lr.Next(&e); err != nil {
			// A sequence cut short by an error, or not ended, is dropped.
			t.rows = t.rows[:seqStart]
			break
		}
		if e.EndSequence {
			if seqStart < len(t.rows) && t.rows[seqStart].addr == 0 {
				// A sequence at address 0 describes a function the
				// linker discarded; it would shadow nothing real but
				// overlaps every other such sequence.
				t.rows = t.rows[:seqStart]
			} else {
				t.rows = append(t.rows, lineRow{addr: e.Address, file: endSeq})
				seqs = append(seqs, [2]int{seqStart, len(t.rows)})
			}
			seqStart = len(t.rows)
			continue
		}
		line := uint32(0)
		if e.Line > 0 && e.Line <= 1<<30 {
			line = uint32(e.Line)
		}
		t.rows = append(t.rows, lineRow{addr: e.Address, file: fileIndex(e.File), line: line})
	}
	fs := lr.Files()
	t.files = make([]string, len(fs))
	for i, f := range fs {
		if f != nil {
			t.files[i] = f.Name
		}
	}
	t.rows = sortSequences(t.rows, seqs)
	return t
}

// sortSequences orders a line table's rows by address. Each sequence is
// sorted already and they rarely overlap, so the sequences are put in
// order by start as blocks; only if that leaves the rows unsorted are
// they sorted one by one, stably: at one address the end of a sequence
// goes before the start of the next, and rows of one sequence keep their
// order, the last being the one in effect.
func sortSequences(rows []lineRow, seqs [][2]int) []lineRow {
	slices.SortStableFunc(seqs, func(a, b [2]int) int {
		return cmp.Compare(rows[a[0]].addr, rows[b[0]].addr)
	})
	out := make([]lineRow, 0, len(rows))
	for _, q := range seqs {
		out = append(out, rows[q[0]:q[1]]...)
	}
	cmpRows := func(a, b lineRow) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		switch {
		case a.file == endSeq && b.file != endSeq:
			return -1
		case a.file != endSeq && b.file == endSeq:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(out, cmpRows) {
		slices.SortStableFunc(out, cmpRows)
	}
	return out
}

// lineAt returns the file and line of the row covering addr.
func (t *lineTable) lineAt(addr uint64) (string, int) {
	i, _ := slices.BinarySearchFunc(t.rows, addr, func(r lineRow, a uint64) int {
		if r.addr <= a {
			return -1
		}
		return 1
	})
	if i == 0 {
		return "", 0
	}
	r := t.rows[i-1]
	if r.file == endSeq {
		return "", 0
	}
	if r.file == noFile {
		return "", int(r.line)
	}
	return t.file(int32(r.file)), int(r.line)
}

// file returns the name of file index i, "" when out of range.
func (t *lineTable) file(i int32) string {
	if i < 0 || int(i) >= len(t.files) {
		return ""
	}
	return t.files[i]
}

// lineHeaderSane reports whether the DWARF 5 line table header at off in
// line lists no more directories and files than its bytes can hold. It
// guards debug/dwarf, which allocates a slice as long as each count it
// reads before reading a single entry: a corrupt count of 2^40 would ask
// for terabytes. Earlier versions list entries until an empty one, which
// is bounded by the data, and pass unchecked.
func lineHeaderSane(line []byte, off int64, order binary.ByteOrder) bool {
	if off < 0 || off >= int64(len(line)) {
		return true // debug/dwarf rejects it itself
	}
	b := line[off:]
	if len(b) < 4 {
		return false
	}
	p, ofsz := 4, 4
	length := uint64(order.Uint32(b))
	if length == 0xffffffff {
		if len(b) < 12 {
			return false
		}
		p, ofsz, length = 12, 8, order.Uint64(b[4:])
	}
	if length < uint64(len(b)-p) {
		b = b[:p+int(length)]
	}
	if len(b)-p < 2 {
		return false
	}
	if order.Uint16(b[p:]) < 5 {
		return true
	}
	p += 2 + 2 // version, address size, segment selector size
	if len(b)-p < ofsz {
		return false
	}
	hlen := uint64(order.Uint32(b[p:]))
	if ofsz == 8 {
		hlen = order.Uint64(b[p:])
	}
	p += ofsz
	if hlen < uint64(len(b)-p) {
		b = b[:p+int(hlen)]
	}
	// Minimum instruction length, maximum operations per instruction,
	// default is_stmt, line base, line range, opcode base, then the
	// standard opcode lengths.
	if len(b)-p < 6 {
		return false
	}
	p += 6 + max(int(b[p+5])-1, 0)
	for range 2 { // directories, then files
		if len(b)-p < 1 {
			return false
		}
		nf := int(b[p])
		p++
		forms := make([]uint64, nf)
		for i := range forms {
			if _, k := uleb128(b[p:]); k > 0 {
				p += k
			} else {
				return false
			}
			form, k := uleb128(b[p:])
			if k == 0 {
				return false
			}
			forms[i], p = form, p+k
		}
		count, k := uleb128(b[p:])
		if k == 0 {
			return false
		}
		p += k
		for i := uint64(0); i < count; i++ {
			n, ok := lnctEntrySize(b[p:], forms, ofsz)
			if !ok {
				return false
			}
			if n == 0 {
				// Entries of forms debug/dwarf skips take no bytes;
				// allow few of them.
				if count > 1<<16 {
					return false
				}
				break
			}
			p += n
		}
	}
	return true
}

// lnctEntrySize returns the size of one directory or file entry of the
// given forms at the start of b, reading forms the way debug/dwarf does
// (it consumes nothing for forms it does not know).
func lnctEntrySize(b []byte, forms []uint64, ofsz int) (int, bool) {
	p := 0
	for _, f := range forms {
		n := 0
		switch f {
		case 0x08: // DW_FORM_string
			i := bytes.IndexByte(b[p:], 0)
			if i < 0 {
				return 0, false
			}
			n = i + 1
		case 0x0e, 0x1f, 0x1d: // strp, line_strp, strp_sup
			n = ofsz
		case 0x1a, 0x0f: // strx, udata
			if _, n = uleb128(b[p:]); n == 0 {
				return 0, false
			}
		case 0x25, 0x0b: // strx1, data1
			n = 1
		case 0x26, 0x05: // strx2, data2
			n = 2
		case 0x27: // strx3
			n = 3
		case 0x28, 0x06: // strx4, data4
			n = 4
		case 0x07: // data8
			n = 8
		case 0x1e: // data16
			n = 16
		case 0x09: // block
			v, k := uleb128(b[p:])
			if k == 0 || v > uint64(len(b)-p-k) {
				return 0, false
			}
			n = k + int(v)
		}
		if n > len(b)-p {
			return 0, false
		}
		p += n
	}
	return p, true
}

// uleb128 decodes an unsigned LEB128 number at the start of b, returning
// it and its length, 0 when b ends inside it or it exceeds 64 bits.
func uleb128(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}
