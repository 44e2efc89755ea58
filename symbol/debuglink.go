package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// debugDirs are the roots searched for separate debug files, as gdb and
// perf do. A variable so tests can point it elsewhere.
var debugDirs = []string{"/usr/lib/debug"}

// debugFile is a separate debug ELF and the file under it.
type debugFile struct {
	*elf.File
	f    *os.File
	size int64
	path string // as open was given it
}

func (d *debugFile) Close() { d.f.Close() }

// findDebugFile finds the separate debug file of f (a binary at path): by
// build id under debugDirs/.build-id, then by .gnu_debuglink next to the
// binary, in its .debug/ subdirectory, and under debugDirs/<dir>. Only a
// file that has a .symtab or DWARF and provably belongs to f is returned:
// same build id, or, lacking build ids, the CRC the debuglink records.
func findDebugFile(f *elf.File, path string, id []byte, open func(string) (*os.File, error)) *debugFile {
	if len(id) >= 2 {
		h := hex.EncodeToString(id)
		for _, dir := range debugDirs {
			if d := openDebug(filepath.Join(dir, ".build-id", h[:2], h[2:]+".debug"), id, nil, open); d != nil {
				return d
			}
		}
	}
	name, crc, ok := debugLink(f)
	if !ok || path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
	for _, d := range debugDirs {
		cands = append(cands, filepath.Join(d, dir, name))
	}
	for _, c := range cands {
		if c == path {
			continue // a debuglink naming the binary itself
		}
		if d := openDebug(c, id, &crc, open); d != nil {
			return d
		}
	}
	return nil
}

// openDebug opens a candidate debug file and checks it matches: by build id
// when both have one, else by crc (when given).
func openDebug(path string, id []byte, crc *uint32, open func(string) (*os.File, error)) *debugFile {
	file, err := open(path)
	if err != nil {
		return nil
	}
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() {
		file.Close()
		return nil
	}
	ef, err := elf.NewFile(file)
	if err != nil || (ef.Section(".symtab") == nil && !hasDWARF(ef)) {
		file.Close()
		return nil
	}
	d := &debugFile{ef, file, st.Size(), path}
	did := buildID(ef)
	switch {
	case len(id) > 0 && len(did) > 0:
		if !bytes.Equal(id, did) {
			d.Close()
			return nil
		}
	case crc != nil:
		h := crc32.NewIEEE()
		if _, err := io.Copy(h, io.NewSectionReader(file, 0, 1<<62)); err != nil || h.Sum32() != *crc {
			d.Close()
			return nil
		}
	default:
		d.Close()
		return nil
	}
	return d
}

// debugLink reads .gnu_debuglink: a NUL-terminated file name, padding to 4
// bytes, and the CRC-32 of the debug file.
func debugLink(f *elf.File) (name string, crc uint32, ok bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size > 4096 {
		return "", 0, false
	}
	data, err := s.Data()
	if err != nil {
		return "", 0, false
	}
	n := bytes.IndexByte(data, 0)
	if n <= 0 {
		return "", 0, false
	}
	off := (n + 4) &^ 3
	if off+4 > len(data) {
		return "", 0, false
	}
	name = string(data[:n])
	if filepath.Base(name) != name || name == "." || name == ".." {
		return "", 0, false // a file name, never a path
	}
	return name, f.ByteOrder.Uint32(data[off:]), true
}

// buildID returns the NT_GNU_BUILD_ID note of f, from its note sections or,
// when section headers are missing, its PT_NOTE segments.
func buildID(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 1<<16 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		if id := findBuildIDNote(data, s.Addralign, f.ByteOrder); id != nil {
			return id
		}
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<16 {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		if id := findBuildIDNote(data, p.Align, f.ByteOrder); id != nil {
			return id
		}
	}
	return nil
}

const ntGNUBuildID = 3

// findBuildIDNote walks ELF notes: namesz, descsz, type, then name and desc,
// each padded to the note alignment (4, or 8 for some 64-bit notes).
func findBuildIDNote(data []byte, align uint64, order binary.ByteOrder) []byte {
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	up := func(n uint64) uint64 { return (n + pad - 1) &^ (pad - 1) }
	for uint64(len(data)) >= 12 {
		namesz := uint64(order.Uint32(data))
		descsz := uint64(order.Uint32(data[4:]))
		typ := order.Uint32(data[8:])
		rest := uint64(len(data)) - 12
		nameEnd := up(namesz)
		if nameEnd < namesz || nameEnd > rest {
			return nil
		}
		descEnd := nameEnd + up(descsz)
		if descEnd < nameEnd || up(descsz) < descsz || nameEnd+descsz > rest {
			return nil
		}
		body := data[12:]
		if typ == ntGNUBuildID && namesz == 4 && string(body[:4]) == "GNU\x00" && descsz > 0 {
			return bytes.Clone(body[nameEnd : nameEnd+descsz])
		}
		if descEnd > rest {
			return nil
		}
		data = body[descEnd:]
	}
	return nil
}

// goNoteType is the type of the note that holds a Go binary's build ID,
// owned by "Go" (cmd/link's ELF_NOTE_GOBUILDID_TAG).
const goNoteType = 4

// goBuildID returns the build ID the Go linker writes into
// .note.go.buildid, "" when f has none.
func goBuildID(f *elf.File) string {
	s := f.Section(".note.go.buildid")
	if s == nil || s.Size > 4096 {
		return ""
	}
	data, err := s.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	namesz, descsz, typ := f.ByteOrder.Uint32(data), f.ByteOrder.Uint32(data[4:]), f.ByteOrder.Uint32(data[8:])
	if namesz != 4 || typ != goNoteType || string(data[12:15]) != "Go\x00" || uint64(descsz) > uint64(len(data)-16) {
		return ""
	}
	return string(data[16 : 16+descsz])
}
