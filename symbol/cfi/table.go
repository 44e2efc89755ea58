package cfi

import (
	"cmp"
	"debug/elf"
	"fmt"
	"slices"
	"unsafe"
)

// Table is the call frame information of one ELF module, indexed by pc. It
// is immutable after Load, so any number of goroutines may read it.
type Table struct {
	buf   []byte // .eh_frame followed by .debug_frame; expressions point into it
	sects [2]section
	cies  []cie
	fdes  []fde // sorted by begin
}

// section is one CFI section's place in Table.buf.
type section struct {
	data  []byte // Table.buf[start : start+len]
	start uint32
	vaddr uint64 // link-time address of data[0], the base of pcrel pointers
	debug bool   // .debug_frame layout rather than .eh_frame
}

const (
	sectEH = iota
	sectDebug
)

// maxSection bounds what Load reads: expression handles are 31-bit offsets,
// and no real CFI section comes near it.
const maxSection = 1 << 30

// input is what load needs from an ELF file, so tests and fuzzing can
// supply raw section bytes.
type input struct {
	eh       []byte
	ehAddr   uint64
	debug    []byte
	text     uint64 // .text address, base of textrel pointers
	data     uint64 // .got address, base of datarel pointers
	addrSize uint8
}

// Load reads the .eh_frame and .debug_frame sections of f and indexes every
// FDE they hold. Either section may be missing; a module with neither gives
// an empty table. Malformed entries are dropped, not reported: the result
// covers what could be parsed. Errors come only from reading f.
//
// .eh_frame_hdr is not read: its search table covers .eh_frame only, while
// the index built here covers both sections and costs one pass.
func Load(f *elf.File) (*Table, error) { return loadSections(f, true) }

// LoadEH is Load without .debug_frame: for a Go binary, whose pclntab
// locates every Go frame's return address as well, and whose .debug_frame
// is compressed (inflating a 20 MB binary's was most of an agent's first
// look at it), while .eh_frame, if any, covers the C code linked in.
func LoadEH(f *elf.File) (*Table, error) { return loadSections(f, false) }

func loadSections(f *elf.File, debugFrame bool) (*Table, error) {
	in := input{addrSize: 8}
	if f.Class == elf.ELFCLASS32 {
		in.addrSize = 4
	}
	var err error
	if in.eh, in.ehAddr, err = sectionData(f, ".eh_frame"); err != nil {
		return nil, err
	}
	if debugFrame {
		if in.debug, _, err = sectionData(f, ".debug_frame"); err != nil {
			return nil, err
		}
	}
	if s := f.Section(".text"); s != nil {
		in.text = s.Addr
	}
	if s := f.Section(".got"); s != nil {
		in.data = s.Addr
	}
	return load(in), nil
}

// FromEHFrame indexes the FDEs of raw .eh_frame bytes that, mapped, would
// start at address vaddr: the base of their pcrel pointers, so the table's
// pcs are the addresses the entries' encoded pointers name there. It is for
// CFI that has no ELF file around it, such as the unwinding information a
// JIT runtime writes into its jitdump. Malformed entries are dropped, as
// Load drops them; the table keeps eh, which the caller must not modify.
func FromEHFrame(eh []byte, vaddr uint64) *Table {
	return load(input{eh: eh, ehAddr: vaddr, addrSize: 8})
}

// sectionData returns the contents and address of a section with data.
// A separate debug file keeps .eh_frame as SHT_NOBITS: that is no CFI.
func sectionData(f *elf.File, name string) ([]byte, uint64, error) {
	s := f.Section(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, 0, nil
	}
	if s.Size > maxSection {
		return nil, 0, fmt.Errorf("cfi: %s is %d bytes", name, s.Size)
	}
	b, err := s.Data()
	if err != nil {
		return nil, 0, fmt.Errorf("cfi: reading %s: %w", name, err)
	}
	return b, s.Addr, nil
}

