package symbol

import (
	"bytes"
	"debug/elf"
	"io"
)

// Finding one function by name in a file's .symtab without reading the
// table into symbols: automatic counting looks its candidates up every few
// seconds, and elf.File.Symbols made a string and a struct of every symbol
// each time (megabytes of garbage for a large binary, most of the live
// view's collections). Two passes over the raw bytes through one small
// buffer: the string table for every place the name ends with its NUL
// (linkers merge a name into the tail of a longer one, so not only where
// a string starts), then the symbols for a function whose name is at one
// of those places.

// scanChunk is the read size of the scans.
const scanChunk = 64 << 10

// funcBySymtabScan looks name up in f's .symtab as funcByName does (a
// defined FUNC or IFUNC symbol); found says whether the file has a
// .symtab and string table to scan at all.
func funcBySymtabScan(f *elf.File, r io.ReaderAt, name string) (vaddr uint64, ok, scanned bool) {
	symtab := f.Section(".symtab")
	if symtab == nil || symtab.Type != elf.SHT_SYMTAB || int(symtab.Link) >= len(f.Sections) || name == "" {
		return 0, false, false
	}
	strtab := f.Sections[symtab.Link]
	if strtab.Type != elf.SHT_STRTAB || symtab.Flags&elf.SHF_COMPRESSED != 0 || strtab.Flags&elf.SHF_COMPRESSED != 0 {
		return 0, false, false
	}
	entSize := uint64(24)
	if f.Class == elf.ELFCLASS32 {
		entSize = 16
	}
	buf := make([]byte, scanChunk)
	needle := append([]byte(name), 0)
	offs := stringOffsets(r, strtab.Offset, strtab.Size, needle, buf)
	if len(offs) == 0 {
		return 0, false, true
	}
	per := uint64(len(buf)) / entSize * entSize
	for base := uint64(0); base < symtab.Size; base += per {
		n := min(per, symtab.Size-base)
		n -= n % entSize
		if n == 0 {
			break
		}
		got, err := r.ReadAt(buf[:n], int64(symtab.Offset+base))
		if got < int(n) && err != nil {
			return 0, false, true
		}
		for e := uint64(0); e+entSize <= n; e += entSize {
			ent := buf[e : e+entSize]
			var nameOff uint32
			var info byte
			var shndx uint16
			var value uint64
			if entSize == 24 {
				nameOff = f.ByteOrder.Uint32(ent)
				info = ent[4]
				shndx = f.ByteOrder.Uint16(ent[6:])
				value = f.ByteOrder.Uint64(ent[8:])
			} else {
				nameOff = f.ByteOrder.Uint32(ent)
				value = uint64(f.ByteOrder.Uint32(ent[4:]))
				info = ent[12]
				shndx = f.ByteOrder.Uint16(ent[14:])
			}
			t := elf.SymType(info & 0xf)
			if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || shndx == uint16(elf.SHN_UNDEF) || shndx >= uint16(elf.SHN_LORESERVE) {
				continue
			}
			for _, o := range offs {
				if o == uint64(nameOff) {
					return value, true, true
				}
			}
		}
	}
	return 0, false, true
}

// stringOffsets is where needle (a name and its NUL) starts in the string
// table at off, size bytes long, read through buf; at most a few places.
func stringOffsets(r io.ReaderAt, off, size uint64, needle, buf []byte) []uint64 {
	var out []uint64
	if len(needle) > len(buf)/2 {
		return nil
	}
	// Each read overlaps the last by len(needle)-1 bytes, so that a name
	// across two reads is found, once.
	step := uint64(len(buf) - len(needle) + 1)
	for pos := uint64(0); pos < size; pos += step {
		n := min(uint64(len(buf)), size-pos)
		got, err := r.ReadAt(buf[:n], int64(off+pos))
		if got < int(n) && err != nil {
			return out
		}
		chunk := buf[:n]
		for i := 0; ; {
			j := bytes.Index(chunk[i:], needle)
			if j < 0 {
				break
			}
			at := pos + uint64(i+j)
			if len(out) == 0 || out[len(out)-1] != at {
				out = append(out, at)
			}
			if len(out) == 8 {
				return out
			}
			i += j + 1
		}
		if n < uint64(len(buf)) {
			break
		}
	}
	return out
}
