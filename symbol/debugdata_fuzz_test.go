package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"testing"
)

// FuzzDebugdata feeds malformed xz streams through the MiniDebugInfo path:
// unxz directly with a small limit, then as the .gnu_debugdata section of
// an ELF file that has no symbol table of its own, looking up every
// function the embedded symbol table yields. Nothing may panic or hang,
// and no output may pass the limit. Seeds (testdata/fuzz/FuzzDebugdata)
// are a real .gnu_debugdata and xz streams with each check type and with
// sized block headers; TestWriteFuzzSeeds makes them.
func FuzzDebugdata(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const limit = 1 << 16
		if out, ok := unxz(data, limit); ok && len(out) > limit {
			t.Fatalf("unxz returned %d bytes, limit %d", len(out), limit)
		}
		img := elfWithSection(".gnu_debugdata", data)
		mod := loadELF(bytes.NewReader(img), int64(len(img)), "", nil, true)
		for _, src := range mod.sources {
			st, ok := src.(symtab)
			if !ok {
				continue
			}
			for i, s := range st {
				if i == 64 {
					break
				}
				for _, a := range []uint64{s.start, s.end - 1} {
					fs := mod.frames(a, "fuzz", nil)
					if len(fs) != 1 || fs[0].Inlined || fs[0].Addr != a {
						t.Fatalf("frames(%#x) = %+v", a, fs)
					}
				}
			}
		}
	})
}

// elfWithSection returns a minimal little-endian ELF64 executable whose
// only contents are a section called name holding data (and the section
// name table).
func elfWithSection(name string, data []byte) []byte {
	le := binary.LittleEndian
	const ehsize, shentsize = 64, 64
	shstr := append([]byte("\x00.shstrtab\x00"), name+"\x00"...)
	dataOff := uint64(ehsize)
	strOff := dataOff + uint64(len(data))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7

	b := make([]byte, shOff, shOff+3*shentsize)
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	le.PutUint16(b[16:], uint16(elf.ET_DYN))
	le.PutUint16(b[18:], uint16(elf.EM_X86_64))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint64(b[40:], shOff)
	le.PutUint16(b[52:], ehsize)
	le.PutUint16(b[58:], shentsize)
	le.PutUint16(b[60:], 3) // shnum
	le.PutUint16(b[62:], 1) // shstrndx
	copy(b[dataOff:], data)
	copy(b[strOff:], shstr)

	sh := func(nameOff uint32, typ elf.SectionType, off, size uint64) {
		var h [shentsize]byte
		le.PutUint32(h[0:], nameOff)
		le.PutUint32(h[4:], uint32(typ))
		le.PutUint64(h[24:], off)
		le.PutUint64(h[32:], size)
		le.PutUint64(h[48:], 1) // addralign
		b = append(b, h[:]...)
	}
	sh(0, elf.SHT_NULL, 0, 0)
	sh(1, elf.SHT_STRTAB, strOff, uint64(len(shstr)))
	sh(uint32(len("\x00.shstrtab\x00")), elf.SHT_PROGBITS, dataOff, uint64(len(data)))
	return b
}

// TestElfWithSection checks the fuzz wrapper against debug/elf, and that a
// real MiniDebugInfo seed names functions through it.
func TestElfWithSection(t *testing.T) {
	img := elfWithSection(".gnu_debugdata", []byte("payload"))
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(".gnu_debugdata")
	if s == nil {
		t.Fatal("no .gnu_debugdata")
	}
	if data, _ := s.Data(); string(data) != "payload" {
		t.Fatalf("section holds %q", data)
	}
	seedData := seedFile(t, "FuzzDebugdata", "mini-debuginfo")
	img = elfWithSection(".gnu_debugdata", seedData)
	mod := loadELF(bytes.NewReader(img), int64(len(img)), "", nil, true)
	if len(mod.sources) == 0 {
		t.Fatal("the MiniDebugInfo seed yields no symbols")
	}
	st := mod.sources[len(mod.sources)-1].(symtab)
	if _, ok := st.lookup(st[0].start); !ok || !containsName(st, "leaf") {
		t.Errorf("symbols %v, want leaf among them", st)
	}
}

func containsName(st symtab, name string) bool {
	for _, s := range st {
		if s.name == name {
			return true
		}
	}
	return false
}
