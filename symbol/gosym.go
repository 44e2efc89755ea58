package symbol

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"io"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// goTable names Go code from the pclntab, which every Go binary keeps for
// its own tracebacks: it survives -ldflags=-s -w and gives file:line and
// inline frames without DWARF, and the SP deltas that unwinding Go code
// needs.
type goTable struct {
	tab *pclntab // Go 1.18+, decoded by us
	old *gosym.Table
	// held is what the table holds from the file and, for old tables,
	// what debug/gosym decoded up front (mem.go): not a mapped table,
	// whose pages the kernel gives and takes back.
	held int64
	// fm maps a Go 1.18+ table from its file (filemap_linux.go), nil
	// when it was read; the cleanup unmaps it once the table is garbage,
	// unless close did.
	fm      *fileMap
	cleanup runtime.Cleanup
	// lo and hi bound the code a Go 1.18+ table names, every pc of
	// it: the module's function symbols there are not kept (loadELF).
	lo, hi uint64
}

// maxPclntab bounds how much we read for a pclntab; the largest real ones
// are a few hundred MB.
const maxPclntab = 1 << 30

// newGoTable returns the Go table of f, or nil if f is not a Go binary or
// its table is unusable. syms is f's .symtab, possibly empty; r is what f
// reads, whose table is mapped rather than read when r is a file.
func newGoTable(f *elf.File, r io.ReaderAt, syms []elf.Symbol, segs []segment, size int64) (g *goTable) {
	data, pcln, fm := pclntabData(f, r, syms, size)
	if fm != nil {
		defer func(old bool) {
			debug.SetPanicOnFault(old)
			if faulted(recover()) {
				g = nil
			}
			if g == nil || g.fm == nil {
				fm.unmap()
			}
		}(debug.SetPanicOnFault(true))
	}
	if len(data) < 16 {
		return nil
	}
	text := goTextStart(f, syms, segs, data, pcln, size)
	if isPclntab118(f.ByteOrder.Uint32(data)) {
		gofunc := goFuncData(f, syms, data, pcln, uint64(data[7]), size)
		if t := parsePclntab(data, text, gofunc); t != nil && t.nfunc > 0 {
			var held int64
			if fm == nil {
				held = int64(cap(data))
			}
			if !within(gofunc, data) {
				held += int64(cap(gofunc))
			}
			g := &goTable{tab: t, held: held, fm: fm}
			if lo, hi := t.text+uint64(t.entryOff(0)), t.text+uint64(t.entryOff(t.nfunc)); lo < hi {
				g.lo, g.hi = lo, hi
			}
			if fm != nil {
				g.cleanup = runtime.AddCleanup(g, (*fileMap).unmap, fm)
			}
			return g
		}
		return nil
	}
	if fm != nil {
		// debug/gosym decodes old tables whole, and keeps them.
		data = bytes.Clone(data)
	}
	return newOldGoTable(data, text)
}

// close unmaps a mapped table now, for its callers that are done with it:
// the table answers nothing after.
func (g *goTable) close() {
	if g.fm != nil {
		g.cleanup.Stop()
		g.fm.unmap()
		g.fm, g.tab = nil, nil
	}
}

// guarded is deferred by each lookup in a mapped table, with
// debug.SetPanicOnFault's old value: a file cut short under the mapping
// faults on its pages past the end, which fails the lookup (*ok = false)
// instead of killing the profiler.
func guarded(old bool, ok *bool) {
	debug.SetPanicOnFault(old)
	if faulted(recover()) {
		*ok = false
	}
}

// faulted reports whether r, a recovered value, is a memory fault; any
// other panic goes on.
func faulted(r any) bool {
	if r == nil {
		return false
	}
	if _, ok := r.(interface{ Addr() uintptr }); ok {
		return true
	}
	panic(r)
}

