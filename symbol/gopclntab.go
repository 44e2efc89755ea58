package symbol

import (
	"bytes"
	"encoding/binary"
)

// pclntab decodes the Go 1.18+ pclntab of another binary, read from its
// file: function names, file:line, inline trees and SP deltas.
// debug/gosym covers only the first two, decodes every function up front,
// and indexes the data unchecked; this decodes one function per lookup and
// checks every offset it reads, because the file is untrusted and a
// corrupt one must not crash the profiler.
//
// The layout is the runtime's own (runtime/symtab.go, runtime2.go _func,
// symtabinl.go inlinedCall): a header, then the tables the header points
// at, and in the last one, pclntable, a functab of (entry offset, _func
// offset) pairs sorted by entry, then the _func records.
type pclntab struct {
	bo      binary.ByteOrder
	magic   uint32
	quantum uint64 // pc-value tables count pcs in units of this
	text    uint64 // runtime.text: functab entries are offsets from it
	nfunc   int

	funcnametab []byte
	cutab       []byte // per compilation unit, file numbers to filetab offsets
	filetab     []byte
	pctab       []byte // the pc-value tables
	pclntable   []byte // functab, then the _func records it points at

	// gofunc is go:func.*, the base of funcdata offsets, read from the
	// file up to the end of its section; nil when it could not be found,
	// which costs inline frames only.
	gofunc []byte

	// strings interns names and file names by their offset in the table
	// (names below 1<<32, files above): every frame of a function shares
	// them, and the module's address cache holds frames by the million.
	// Like that cache, it is used only by the resolver's goroutine.
	strings map[uint64]string
	acct    *acct // the module's, which each interned string adds to
}

const (
	pclntabMagic118 = 0xfffffff0 // Go 1.18, 1.19
	pclntabMagic120 = 0xfffffff1 // Go 1.20 to 1.26 at least

	// _func is followed by npcdata uint32 pcdata offsets and nfuncdata
	// uint32 funcdata offsets; Go 1.20 added startLine before funcID.
	funcSize118 = 40
	funcSize120 = 44

	// funcFlagTopFrame marks functions at the top of a goroutine's or
	// thread's stack (goexit, mstart, rt0_go): nothing called them, so
	// unwinding stops there (abi.FuncFlagTopFrame).
	funcFlagTopFrame = 1 << 0

	// maxGoName bounds the names and file names we read. Real ones are
	// far shorter, even with generics; the bound keeps a corrupt table
	// without a terminating NUL from costing a scan of the whole table.
	maxGoName = 1 << 16
)

// parsePclntab checks the header of data, a Go 1.18+ pclntab, and returns
// its tables, or nil if data is not one or points outside itself. text is
// runtime.text, which Go 1.26 no longer records in the header; gofunc is the
// data of the go:func.* symbol, or nil.
func parsePclntab(data []byte, text uint64, gofunc []byte) *pclntab {
	if len(data) < 8 {
		return nil
	}
	t := &pclntab{text: text, gofunc: gofunc}
	switch {
	case isPclntab118(binary.LittleEndian.Uint32(data)):
		t.bo = binary.LittleEndian
	case isPclntab118(binary.BigEndian.Uint32(data)):
		t.bo = binary.BigEndian
	default:
		return nil
	}
	t.magic = t.bo.Uint32(data)
	q, ptr := uint64(data[6]), uint64(data[7])
	if data[4] != 0 || data[5] != 0 || (q != 1 && q != 2 && q != 4) || (ptr != 4 && ptr != 8) {
		return nil
	}
	t.quantum = q
	// The header's words after the magic: nfunc, nfiles, textStart, then
	// the offsets of funcnametab, cutab, filetab, pctab and pclntable.
	const nwords = 8
	if uint64(len(data)) < 8+nwords*ptr {
		return nil
	}
	word := func(i uint64) uint64 {
		if ptr == 8 {
			return t.bo.Uint64(data[8+i*8:])
		}
		return uint64(t.bo.Uint32(data[8+i*4:]))
	}
	var tabs [5][]byte
	for i := range tabs {
		off := word(uint64(3 + i))
		if off > uint64(len(data)) {
			return nil
		}
		tabs[i] = data[off:]
	}
	t.funcnametab, t.cutab, t.filetab, t.pctab, t.pclntable = tabs[0], tabs[1], tabs[2], tabs[3], tabs[4]
	// nfunc entries and the end of the last function, 8 bytes each but
	// the last: a count beyond that is corrupt.
	nfunc := word(0)
	if len(t.pclntable) < 4 || nfunc > uint64(len(t.pclntable)-4)/8 {
		return nil
	}
	t.nfunc = int(nfunc)
	t.strings = make(map[uint64]string)
	return t
}

