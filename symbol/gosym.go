package symbol

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
)

// goTable names Go code from the pclntab, which every Go binary keeps for
// its own tracebacks: it survives -ldflags=-s -w and gives file:line
// without DWARF.
type goTable struct {
	t *gosym.Table
}

// maxPclntab bounds how much we read for a pclntab; the largest real ones
// are a few hundred MB.
const maxPclntab = 1 << 30

// newGoTable returns the Go table of f, or nil if f is not a Go binary or
// its table is unusable. syms is f's .symtab, possibly empty.
func newGoTable(f *elf.File, syms []elf.Symbol, segs []segment, size int64) (g *goTable) {
	data := pclntabData(f, syms, segs, size)
	if len(data) < 16 {
		return nil
	}
	text := goTextStart(f, syms, segs, data)
	// debug/gosym decodes the table with unchecked slicing and recovers
	// from most of its own panics, but not all (NewTable's walk and
	// go12MapFiles index the table as given). A corrupt table must cost us
	// the Go names, not the profiler, and validating the format ourselves
	// would duplicate gosym. So this recover is the last line of defence.
	defer func() {
		if recover() != nil {
			g = nil
		}
	}()
	t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil || len(t.Funcs) == 0 {
		return nil
	}
	return &goTable{t: t}
}

func (g *goTable) frames(addr uint64, dst []Frame) (out []Frame, ok bool) {
	// See newGoTable: decoding pc-value tables of a corrupt pclntab can
	// still panic inside gosym. Only cache misses get here.
	defer func() {
		if recover() != nil {
			out, ok = dst, false
		}
	}()
	file, line, fn := g.t.PCToLine(addr)
	if fn == nil {
		return dst, false
	}
	return append(dst, Frame{Func: fn.Name, File: file, Line: line}), true
}

// lookupFunc returns the entry of the named Go function.
func (g *goTable) lookupFunc(name string) (entry uint64, ok bool) {
	defer func() {
		if recover() != nil {
			entry, ok = 0, false
		}
	}()
	if fn := g.t.LookupFunc(name); fn != nil {
		return fn.Entry, true
	}
	return 0, false
}

// pclntabData finds the pclntab: the .gopclntab section (internal linking),
// the runtime.pclntab..runtime.epclntab symbols (external linking, PIE),
// or, in a stripped Go binary without the section, by its header magic in
// the read-only data.
func pclntabData(f *elf.File, syms []elf.Symbol, segs []segment, size int64) []byte {
	for _, name := range []string{".gopclntab", ".data.rel.ro.gopclntab"} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS {
			if s.Size > maxPclntab || int64(s.Size) > size {
				return nil
			}
			data, err := s.Data()
			if err != nil {
				return nil
			}
			return data
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
			return data
		}
	}
	if !isGo(f) {
		return nil
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
			return data[i:]
		}
	}
	return nil
}

// isGo reports whether f was built by the Go toolchain.
func isGo(f *elf.File) bool {
	return f.Section(".go.buildinfo") != nil || f.Section(".note.go.buildid") != nil
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
// external linker put C code first (cgo).
func goTextStart(f *elf.File, syms []elf.Symbol, segs []segment, data []byte) uint64 {
	for _, s := range syms {
		if s.Name == "runtime.text" {
			return s.Value
		}
	}
	// Go 1.18+ headers record textStart; in a PIE it may be left for a
	// dynamic relocation to fill in, so trust it only if it lands in code.
	if (data[0] == 0xf0 || data[0] == 0xf1) && data[1] == 0xff && data[2] == 0xff && data[3] == 0xff {
		ptr := int(data[7])
		if len(data) >= 8+3*ptr {
			var v uint64
			if ptr == 8 {
				v = f.ByteOrder.Uint64(data[8+2*ptr:])
			} else {
				v = uint64(f.ByteOrder.Uint32(data[8+2*ptr:]))
			}
			for _, s := range segs {
				if s.exec && v >= s.vaddr && v-s.vaddr < s.filesz {
					return v
				}
			}
		}
	}
	if s := f.Section(".text"); s != nil {
		return s.Addr
	}
	return 0
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
