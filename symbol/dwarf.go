package symbol

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"math"
	"strings"
	"unsafe"
)

// dwarfSource names addresses from DWARF: for each address, the chain of
// functions inlined into each other there, innermost first, each with its
// source position.
//
// Loading is split in two because debug info is large (libc's is 8 MB,
// a big C++ program's can be gigabytes) and a profile touches a small part
// of it. newDWARFSource reads the sections and indexes the compilation
// units by address; the first lookup in a unit parses that unit's
// functions and line table into sorted arrays (dwarf_funcs.go,
// dwarf_lines.go), kept for the module's lifetime. The module memoizes
// final answers per address on top of that.
//
// The section bytes are held in memory rather than read through a file
// descriptor: debug/dwarf decodes from byte slices, compressed sections
// (the norm for debug files) must be inflated anyway, and a profiler that
// touches hundreds of libraries should not pin one descriptor per library.
// Location lists, call frame information and type units, which are most of
// the bytes and which naming does not need, are never read.
//
// Not safe for concurrent use; like the module cache around it, it belongs
// to the Resolver's goroutine.
type dwarfSource struct {
	secs  dwarfSecs // the sections; empty while the source rests
	units []dwarfUnit
	index []unitRange // sorted by lo

	names map[dwarf.Offset]string // resolved names by DIE offset

	// syms names the outermost (physical) frame when it covers the
	// address; see unitTable.frames.
	syms symtab

	order binary.ByteOrder

	// decoded keeps the debug/dwarf Data of the units used last
	// (dwarf_unitdata.go): each decodes one unit, with only its own
	// abbreviations parsed.
	decoded [decodedUnits]unitData
	nextDec int

	held int64 // what the sections hold (mem.go)
	acct *acct // the module's: units parsed and names resolved add to it

	rest dwarfRest // whether the sections are let go while unused (dwarfrest.go)
}

// dwarfSecs are the sections naming reads, uncompressed. abbrev ends in a
// zero byte of cctop's own, an empty abbreviation table (dwarf_unitdata.go).
type dwarfSecs struct {
	abbrev, info, line, ranges, str []byte
	extra                           map[string][]byte // addr, line_str, rnglists, str_offsets
}

// dwarfUnit is one unit of .debug_info: where its header and its first DIE
// are, where the next unit starts, and its tables once the first lookup in
// it has parsed them.
type dwarfUnit struct {
	base, end dwarf.Offset // its header; the next unit's header (or the section's end)
	off       dwarf.Offset // its DIE
	parsed    bool
	t         *unitTable // nil when the unit could not be parsed
}

// maxDWARFBytes bounds the sections read for one module. Debug info past
// it is skipped, leaving the symbol tables to name the module: holding
// gigabytes for one binary is not worth its inline frames.
const maxDWARFBytes = 1 << 30

// maxInflate bounds how much a compressed section may claim to expand;
// deflate cannot exceed about 1032:1, and real debug info compresses 3-10x,
// so a larger claim is a corrupt header.
const maxInflate = 1100

// dwarfSectionNames are the sections naming needs: DIEs and their
// abbreviations, strings, range lists and line tables. .debug_aranges is
// read for the unit index (dwarf_units.go), not by debug/dwarf.
var dwarfSectionNames = []string{
	"abbrev", "info", "str", "line", "ranges",
	"addr", "line_str", "rnglists", "str_offsets", "aranges",
}

// hasDWARF reports whether f carries its own debug info.
func hasDWARF(f *elf.File) bool {
	for _, n := range []string{".debug_info", ".zdebug_info"} {
		if s := f.Section(n); s != nil && s.Type != elf.SHT_NOBITS && s.FileSize > 0 {
			return true
		}
	}
	return false
}

// newDWARFSource loads the debug info of f, a file of size bytes, or
// returns nil when f has none or it is unusable.
func newDWARFSource(f *elf.File, size int64) (s *dwarfSource) {
	ds, aranges, held, ok := readDWARFSecs(f, size)
	if !ok {
		return nil
	}
	// debug/dwarf is meant to return errors for malformed input, but it
	// decodes with plenty of indexing driven by the data, and a corrupt
	// file on the traced machine must not take the profiler down: every
	// entry into it from this file runs under recover.
	defer func() {
		if recover() != nil {
			s = nil
		}
	}()
	s = &dwarfSource{secs: ds, names: make(map[dwarf.Offset]string), order: f.ByteOrder, held: held}
	s.units = listUnits(ds.info, f.ByteOrder)
	s.indexUnits(aranges, f.ByteOrder)
	if len(s.index) == 0 {
		return nil
	}
	return s
}

// readDWARFSecs reads the sections of f that naming needs, and
// .debug_aranges, which only the index reads and is not held; held is
// what the others hold. ok is false when f has no usable debug info.
func readDWARFSecs(f *elf.File, size int64) (ds dwarfSecs, aranges []byte, held int64, ok bool) {
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		// Relocatable objects would need their relocations applied; nothing
		// maps them for execution.
		return dwarfSecs{}, nil, 0, false
	}
	secs := make(map[string][]byte, len(dwarfSectionNames))
	var total uint64
	for _, name := range dwarfSectionNames {
		data, ok := dwarfSection(f, name, size, maxDWARFBytes-total)
		if !ok {
			return dwarfSecs{}, nil, 0, false
		}
		secs[name] = data
		total += uint64(len(data))
		if name != "aranges" {
			held += int64(cap(data))
		}
	}
	if len(secs["info"]) == 0 || len(secs["abbrev"]) == 0 {
		return dwarfSecs{}, nil, 0, false
	}
	ds = dwarfSecs{
		abbrev: append(secs["abbrev"], 0),
		info:   secs["info"], line: secs["line"], ranges: secs["ranges"], str: secs["str"],
		extra: map[string][]byte{},
	}
	for _, n := range []string{"addr", "line_str", "rnglists", "str_offsets"} {
		if secs[n] != nil {
			ds.extra[n] = secs[n]
		}
	}
	return ds, secs["aranges"], held, true
}

