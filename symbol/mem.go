package symbol

import (
	"debug/dwarf"
	"unsafe"
)

// What a module holds, in bytes, for the budget (budget.go). The figure is
// an estimate kept up to date as each part is loaded or cached, never a
// walk over memory: a module adds the size of what it just built, and
// subtracts what it drops.
//
// Counted, at the moment each is built:
//   - the module itself: its struct, PT_LOAD segments, build id and name,
//     and its entries in the cache's indexes;
//   - symbol tables (.symtab/.dynsym/debug file/MiniDebugInfo, PLT
//     stubs): one entry per function plus the bytes of its name;
//   - the Go pclntab: the table and go:func.* bytes read from the file,
//     and each name or file name decoded from it (interned on first
//     use); for pre-1.18 tables, debug/gosym's functions and names;
//   - DWARF: the section bytes held (not .debug_aranges, read once), the
//     unit list and address index, debug/dwarf's own unit headers and
//     parsed abbreviations (a measured factor of .debug_abbrev), and, as
//     each unit is first looked up, its functions, spans, line rows and
//     file names, and each name resolved through the DIEs;
//   - CFI: the .eh_frame/.debug_frame bytes and the FDE/CIE index of each
//     table (cfi.Table.Bytes), and each memoized rule;
//   - the address cache: each entry, its frames and the names built for
//     it (unnamed "[module+0xOFFSET]", a demangled name); names that point
//     into a table already counted are not counted again; the names of
//     offsets outside every segment (offNames);
//   - the code cache: each chunk read.
//
// Left out: the Go runtime's allocation rounding and map growth slack
// beyond the average the map estimate assumes (mapEntry); what debug/dwarf
// caches while decoding (type units, readers); debug/gosym's
// lazily filled maps; the frames and names a caller's dst holds; per
// process state (mappings, JIT perf maps), which goes with the process;
// and the kernel's symbol table, reported on its own (MemStats.Kernel).
// mem_test.go checks the estimate against the heap a loaded module
// actually retains.

// acct is the running byte count of one module. Its parts hold a pointer
// to it, so what they load later (a DWARF unit, a cached address) is
// counted where it is built; while the module is in the cache the count
// also moves the cache's total.
type acct struct {
	n     int64
	cache *moduleCache // nil while the module is not in the cache
}

// add counts n more bytes (fewer when negative). A nil acct (a source
// loaded outside any module, as tests do) counts nothing.
func (a *acct) add(n int64) {
	if a == nil {
		return
	}
	a.n += n
	if a.cache != nil {
		a.cache.bytes += n
	}
}

// mapEntry is what one entry of a Go map with keys and values of kv bytes
// in all costs: the slot, its control byte, and the empty slots a map
// keeps between growths (measured on go1.26: 1.6 to 2.5 times the slot).
func mapEntry(kv uintptr) int64 { return 2*int64(kv) + 2 }

// Sizes of what the estimates count per element.
const (
	sizeSym       = int64(unsafe.Sizeof(sym{}))
	sizeFrame     = int64(unsafe.Sizeof(Frame{}))
	sizeSegment   = int64(unsafe.Sizeof(segment{}))
	sizeLineRow   = int64(unsafe.Sizeof(lineRow{}))
	sizeFuncNode  = int64(unsafe.Sizeof(funcNode{}))
	sizeFuncSpan  = int64(unsafe.Sizeof(funcSpan{}))
	sizeString    = int64(unsafe.Sizeof(""))
	sizeUnitRange = int64(unsafe.Sizeof(unitRange{}))
	sizeDWARFUnit = int64(unsafe.Sizeof(dwarfUnit{}))
)

// Per-entry costs of the caches keyed by address or offset.
var (
	addrEntry  = mapEntry(unsafe.Sizeof(uint64(0)) + unsafe.Sizeof([]Frame(nil)))
	ruleEntry  = mapEntry(unsafe.Sizeof(uint64(0)) + unsafe.Sizeof(cachedRule{}))
	codeEntry  = mapEntry(unsafe.Sizeof(uint64(0)) + unsafe.Sizeof([]byte(nil)))
	setupEntry = mapEntry(unsafe.Sizeof(uint64(0)) + unsafe.Sizeof(int32(0)))
	nameEntry  = mapEntry(unsafe.Sizeof(uint64(0)) + unsafe.Sizeof(""))
	dieEntry   = mapEntry(unsafe.Sizeof(dwarf.Offset(0)) + unsafe.Sizeof(""))
	// keyEntry is one entry of the cache's indexes (byFile, byBuild,
	// byPath).
	keyEntry = mapEntry(unsafe.Sizeof(fileKey{}) + unsafe.Sizeof((*module)(nil)))
)

// What a unit's state holds beyond its dwarfUnit: its share of the
// index, the decoded units' Data (one unit's abbreviations each, a few
// of them at a time; dwarf_unitdata.go).
const dwarfUnitState = 160

// symtabBytes is what a symbol table holds: its entries and their names.
func symtabBytes(t symtab) int64 {
	n := int64(cap(t)) * sizeSym
	for i := range t {
		n += int64(len(t[i].name))
	}
	return n
}

// framesBytes is what an address cache entry's frames hold beyond the
// tables they point into: the slice, and the names built for them on the
// miss (fresh says which those are).
func framesBytes(fs []Frame, fresh int64) int64 {
	return int64(cap(fs))*sizeFrame + fresh
}

// bytes is what one parsed DWARF unit holds.
func (t *unitTable) bytes() int64 {
	n := int64(unsafe.Sizeof(*t)) + int64(cap(t.funcs))*sizeFuncNode + int64(cap(t.spans))*sizeFuncSpan +
		int64(cap(t.rows))*sizeLineRow + int64(cap(t.files))*sizeString
	for i := range t.funcs {
		n += int64(len(t.funcs[i].name))
	}
	for _, f := range t.files {
		n += int64(len(f))
	}
	return n
}