// newOldGoTable reads a Go 1.2 to 1.17 table through debug/gosym.
func newOldGoTable(data []byte, text uint64) (g *goTable) {
	// debug/gosym decodes the table with unchecked slicing and relies on
	// each of its entry points recovering from the resulting panics. That
	// is an implementation detail of the Go release we build with, not a
	// documented guarantee; one path that misses it would let a corrupt
	// binary on the traced machine crash the profiler. These tables are
	// old enough not to deserve a decoder of our own, so this recover is
	// the last line of defence, and costs only the Go names.
	defer func() {
		if recover() != nil {
			g = nil
		}
	}()
	t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil || len(t.Funcs) == 0 {
		return nil
	}
	held := int64(cap(data))
	for i := range t.Funcs {
		// The function, its symbol, and its name, which debug/gosym
		// also keeps in a map of names.
		held += int64(unsafe.Sizeof(t.Funcs[i])+unsafe.Sizeof(gosym.Sym{})) + 2*int64(len(t.Funcs[i].Name))
	}
	return &goTable{old: t, held: held}
}

// account counts the table in a and has the names it decodes later
// counted there too.
func (g *goTable) account(a *acct) {
	a.add(int64(unsafe.Sizeof(*g)) + g.held)
	if g.tab != nil {
		g.tab.acct = a
		a.add(int64(unsafe.Sizeof(*g.tab)))
	}
}

// within reports whether b's bytes lie in in's backing array.
func within(b, in []byte) bool {
	if cap(b) == 0 || cap(in) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(in)))
	return p >= lo && p-lo < uintptr(cap(in))
}

// frames appends the frames at addr: for Go 1.18+ binaries the functions
// inlined there, innermost first, then the function holding addr.
func (g *goTable) frames(addr uint64, dst []Frame) (out []Frame, ok bool) {
	if g.tab != nil {
		if g.fm != nil {
			defer guarded(debug.SetPanicOnFault(true), &ok)
			defer func() {
				if !ok {
					out = dst
				}
			}()
		}
		return g.tab.frames(addr, dst)
	}
	// See newOldGoTable: pc-value decoding in gosym panics on corrupt
	// tables and is only safe as long as gosym catches that itself. Only
	// cache misses get here, so the deferred call costs nothing in steady
	// state.
	defer func() {
		if recover() != nil {
			out, ok = dst, false
		}
	}()
	file, line, fn := g.old.PCToLine(addr)
	if fn == nil {
		return dst, false
	}
	return append(dst, Frame{Func: fn.Name, File: file, Line: line}), true
}

// funcRange is the extent [start, end) of the Go function that holds
// addr. Only Go 1.18+ tables answer.
func (g *goTable) funcRange(addr uint64) (start, end uint64, ok bool) {
	if g.tab == nil {
		return 0, 0, false
	}
	if g.fm != nil {
		defer guarded(debug.SetPanicOnFault(true), &ok)
	}
	f, ok := g.tab.findFunc(addr)
	return f.entry, f.end, ok
}

// covers reports whether the table names addr: loadELF keeps no function
// symbol there.
func (g *goTable) covers(addr uint64) bool { return g.lo <= addr && addr < g.hi }

// spDelta returns the SP delta at addr: how many bytes the function
// holding addr has pushed or allocated below its entry SP there. On amd64
// the return address into its caller is at SP+delta and the caller's SP
// is SP+delta+8. Only Go 1.18+ tables answer.
func (g *goTable) spDelta(addr uint64) (d int64, ok bool) {
	if g.tab == nil {
		return 0, false
	}
	if g.fm != nil {
		defer guarded(debug.SetPanicOnFault(true), &ok)
	}
	return g.tab.spDelta(addr)
}

// topFrame reports whether the function at addr starts a goroutine's or a
// thread's stack (runtime.goexit, mstart, rt0_go...), where unwinding
// ends. Only Go 1.18+ tables answer.
func (g *goTable) topFrame(addr uint64) (ok bool) {
	if g.tab == nil {
		return false
	}
	if g.fm != nil {
		defer guarded(debug.SetPanicOnFault(true), &ok)
	}
	return g.tab.topFrame(addr)
}

