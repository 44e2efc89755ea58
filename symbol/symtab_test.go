package symbol

import (
	"debug/elf"
	"encoding/binary"
	"math"
	"testing"
)

func TestSymtab(t *testing.T) {
	cands := []symCand{
		{addr: 0x1000, size: 0x20, name: "sized"},
		{addr: 0x1040, size: 0, name: "asm_zero", secEnd: 0x2000},
		{addr: 0x1080, size: 0x10, name: "local_alias", bind: elf.STB_LOCAL},
		{addr: 0x1080, size: 0x10, name: "weak_alias", bind: elf.STB_WEAK},
		{addr: 0x1080, size: 0x10, name: "__global_alias", bind: elf.STB_GLOBAL},
		{addr: 0x1080, size: 0, name: "zero_global_alias", bind: elf.STB_GLOBAL},
		{addr: 0x10a0, size: 0x10, name: "__libc_malloc", bind: elf.STB_GLOBAL},
		{addr: 0x10a0, size: 0x10, name: "malloc", bind: elf.STB_GLOBAL, dyn: true},
		{addr: 0x10c0, size: 0x10, name: "dup", bind: elf.STB_GLOBAL, dyn: true},
		{addr: 0x10c0, size: 0x10, name: "dup", bind: elf.STB_GLOBAL},
		{addr: 0x1f00, size: 0, name: "last_zero", secEnd: 0x1f80},
		{addr: 0x3000, size: 0, name: "no_section"},
	}
	// Resolving must not depend on symbol table order.
	for _, order := range [][]symCand{cands, reversed(cands)} {
		st := newSymtab(append([]symCand(nil), order...))
		for _, c := range []struct {
			addr uint64
			want string
		}{
			{0x0fff, ""},
			{0x1000, "sized"},
			{0x101f, "sized"},
			{0x1020, ""}, // past the end of a sized symbol: padding, unknown
			{0x1040, "asm_zero"},
			{0x107f, "asm_zero"}, // zero size runs to the next symbol
			{0x1080, "__global_alias"},
			{0x108f, "__global_alias"},
			{0x1090, ""},
			{0x10a8, "malloc"},
			{0x10c0, "dup"},
			{0x1f7f, "last_zero"},
			{0x1f80, ""}, // and to the end of its section
			{0x2fff, ""},
			{math.MaxUint64 - 1, "no_section"},
		} {
			if got, _ := st.lookup(c.addr); got != c.want {
				t.Errorf("lookup(%#x) = %q, want %q", c.addr, got, c.want)
			}
		}
	}
}

func reversed(s []symCand) []symCand {
	r := make([]symCand, len(s))
	for i := range s {
		r[len(s)-1-i] = s[i]
	}
	return r
}

func TestFindBuildIDNote(t *testing.T) {
	le := []byte{
		4, 0, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 'X', 'Y', 'Z', 0, 1, 2, 3, 4, 5, 6, 7, 8, // other note
		4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xaa, 0xbb, 0xcc, 0, // build id, padded
	}
	if got := findBuildIDNote(le, 4, binary.LittleEndian); string(got) != "\xaa\xbb\xcc" {
		t.Errorf("build id %x", got)
	}
	for n := range le {
		findBuildIDNote(le[:n], 4, binary.LittleEndian) // truncated: must not panic
	}
}