// load builds the table from raw section contents, which it keeps: the
// caller must not modify them afterwards.
func load(in input) *Table {
	if in.addrSize != 4 {
		in.addrSize = 8
	}
	if len(in.eh) > maxSection {
		in.eh = nil
	}
	if len(in.debug) > maxSection {
		in.debug = nil
	}
	// Expressions are addressed by offset into one buffer; with a single
	// section (the usual case) that is the section itself, uncopied.
	t := &Table{}
	switch {
	case len(in.debug) == 0:
		t.buf = in.eh
	case len(in.eh) == 0:
		t.buf = in.debug
	default:
		t.buf = slices.Concat(in.eh, in.debug)
	}
	n := len(in.eh)
	t.sects[sectEH] = section{data: t.buf[:n:n], vaddr: in.ehAddr}
	t.sects[sectDebug] = section{data: t.buf[n:], start: uint32(n), debug: true}
	for i := range t.sects {
		t.index(uint8(i), in)
	}
	// Among FDEs starting at the same pc, .eh_frame's sorts last so the
	// backward scan in find meets it first: it is what the runtime uses.
	slices.SortStableFunc(t.fdes, func(a, b fde) int {
		if c := cmp.Compare(a.begin, b.begin); c != 0 {
			return c
		}
		return cmp.Compare(b.sect, a.sect)
	})
	var maxEnd uint64
	for i := range t.fdes {
		maxEnd = max(maxEnd, t.fdes[i].end)
		t.fdes[i].maxEnd = maxEnd
	}
	return t
}

// index appends the FDEs of one section. CIEs are parsed when an FDE first
// names them, since .debug_frame may place a CIE after its FDEs.
func (t *Table) index(si uint8, in input) {
	s := &t.sects[si]
	b := bases{pc: s.vaddr, text: in.text, data: in.data}
	cies := map[int]int32{} // section offset -> index in t.cies, -1: unusable
	for off := 0; off < len(s.data); {
		e, st := readEntry(s.data, off, s.debug)
		if st == entryStop {
			return
		}
		off = e.end
		if st == entrySkip || e.isCIE(s.debug) {
			continue
		}
		pos, ok := e.ciePos(s.debug, len(s.data))
		if !ok {
			continue
		}
		ci, seen := cies[pos]
		if !seen {
			ci = -1
			if c, ok := parseCIE(s, si, pos, in.addrSize); ok {
				ci = int32(len(t.cies))
				t.cies = append(t.cies, c)
			}
			cies[pos] = ci
		}
		if ci < 0 {
			continue
		}
		f, ok := parseFDE(s, &e, &t.cies[ci], &b)
		if !ok {
			continue
		}
		f.cie = uint32(ci)
		f.sect = si
		t.fdes = append(t.fdes, f)
	}
}

// Len reports how many FDEs the table indexes.
func (t *Table) Len() int { return len(t.fdes) }

// Bytes estimates the memory the table holds: the section bytes it keeps
// and its index of CIEs and FDEs. It is what a module budget counts for
// the table (symbol/mem.go).
func (t *Table) Bytes() int64 {
	return int64(unsafe.Sizeof(*t)) + int64(cap(t.buf)) +
		int64(cap(t.cies))*int64(unsafe.Sizeof(cie{})) + int64(cap(t.fdes))*int64(unsafe.Sizeof(fde{}))
}

// maxOverlapScan bounds the walk back over FDEs that begin at or before a
// pc but end before it, looking for an enclosing one. Real overlaps (FDEs
// of discarded functions relocated to 0, duplicates in both sections) are
// a handful deep.
const maxOverlapScan = 256

// find returns the index of the FDE covering pc, or -1. When several cover
// it, the one beginning last wins: it is the most specific.
func (t *Table) find(pc uint64) int {
	lo, hi := 0, len(t.fdes)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.fdes[m].begin <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for i, n := lo-1, 0; i >= 0 && n < maxOverlapScan; i, n = i-1, n+1 {
		f := &t.fdes[i]
		if pc < f.end {
			return i
		}
		if f.maxEnd <= pc {
			break
		}
	}
	return -1
}

// fpSample is how many FDEs FramePointerShare interprets.
const fpSample = 512

// FramePointerShare reports the share, from 0 to 1, of the module's
// functions that base their CFA on RBP, as code built with
// -fno-omit-frame-pointer does. It samples up to 512 FDEs spread over the
// table and counts only those that move the CFA at all: stubs and
// frameless leaves say nothing about how the module was built. A table
// with no such FDE gives 0. The caller picks the threshold above which
// walking RBP chains is trustworthy.
func (t *Table) FramePointerShare() float64 {
	n := len(t.fdes)
	step := max(1, (n+fpSample-1)/fpSample)
	var framed, fp int
	for i := 0; i < n; i += step {
		var m machine
		if m.start(t, &t.fdes[i], ^uint64(0)) == runBad || !m.cfaMoved {
			continue
		}
		framed++
		if m.fpCFA {
			fp++
		}
	}
	if framed == 0 {
		return 0
	}
	return float64(fp) / float64(framed)
}
