package symbol

import "debug/elf"

// goFuncData returns go:func.* of f, the symbol that funcdata offsets (the
// inline trees among them) are relative to, from its start to the end of
// the section holding it, or nil. data is the pclntab, at address pcln.
//
// Go 1.26 places go:func.* inside the pclntab, which we hold already;
// Go 1.18 to 1.25 put it in .rodata, whose tail we copy, because the file
// is closed once the module is loaded.
func goFuncData(f *elf.File, syms []elf.Symbol, data []byte, pcln, ptr uint64, size int64) []byte {
	addr, ok := goFuncAddr(f, syms, data, pcln, ptr, size)
	if !ok {
		return nil
	}
	if addr >= pcln && addr-pcln < uint64(len(data)) {
		return data[addr-pcln:]
	}
	var end uint64
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_ALLOC != 0 && addr >= s.Addr && addr-s.Addr < s.Size {
			end = s.Addr + s.Size
			break
		}
	}
	if end == 0 {
		// No section headers: the segment's file data bounds it.
		for _, p := range f.Progs {
			if p.Type == elf.PT_LOAD && addr >= p.Vaddr && addr-p.Vaddr < p.Filesz {
				end = p.Vaddr + p.Filesz
				break
			}
		}
	}
	if end <= addr || end-addr > maxPclntab || int64(end-addr) > size {
		return nil
	}
	return readVaddr(f, addr, end-addr)
}

// goFuncAddr returns the address of go:func.*: its symbol, or in a
// stripped binary the runtime's pointer to it, moduledata.gofunc, at the
// place the pclntab's version implies.
func goFuncAddr(f *elf.File, syms []elf.Symbol, data []byte, pcln, ptr uint64, size int64) (uint64, bool) {
	for _, s := range syms {
		// Go 1.20 renamed go.func.* to go:func.*.
		if s.Name == "go:func.*" || s.Name == "go.func.*" {
			return s.Value, true
		}
	}
	// pcHeader, 6 slices, findfunctab, minpc, maxpc (22 words), text,
	// etext, noptrdata, enoptrdata, data, edata, bss, ebss, noptrbss,
	// enoptrbss, then from Go 1.20 covctrs, ecovctrs, then end, gcdata,
	// gcbss, types, etypes, rodata, gofunc.
	if len(data) < 4 || (ptr != 4 && ptr != 8) {
		return 0, false
	}
	var rodataField, gofuncField uint64
	switch f.ByteOrder.Uint32(data) {
	case pclntabMagic118:
		rodataField, gofuncField = 37, 38
	case pclntabMagic120:
		rodataField, gofuncField = 39, 40
	default:
		return 0, false
	}
	md := moduledata(f, pcln, ptr, size)
	if md == 0 {
		return 0, false
	}
	rodata, ok1 := moduledataWord(f, md, rodataField, ptr, size)
	gofunc, ok2 := moduledataWord(f, md, gofuncField, ptr, size)
	// go:func.* follows the start of read-only data in every layout so
	// far; a layout change that moved the field fails this more likely
	// than not, and costs inline frames rather than wrong ones.
	if !ok1 || !ok2 || gofunc == 0 || gofunc < rodata {
		return 0, false
	}
	return gofunc, true
}

// moduledataWord returns word i of the moduledata at md: as the file has
// it, or, where the file leaves it blank for the dynamic loader (PIE), as
// its relative relocation will set it.
func moduledataWord(f *elf.File, md, i, ptr uint64, size int64) (uint64, bool) {
	at := md + i*ptr
	if b := readVaddr(f, at, ptr); b != nil {
		var v uint64
		if ptr == 8 {
			v = f.ByteOrder.Uint64(b)
		} else {
			v = uint64(f.ByteOrder.Uint32(b))
		}
		if v != 0 {
			return v, true
		}
	}
	if _, v, ok := relativeReloc(f, size, func(off, _ uint64) bool { return off == at }); ok {
		return v, true
	}
	return 0, false
}
