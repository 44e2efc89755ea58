package flow

import (
	"cmp"
	"debug/elf"
	"slices"
	"strings"
	"testing"
)

// elfFunc is one function of an ELF file: its symbol and its bytes.
type elfFunc struct {
	name string
	addr uint64
	code []byte
}

// elfImage is the functions of an ELF file (from .symtab, or .dynsym
// when stripped), one per address, in address order, and their names by
// address for noReturn.
type elfImage struct {
	arch  string
	funcs []elfFunc
	names map[uint64]string
}

func readELF(t testing.TB, path string) *elfImage {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	img := &elfImage{names: map[uint64]string{}}
	switch f.Machine {
	case elf.EM_X86_64:
		img.arch = "amd64"
	case elf.EM_AARCH64:
		img.arch = "arm64"
	default:
		t.Fatalf("%s: machine %v", path, f.Machine)
	}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, err = f.DynamicSymbols()
	}
	if err != nil {
		t.Fatalf("%s: symbols: %v", path, err)
	}
	data := map[elf.SectionIndex][]byte{}
	seen := map[uint64]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) {
			continue
		}
		if _, ok := img.names[s.Value]; !ok {
			img.names[s.Value] = s.Name
		}
		if s.Size == 0 || seen[s.Value] {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		b, ok := data[s.Section]
		if !ok {
			if b, err = sec.Data(); err != nil {
				t.Fatalf("%s: section %s: %v", path, sec.Name, err)
			}
			data[s.Section] = b
		}
		off := s.Value - sec.Addr
		if f.Type == elf.ET_REL {
			off = s.Value
		}
		if off > uint64(len(b)) || s.Size > uint64(len(b))-off {
			continue
		}
		seen[s.Value] = true
		img.funcs = append(img.funcs, elfFunc{name: s.Name, addr: s.Value, code: b[off : off+s.Size]})
	}
	slices.SortFunc(img.funcs, func(a, b elfFunc) int { return cmp.Compare(a.addr, b.addr) })
	return img
}

// noReturn is Decode's noReturn from the image's names and NoReturnName,
// and extra names the test knows.
func (img *elfImage) noReturn(extra ...string) func(uint64) bool {
	return func(target uint64) bool {
		name := img.names[target]
		return NoReturnName(name) || slices.Contains(extra, name)
	}
}

func (img *elfImage) find(t testing.TB, name string) elfFunc {
	t.Helper()
	for _, fn := range img.funcs {
		if fn.name == name {
			return fn
		}
	}
	t.Fatalf("no function %s", name)
	return elfFunc{}
}

// whyKind is a Why without its address, for histograms.
func whyKind(why string) string {
	if i := strings.Index(why, " at 0x"); i >= 0 {
		return why[:i]
	}
	return why
}
