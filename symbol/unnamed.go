package symbol

import (
	"path/filepath"
	"strconv"
	"strings"
)

// An address of a mapped file that no source names is still a place in
// that file. It is named "[module+0xOFFSET]": module is the file's base
// name and OFFSET a file offset, the one coordinate that does not depend
// on where the file was loaded or how it was linked (PIE or not). A user
// with the binary turns it into the address objdump and addr2line take
// with the program headers (readelf -lW: vaddr = offset - p_offset +
// p_vaddr of the PT_LOAD holding it).
//
// One name per address would split a stripped function into as many tree
// nodes as it has sampled instructions. The CFI knows where functions
// start without symbols (one FDE per function, or per hot and cold part),
// so the offset is that of the start of the FDE covering the pc; only a pc
// that no FDE covers is named by its own offset.

// unnamed returns the frame of an address that no source of mod names, or
// nil for a module without a file name (the vdso).
func (mod *module) unnamed(addr uint64) []Frame {
	if mod.base == "" {
		return nil
	}
	start := addr
	if u := mod.unwind; u != nil && u.cfi != nil {
		if s, ok := u.cfi.FuncStart(addr); ok {
			start = s
		}
	}
	off, ok := fileOffset(mod.segs, start)
	if !ok {
		if off, ok = fileOffset(mod.segs, addr); !ok {
			return nil
		}
	}
	return []Frame{{Func: unnamedName(mod.base, off), Unnamed: true}}
}

// rename gives an unnamed frame's name the base name of path, for a module
// shared by files of different names (same build id): the name says which
// file the offset is in.
func (mod *module) rename(name, path string) string {
	base := ModuleBase(path)
	if base == mod.base || len(name) < len(mod.base)+1 {
		return name
	}
	return "[" + base + name[1+len(mod.base):]
}

// outside names a file offset that no PT_LOAD segment holds. Such pcs have
// no module-relative address to cache by, so their names are kept apart.
func (mod *module) outside(off uint64, path string) Frame {
	f := Frame{Module: path, Addr: off}
	if mod.base == "" {
		return f
	}
	if mod.offNames == nil {
		mod.offNames = make(map[uint64]string)
	}
	name, ok := mod.offNames[off]
	if !ok {
		if len(mod.offNames) >= mod.acct.maxAddrs() {
			// A new map, not clear: see module.frames.
			mod.acct.add(-mod.offBytes)
			mod.offNames, mod.offBytes = make(map[uint64]string), 0
		}
		name = unnamedName(mod.base, off)
		mod.offNames[off] = name
		n := nameEntry + int64(len(name))
		mod.offBytes += n
		mod.acct.add(n)
	}
	f.Func, f.Unnamed = mod.rename(name, path), true
	return f
}

func unnamedName(base string, off uint64) string {
	return "[" + base + "+0x" + strconv.FormatUint(off, 16) + "]"
}

// ModuleBase is the name a mapped file goes by: in unnamed frames, and
// where cctop reports stacks stopping.
func ModuleBase(path string) string {
	return filepath.Base(strings.TrimSuffix(path, " (deleted)"))
}

// fileOffset is the file offset of a module-relative address: the inverse
// of offsetToVaddr, with the same preferences. Without program headers
// addresses are offsets.
func fileOffset(segs []segment, vaddr uint64) (uint64, bool) {
	if len(segs) == 0 {
		return vaddr, true
	}
	for _, s := range segs {
		if s.exec && vaddr >= s.vaddr && vaddr-s.vaddr < s.filesz {
			return vaddr - s.vaddr + s.off, true
		}
	}
	if off, ok := vaddrToOffset(segs, vaddr); ok {
		return off, true
	}
	for _, s := range segs {
		// The bytes between a page boundary and p_offset, mapped with
		// the segment.
		if head := s.off & (pageSize - 1); vaddr < s.vaddr && s.vaddr-vaddr <= head {
			return s.off - (s.vaddr - vaddr), true
		}
	}
	return 0, false
}