// lookupFunc returns the entry of the named Go function.
func (g *goTable) lookupFunc(name string) (entry uint64, ok bool) {
	if g.tab != nil {
		if g.fm != nil {
			// The scan reads every function's record and name: pages
			// the lookups by pc never need again.
			defer g.fm.release()
			defer guarded(debug.SetPanicOnFault(true), &ok)
		}
		return g.tab.lookupFunc(name)
	}
	defer func() {
		if recover() != nil {
			entry, ok = 0, false
		}
	}()
	if fn := g.old.LookupFunc(name); fn != nil {
		return fn.Entry, true
	}
	return 0, false
}

// pclntabData finds the pclntab and its address: the .gopclntab section
// (internal linking), the runtime.pclntab..runtime.epclntab symbols
// (external linking, PIE), or, in a stripped Go binary without the section,
// by its header magic in the read-only data.
func pclntabData(f *elf.File, r io.ReaderAt, syms []elf.Symbol, size int64) ([]byte, uint64, *fileMap) {
	for _, name := range []string{".gopclntab", ".data.rel.ro.gopclntab"} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			if s.Size > maxPclntab || int64(s.Size) > size {
				return nil, 0, nil
			}
			if s.Flags&elf.SHF_COMPRESSED == 0 {
				if data, fm := mapRange(r, s.Offset, s.Size, uint64(size)); fm != nil {
					return data, s.Addr, fm
				}
			}
			data, err := s.Data()
			if err != nil {
				return nil, 0, nil
			}
			return data, s.Addr, nil
		}
	}
	var start, end uint64
	for _, s := range syms {
		switch s.Name {
		case "runtime.pclntab":
			start = s.Value
		case "runtime.epclntab":
			end = s.Value
		}
	}
	if start != 0 && end > start && end-start <= maxPclntab && int64(end-start) <= size {
		if data := readVaddr(f, start, end-start); data != nil {
			return data, start, nil
		}
	}
	if !isGo(f) {
		return nil, 0, nil
	}
	for _, name := range []string{".data.rel.ro", ".rodata", ".noptrdata"} {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS || s.Size > maxPclntab || int64(s.Size) > size {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if i := findPclntabHeader(data); i >= 0 {
			return data[i:], s.Addr + uint64(i), nil
		}
	}
	return nil, 0, nil
}

// isGo reports whether f was built by the Go toolchain.
func isGo(f *elf.File) bool {
	return f.Section(".go.buildinfo") != nil || f.Section(".note.go.buildid") != nil || f.Section(".gopclntab") != nil
}

// IsGoBinary reports whether the executable at path was built by Go.
func IsGoBinary(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return isGo(f)
}

// findPclntabHeader returns the offset of the first plausible pclntab
// header (Go 1.18+ magic, pc quantum, pointer size) in data, or -1.
func findPclntabHeader(data []byte) int {
	tail := []byte{0xff, 0xff, 0xff, 0x00, 0x00}
	for off := 0; off < len(data); {
		j := bytes.Index(data[off:], tail)
		if j < 0 {
			return -1
		}
		k := off + j - 1 // the magic's low byte precedes 0xffffff
		if k >= 0 && k%4 == 0 && k+16 <= len(data) && (data[k] == 0xf0 || data[k] == 0xf1) {
			q, p := data[k+6], data[k+7]
			if (q == 1 || q == 2 || q == 4) && (p == 4 || p == 8) {
				return k
			}
		}
		off += j + 1
	}
	return -1
}