func isPclntab118(magic uint32) bool {
	return magic == pclntabMagic118 || magic == pclntabMagic120
}

// goFunc is one function's _func record, checked to hold its pcdata and
// funcdata arrays.
type goFunc struct {
	entry, end uint64 // [entry, end) is the function's code
	rec        []byte
	hdr        int // size of the fixed part of rec
	npcdata    uint32
	nfuncdata  uint32
}

// entryOff returns the entry offset of functab entry i; i may be nfunc,
// whose entry is the end of the last function.
func (t *pclntab) entryOff(i int) uint32 {
	return t.bo.Uint32(t.pclntable[8*i:])
}

// findFunc returns the function whose code holds pc.
func (t *pclntab) findFunc(pc uint64) (goFunc, bool) {
	if t.nfunc == 0 || pc < t.text || pc-t.text > 1<<32-1 {
		return goFunc{}, false
	}
	off := uint32(pc - t.text)
	if off < t.entryOff(0) || off >= t.entryOff(t.nfunc) {
		return goFunc{}, false
	}
	// The last entry whose offset is <= off. In a corrupt, unsorted
	// functab this still ends, and the check below rejects its answer.
	lo, hi := 0, t.nfunc
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.entryOff(m) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo - 1
	if i < 0 {
		return goFunc{}, false
	}
	start, end := t.entryOff(i), t.entryOff(i+1)
	if off < start || off >= end {
		return goFunc{}, false
	}
	funcOff := uint64(t.bo.Uint32(t.pclntable[8*i+4:]))
	hdr := funcSize120
	if t.magic == pclntabMagic118 {
		hdr = funcSize118
	}
	if funcOff+uint64(hdr) > uint64(len(t.pclntable)) {
		return goFunc{}, false
	}
	rec := t.pclntable[funcOff:]
	npcdata := t.bo.Uint32(rec[28:])
	nfuncdata := uint32(rec[hdr-1])
	if uint64(hdr)+4*(uint64(npcdata)+uint64(nfuncdata)) > uint64(len(rec)) {
		return goFunc{}, false
	}
	return goFunc{
		entry:     t.text + uint64(start),
		end:       t.text + uint64(end),
		rec:       rec,
		hdr:       hdr,
		npcdata:   npcdata,
		nfuncdata: nfuncdata,
	}, true
}

// The fixed fields of _func that we use, by byte offset: entryOff uint32,
// nameOff int32, args int32, deferreturn uint32, then these.
func (t *pclntab) nameOff(f goFunc) uint32  { return t.bo.Uint32(f.rec[4:]) }
func (t *pclntab) pcsp(f goFunc) uint32     { return t.bo.Uint32(f.rec[16:]) }
func (t *pclntab) pcfile(f goFunc) uint32   { return t.bo.Uint32(f.rec[20:]) }
func (t *pclntab) pcln(f goFunc) uint32     { return t.bo.Uint32(f.rec[24:]) }
func (t *pclntab) cuOffset(f goFunc) uint32 { return t.bo.Uint32(f.rec[32:]) }
func (t *pclntab) flag(f goFunc) uint8      { return f.rec[f.hdr-3] } // funcID, flag, pad, nfuncdata end the record

// pcdata returns the value at pc of f's PCDATA table i.
func (t *pclntab) pcdata(f goFunc, i uint32, pc uint64) (int32, bool) {
	if i >= f.npcdata {
		return -1, false
	}
	return t.value(f, t.bo.Uint32(f.rec[f.hdr+4*int(i):]), pc)
}