// dwarfSection reads .debug_<name> (or the old-style compressed
// .zdebug_<name>) of f, uncompressed. A missing section is (nil, true);
// one that claims more than limit, or more than its compressed bytes can
// expand to, or cannot be read is (nil, false).
func dwarfSection(f *elf.File, name string, size int64, limit uint64) ([]byte, bool) {
	s := f.Section(".debug_" + name)
	if s == nil {
		s = f.Section(".zdebug_" + name)
	}
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, true
	}
	if s.FileSize > uint64(size) {
		return nil, false
	}
	// For .zdebug sections debug/elf learns the uncompressed size while
	// opening the section, so open it before reading Size.
	s.Open()
	compressed := s.Flags&elf.SHF_COMPRESSED != 0 || strings.HasPrefix(s.Name, ".zdebug")
	if s.Size > limit || (compressed && s.Size/maxInflate > s.FileSize) {
		return nil, false
	}
	data, err := s.Data()
	if err != nil || uint64(len(data)) != s.Size {
		return nil, false
	}
	return data, true
}

// frames appends the inline chain at addr. It answers only when DWARF has
// a subprogram covering addr and a name for it (its own or the symbol
// table's), so code without debug info (objects built without -g) falls
// through to the symbol table.
func (s *dwarfSource) frames(addr uint64, dst []Frame) (out []Frame, ok bool) {
	n := len(dst)
	defer func() {
		if recover() != nil {
			out, ok = dst[:n], false
		}
	}()
	// Units normally do not overlap; when corrupt or duplicated ranges do,
	// the few units covering addr are tried in turn.
	var tried [maxUnitsPerAddr]int
	for _, u := range s.unitsAt(addr, tried[:0]) {
		t := s.table(u)
		if t == nil {
			continue
		}
		if out, ok := t.frames(s, addr, dst); ok {
			return out, true
		}
	}
	return dst, false
}

// table returns unit i's parsed tables, parsing them on first use.
func (s *dwarfSource) table(i int) *unitTable {
	u := &s.units[i]
	if !u.parsed {
		if !s.awake() {
			return nil
		}
		u.parsed = true
		end := dwarf.Offset(math.MaxUint32)
		if i+1 < len(s.units) {
			end = s.units[i+1].off
		}
		u.t = s.parseUnit(i, end)
		if u.t != nil {
			s.acct.add(u.t.bytes())
		}
	}
	return u.t
}

// account counts what the source holds in a, and has the units it parses
// and the names it resolves later counted there too.
func (s *dwarfSource) account(a *acct) {
	s.acct = a
	a.add(int64(unsafe.Sizeof(*s)) + s.held + int64(cap(s.units))*(sizeDWARFUnit+dwarfUnitState) +
		int64(cap(s.index))*sizeUnitRange)
}

// parseUnit parses unit i, the next one's DIE at end; nil if it panics or
// cannot be decoded.
func (s *dwarfSource) parseUnit(i int, end dwarf.Offset) (t *unitTable) {
	defer func() {
		if recover() != nil {
			t = nil
		}
	}()
	d := s.unitData(i)
	if d == nil {
		return nil
	}
	return parseUnitTable(d, s.units[i].off, end, s.secs.line, s.order)
}

// maxNameHops bounds the abstract_origin/specification chain followed for
// a name; real chains are two or three long, corrupt ones may loop.
const maxNameHops = 8

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, the pre-DWARF 4 spelling
// of DW_AT_linkage_name that GCC still emits for -gstrict-dwarf < 4.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// name returns the name of the function whose DIE is at off: the first
// linkage name along its abstract_origin and specification chain (so C++
// keeps mangled names, as the symbol table has them), else the first plain
// name. References may cross units (DW_FORM_ref_addr).
func (s *dwarfSource) name(off dwarf.Offset) string {
	if n, ok := s.names[off]; ok {
		return n
	}
	if !s.awake() {
		return ""
	}
	var plain string
	name := ""
	cur := off
	for range maxNameHops {
		// References may lead to another unit (DW_FORM_ref_addr): each
		// hop reads the unit its DIE is in.
		d := s.unitData(s.unitOf(cur))
		if d == nil {
			break
		}
		r := d.Reader()
		r.Seek(cur)
		e, err := r.Next()
		if err != nil || e == nil || e.Tag == 0 {
			break
		}
		if ln := linkageName(e); ln != "" {
			name = ln
			break
		}
		if plain == "" {
			plain, _ = e.Val(dwarf.AttrName).(string)
		}
		next, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			next, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok || next == cur {
			break
		}
		cur = next
	}
	if name == "" {
		name = plain
	}
	s.names[off] = name
	s.acct.add(dieEntry + int64(len(name)))
	return name
}

func linkageName(e *dwarf.Entry) string {
	if n, _ := e.Val(dwarf.AttrLinkageName).(string); n != "" {
		return n
	}
	n, _ := e.Val(attrMIPSLinkageName).(string)
	return n
}