// goTextStart returns the value of runtime.text, which pclntab offsets are
// relative to since Go 1.18. It differs from the start of .text when an
// external linker put C code first (cgo), so the section address is only
// the last resort.
func goTextStart(f *elf.File, syms []elf.Symbol, segs []segment, data []byte, pcln uint64, size int64) uint64 {
	for _, s := range syms {
		if s.Name == "runtime.text" {
			return s.Value
		}
	}
	inText := func(v uint64) bool {
		for _, s := range segs {
			if s.exec && v >= s.vaddr && v-s.vaddr < s.filesz {
				return true
			}
		}
		return false
	}
	ptr := uint64(data[7])
	if ptr != 4 && ptr != 8 {
		return 0
	}
	word := func(b []byte) uint64 {
		if ptr == 8 {
			return f.ByteOrder.Uint64(b)
		}
		return uint64(f.ByteOrder.Uint32(b))
	}
	// Go 1.18+ headers record textStart, but external linking and PIE
	// leave it zero or to a dynamic relocation.
	if (data[0] == 0xf0 || data[0] == 0xf1) && uint64(len(data)) >= 8+3*ptr {
		if v := word(data[8+2*ptr:]); inText(v) {
			return v
		}
	}
	// The runtime's own copy, moduledata.text, is always right once
	// relocated: read it from the file or from its dynamic relocation.
	if md := moduledata(f, pcln, ptr, size); md != 0 {
		const textField = 22 // pcHeader, 6 slices, ftab's 3 words, findfunctab, minpc, maxpc
		if v, ok := moduledataWord(f, md, textField, ptr, size); ok && inText(v) {
			return v
		}
	}
	if s := f.Section(".text"); s != nil {
		return s.Addr
	}
	return 0
}

// moduledata finds runtime.firstmoduledata, whose first word points to the
// pclntab: the .go.module section of recent linkers (Go 1.26 has it), else
// the word equal to pcln in .noptrdata, else the relative relocation that
// resolves to pcln (PIE, where the file leaves the word blank).
func moduledata(f *elf.File, pcln, ptr uint64, size int64) uint64 {
	if s := f.Section(".go.module"); s != nil && s.Type != elf.SHT_NOBITS {
		return s.Addr
	}
	if s := f.Section(".noptrdata"); s != nil && s.Type != elf.SHT_NOBITS && int64(s.Size) <= size {
		if data, err := s.Data(); err == nil {
			for i := uint64(0); i+ptr <= uint64(len(data)); i += ptr {
				var v uint64
				if ptr == 8 {
					v = f.ByteOrder.Uint64(data[i:])
				} else {
					v = uint64(f.ByteOrder.Uint32(data[i:]))
				}
				if v == pcln {
					return s.Addr + i
				}
			}
		}
	}
	if off, _, ok := relativeReloc(f, size, func(_, addend uint64) bool { return addend == pcln }); ok {
		return off
	}
	return 0
}

// relativeReloc returns the first R_*_RELATIVE relocation in a SHT_RELA
// section for which match(r_offset, r_addend) holds. Such a relocation
// stores addend+bias at r_offset: the addend is the link-time value of a
// pointer the file itself leaves blank.
func relativeReloc(f *elf.File, size int64, match func(off, addend uint64) bool) (off, addend uint64, ok bool) {
	if f.Class != elf.ELFCLASS64 {
		return 0, 0, false
	}
	var relative uint32
	switch f.Machine {
	case elf.EM_X86_64:
		relative = uint32(elf.R_X86_64_RELATIVE)
	case elf.EM_AARCH64:
		relative = uint32(elf.R_AARCH64_RELATIVE)
	default:
		return 0, 0, false
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || int64(s.Size) > size {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(data); i += 24 {
			off := f.ByteOrder.Uint64(data[i:])
			info := f.ByteOrder.Uint64(data[i+8:])
			addend := f.ByteOrder.Uint64(data[i+16:])
			if uint32(info) == relative && match(off, addend) {
				return off, addend, true
			}
		}
	}
	return 0, 0, false
}

// readVaddr reads n bytes at virtual address vaddr of f.
func readVaddr(f *elf.File, vaddr, n uint64) []byte {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || vaddr < p.Vaddr || vaddr-p.Vaddr >= p.Filesz || n > p.Filesz-(vaddr-p.Vaddr) {
			continue
		}
		data := make([]byte, n)
		if _, err := p.ReadAt(data, int64(vaddr-p.Vaddr)); err != nil {
			return nil
		}
		return data
	}
	return nil
}
