// Package elftest makes broken ELF files for the tests of what reads
// them: the symbol package's and the command line's, which cannot share
// internal/testutil (it imports symbol).
package elftest

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"slices"
	"testing"
)

// PatchSectionSize copies the ELF64 file src to dst with section name's
// sh_size set to size: debug info cut short, as a truncated download or a
// broken build leaves it.
func PatchSectionSize(t testing.TB, src, dst, name string, size uint64) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	shoff := binary.LittleEndian.Uint64(b[0x28:])
	shentsize := uint64(binary.LittleEndian.Uint16(b[0x3a:]))
	i := slices.IndexFunc(f.Sections, func(s *elf.Section) bool { return s.Name == name })
	if i < 0 {
		t.Fatalf("%s has no %s", src, name)
	}
	binary.LittleEndian.PutUint64(b[shoff+uint64(i)*shentsize+32:], size)
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
