package symbol

import "debug/elf"

// segment is the part of a PT_LOAD program header that address translation
// needs.
type segment struct {
	off, vaddr, filesz uint64
	exec               bool
}

// pageSize is the granularity at which the kernel maps segments on amd64;
// the bytes between a page boundary and p_offset are mapped with the
// segment even though the header does not cover them.
const pageSize = 4096

func loadSegments(progs []*elf.Prog) []segment {
	var segs []segment
	for _, p := range progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		segs = append(segs, segment{off: p.Off, vaddr: p.Vaddr, filesz: p.Filesz, exec: p.Flags&elf.PF_X != 0})
	}
	return segs
}

// offsetToVaddr maps a file offset to the virtual address the binary was
// linked at: vaddr = off - p_offset + p_vaddr for the PT_LOAD holding off.
// Going through the file offset, rather than subtracting a load bias, is
// what makes one rule work for non-PIE executables (vaddr = pc), PIE and
// shared libraries (bias from the mapping), and text segments whose offset
// differs from their address.
//
// An executable segment wins over another that claims the same offset, then
// any segment containing it exactly, then one whose page-rounded start
// covers it. Without program headers (nothing parsed) the offset is the
// best module-relative address there is.
func offsetToVaddr(segs []segment, off uint64) (uint64, bool) {
	if len(segs) == 0 {
		return off, true
	}
	for _, s := range segs {
		if s.exec && off >= s.off && off-s.off < s.filesz {
			return off - s.off + s.vaddr, true
		}
	}
	for _, s := range segs {
		if off >= s.off && off-s.off < s.filesz {
			return off - s.off + s.vaddr, true
		}
	}
	for _, s := range segs {
		if lo := s.off &^ (pageSize - 1); off >= lo && off < s.off {
			return s.vaddr - (s.off - off), true
		}
	}
	return 0, false
}

// vaddrToOffset is the inverse, used to turn a symbol into a uprobe offset.
func vaddrToOffset(segs []segment, vaddr uint64) (uint64, bool) {
	for _, s := range segs {
		if vaddr >= s.vaddr && vaddr-s.vaddr < s.filesz {
			return vaddr - s.vaddr + s.off, true
		}
	}
	return 0, false
}