// funcdata returns f's FUNCDATA i, from its offset in gofunc to the end
// of gofunc, or nil.
func (t *pclntab) funcdata(f goFunc, i uint32) []byte {
	if i >= f.nfuncdata {
		return nil
	}
	off := t.bo.Uint32(f.rec[f.hdr+4*int(f.npcdata+i):])
	if off == ^uint32(0) || uint64(off) >= uint64(len(t.gofunc)) {
		return nil
	}
	return t.gofunc[off:]
}

func (t *pclntab) value(f goFunc, off uint32, pc uint64) (int32, bool) {
	return pcvalue(t.pctab, off, f.entry, pc, t.quantum)
}

// fileLine returns the file and line of pc in f, or "" and 0.
func (t *pclntab) fileLine(f goFunc, pc uint64) (string, int) {
	fileno, ok := t.value(f, t.pcfile(f), pc)
	if !ok || fileno < 0 {
		return "", 0
	}
	line, ok := t.value(f, t.pcln(f), pc)
	if !ok || line < 0 {
		return "", 0
	}
	// The file number indexes the function's compilation unit's slice of
	// cutab, whose entries are offsets in filetab (^0: none).
	i := uint64(t.cuOffset(f)) + uint64(fileno)
	if i >= uint64(len(t.cutab))/4 {
		return "", 0
	}
	fileOff := t.bo.Uint32(t.cutab[4*i:])
	if fileOff == ^uint32(0) {
		return "", 0
	}
	file, ok := t.str(t.filetab, fileOff, 1<<32)
	if !ok {
		return "", 0
	}
	return file, int(line)
}

// funcName returns the function name at off in funcnametab.
func (t *pclntab) funcName(off uint32) (string, bool) {
	return t.str(t.funcnametab, off, 0)
}

// str returns the NUL-terminated string at tab[off:], interned under
// key+off.
func (t *pclntab) str(tab []byte, off uint32, key uint64) (string, bool) {
	if s, ok := t.strings[key+uint64(off)]; ok {
		return s, true
	}
	if uint64(off) >= uint64(len(tab)) {
		return "", false
	}
	b := tab[off:]
	if len(b) > maxGoName {
		b = b[:maxGoName]
	}
	n := bytes.IndexByte(b, 0)
	if n <= 0 {
		return "", false
	}
	s := string(b[:n])
	t.strings[key+uint64(off)] = s
	t.acct.add(nameEntry + int64(n))
	return s, true
}

// spDelta returns how far SP at pc is below SP at the entry of its
// function (the pcsp table).
func (t *pclntab) spDelta(pc uint64) (int64, bool) {
	f, ok := t.findFunc(pc)
	if !ok {
		return 0, false
	}
	v, ok := t.value(f, t.pcsp(f), pc)
	if !ok || v < 0 {
		return 0, false
	}
	return int64(v), true
}

// topFrame reports whether the function at pc starts a stack.
func (t *pclntab) topFrame(pc uint64) bool {
	f, ok := t.findFunc(pc)
	return ok && t.flag(f)&funcFlagTopFrame != 0
}

// lookupFunc returns the entry of the function named name. It scans the
// functab, comparing in place: it runs once per uprobe, not per sample.
func (t *pclntab) lookupFunc(name string) (uint64, bool) {
	for i := 0; i < t.nfunc; i++ {
		funcOff := uint64(t.bo.Uint32(t.pclntable[8*i+4:]))
		if funcOff+8 > uint64(len(t.pclntable)) {
			continue
		}
		off := uint64(t.bo.Uint32(t.pclntable[funcOff+4:]))
		if off+uint64(len(name)) >= uint64(len(t.funcnametab)) {
			continue
		}
		b := t.funcnametab[off:]
		if b[len(name)] == 0 && string(b[:len(name)]) == name {
			return t.text + uint64(t.entryOff(i)), true
		}
	}
	return 0, false
}
