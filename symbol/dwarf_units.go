package symbol

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"slices"
)

// unitRange says that [lo, hi) belongs to unit (an index into units).
// reach is the largest hi of this range and all ranges sorted before it,
// which lets a lookup stop scanning back once nothing earlier can cover
// the address.
type unitRange struct {
	lo, hi, reach uint64
	unit          int
}

// maxUnitsPerAddr bounds how many overlapping units a lookup tries, and
// maxUnitScan how many index entries it walks back to find them: real
// units are disjoint, and corrupt ones must not make a lookup linear.
const (
	maxUnitsPerAddr = 4
	maxUnitScan     = 64
)

// indexUnits lists the compilation units and builds the address index:
// from .debug_aranges for the units it lists (one table for the whole
// file, no DIE decoding), and from each remaining unit's DW_AT_low_pc,
// DW_AT_high_pc and DW_AT_ranges. Producers that write no aranges (clang
// by default) and assembly units that GCC leaves out of them are still
// covered that way.
func (s *dwarfSource) indexUnits(aranges []byte, order binary.ByteOrder) {
	info := s.secs.info
	byOff := make(map[dwarf.Offset]int, len(s.units))
	for i, u := range s.units {
		byOff[u.off] = i
	}
	covered := make([]bool, len(s.units))
	add := func(lo, hi uint64, unit int) {
		// Address 0 and all-ones are what linkers write for the ranges of
		// discarded functions (--gc-sections, COMDAT folding); a linked
		// executable or library has no code there.
		if lo == 0 || hi <= lo || lo == ^uint64(0) {
			return
		}
		s.index = append(s.index, unitRange{lo: lo, hi: hi, unit: unit})
	}
	parseAranges(aranges, order, func(unitOff, lo, hi uint64) {
		off, ok := unitDIEOffset(info, unitOff, order)
		if !ok {
			return
		}
		if i, ok := byOff[off]; ok {
			covered[i] = true
			add(lo, hi, i)
		}
	})
	for i, u := range s.units {
		if covered[i] {
			continue
		}
		d := s.unitData(i)
		if d == nil {
			continue
		}
		r := d.Reader()
		r.Seek(u.off)
		e, err := r.Next()
		if err != nil || e == nil || e.Tag != dwarf.TagCompileUnit {
			continue
		}
		rs, _ := d.Ranges(e)
		for _, r := range rs {
			add(r[0], r[1], i)
		}
	}
	slices.SortFunc(s.index, func(a, b unitRange) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(a.hi, b.hi)
	})
	var reach uint64
	for i := range s.index {
		reach = max(reach, s.index[i].hi)
		s.index[i].reach = reach
	}
	s.index = slices.Clip(s.index)
}

// unitsAt appends to dst the units whose ranges cover addr, nearest start
// first, at most maxUnitsPerAddr of them.
func (s *dwarfSource) unitsAt(addr uint64, dst []int) []int {
	idx := s.index
	i, _ := slices.BinarySearchFunc(idx, addr, func(r unitRange, a uint64) int {
		if r.lo <= a {
			return -1
		}
		return 1
	})
	// idx[:i] start at or before addr.
	for j := i - 1; j >= 0 && i-j <= maxUnitScan && len(dst) < maxUnitsPerAddr; j-- {
		r := idx[j]
		if r.reach <= addr {
			break
		}
		if addr < r.hi && !slices.Contains(dst, r.unit) {
			dst = append(dst, r.unit)
		}
	}
	return dst
}

// parseAranges calls fn for every address range in a .debug_aranges
// section: sets of (unit header offset, address size), then (address,
// length) tuples aligned to twice the address size, ending in (0, 0).
// Anything malformed ends the walk; the units it did not reach are indexed
// from their DIEs instead.
func parseAranges(data []byte, order binary.ByteOrder, fn func(unitOff, lo, hi uint64)) {
	for off := 0; len(data)-off >= 4; {
		start := off
		length := uint64(order.Uint32(data[off:]))
		off += 4
		ofsz := 4
		if length == 0xffffffff {
			if len(data)-off < 8 {
				return
			}
			length = order.Uint64(data[off:])
			off += 8
			ofsz = 8
		} else if length >= 0xfffffff0 {
			return // reserved
		}
		if length > uint64(len(data)-off) {
			return
		}
		end := off + int(length)
		if end-off < 2+ofsz+2 {
			return
		}
		var unitOff uint64
		if ofsz == 8 {
			unitOff = order.Uint64(data[off+2:])
		} else {
			unitOff = uint64(order.Uint32(data[off+2:]))
		}
		asize := int(data[off+2+ofsz])
		segsize := data[off+2+ofsz+1]
		if (asize == 4 || asize == 8) && segsize == 0 {
			tuple := 2 * asize
			hdr := off + 2 + ofsz + 2 - start
			p := start + (hdr+tuple-1)/tuple*tuple
			for ; end-p >= tuple; p += tuple {
				var lo, n uint64
				if asize == 8 {
					lo, n = order.Uint64(data[p:]), order.Uint64(data[p+8:])
				} else {
					lo, n = uint64(order.Uint32(data[p:])), uint64(order.Uint32(data[p+4:]))
				}
				if lo == 0 && n == 0 {
					break
				}
				if lo+n > lo {
					fn(unitOff, lo, lo+n)
				}
			}
		}
		off = end
	}
}

// unitDIEOffset returns the offset of the first DIE of the unit whose
// header is at off in .debug_info: .debug_aranges names units by header,
// debug/dwarf by DIE.
func unitDIEOffset(info []byte, off uint64, order binary.ByteOrder) (dwarf.Offset, bool) {
	if off > uint64(len(info)) || uint64(len(info))-off < 4 {
		return 0, false
	}
	p := off + 4
	ofsz := uint64(4)
	if order.Uint32(info[off:]) == 0xffffffff {
		p, ofsz = off+12, 8
	}
	if p+2 > uint64(len(info)) {
		return 0, false
	}
	switch v := order.Uint16(info[p:]); {
	case v >= 2 && v <= 4:
		p += 2 + ofsz + 1 // version, abbrev offset, address size
	case v == 5:
		if p+3 > uint64(len(info)) {
			return 0, false
		}
		const (
			utType         = 2
			utSkeleton     = 4
			utSplitCompile = 5
			utSplitType    = 6
		)
		ut := info[p+2]
		p += 2 + 1 + 1 + ofsz // version, unit type, address size, abbrev offset
		switch ut {
		case utSkeleton, utSplitCompile:
			p += 8 // dwo id
		case utType, utSplitType:
			p += 8 + ofsz // type signature, type offset
		}
	default:
		return 0, false
	}
	return dwarf.Offset(p), true
}
