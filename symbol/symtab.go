package symbol

import (
	"cmp"
	"debug/elf"
	"math"
	"slices"
	"strings"
)

// sym is one function of an ELF symbol table, covering [start, end).
type sym struct {
	start, end uint64
	name       string
}

// symtab is a function table sorted by start, one symbol per address.
type symtab []sym

// symCand is a function symbol before aliases are resolved.
type symCand struct {
	addr, size uint64
	name       string
	bind       elf.SymBind
	secEnd     uint64 // end of the symbol's section; 0 when unknown
	dyn        bool   // from .dynsym
}

// funcCands appends the defined function symbols of syms. secs are the
// sections of the file syms came from, used to bound zero-size symbols.
func funcCands(dst []symCand, syms []elf.Symbol, secs []*elf.Section, dyn bool) []symCand {
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || s.Value == 0 || s.Name == "" {
			continue
		}
		c := symCand{addr: s.Value, size: s.Size, name: s.Name, bind: elf.ST_BIND(s.Info), dyn: dyn}
		if i := int(s.Section); i < len(secs) {
			if sec := secs[i]; sec.Addr <= s.Value && sec.Size > 0 {
				c.secEnd = sec.Addr + sec.Size
			}
		}
		dst = append(dst, c)
	}
	return dst
}

// newSymtab sorts the candidates and keeps one name per address.
//
// Sizes are honoured the way perf does: a pc past the end of a sized
// symbol is unknown (it is padding, or code of a function whose symbol was
// stripped, and naming it after its neighbour would be a lie), while a
// zero-size symbol (hand-written assembly) runs to the next symbol or the
// end of its section.
func newSymtab(cands []symCand) symtab {
	slices.SortFunc(cands, func(a, b symCand) int {
		if c := cmp.Compare(a.addr, b.addr); c != 0 {
			return c
		}
		return compareAlias(a, b)
	})
	t := make(symtab, 0, len(cands))
	for i := 0; i < len(cands); {
		best := cands[i]
		j := i + 1
		for j < len(cands) && cands[j].addr == best.addr {
			j++
		}
		end := uint64(math.MaxUint64)
		switch {
		case best.size > 0:
			end = best.addr + best.size
			if end < best.addr { // wrapped: corrupt size
				end = math.MaxUint64
			}
		case j < len(cands):
			end = cands[j].addr
			if best.secEnd > best.addr && best.secEnd < end {
				end = best.secEnd
			}
		case best.secEnd > best.addr:
			end = best.secEnd
		}
		t = append(t, sym{start: best.addr, end: end, name: best.name})
		i = j
	}
	return t
}

// compareAlias orders symbols at the same address, best first, so the
// name chosen for an address does not depend on symbol table order:
// sized over zero-size, global over weak over local, fewer leading
// underscores (malloc over __libc_malloc), longer name, .symtab over .dynsym,
// then bytewise.
func compareAlias(a, b symCand) int {
	if (a.size > 0) != (b.size > 0) {
		if a.size > 0 {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(bindRank(b.bind), bindRank(a.bind)); c != 0 {
		return c
	}
	if c := cmp.Compare(leadingUnderscores(a.name), leadingUnderscores(b.name)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(b.name), len(a.name)); c != 0 {
		return c
	}
	if a.dyn != b.dyn {
		if !a.dyn {
			return -1
		}
		return 1
	}
	return strings.Compare(a.name, b.name)
}

func bindRank(b elf.SymBind) int {
	switch b {
	case elf.STB_GLOBAL, elf.STB_LOOS: // STB_GNU_UNIQUE is a global
		return 3
	case elf.STB_WEAK:
		return 2
	case elf.STB_LOCAL:
		return 1
	}
	return 0
}

func leadingUnderscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// lookup returns the function containing addr.
func (t symtab) lookup(addr uint64) (string, bool) {
	sy, ok := t.holding(addr)
	return sy.name, ok
}

func (t symtab) frames(addr uint64, dst []Frame) ([]Frame, bool) {
	name, ok := t.lookup(addr)
	if !ok {
		return dst, false
	}
	return append(dst, Frame{Func: name}), true
}
