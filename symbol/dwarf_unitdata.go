package symbol

import (
	"debug/dwarf"
	"encoding/binary"
	"slices"
)

// debug/dwarf's New parses the abbreviation table of every unit of the
// section before it decodes anything: for libc's separate debug file,
// 2,063 tables and 11.8 MB of maps, most of them for units no profile
// reaches. Here each unit is decoded by a Data of its own, made over the
// section up to the unit's end, whose first bytes are for that moment the
// header of one unit spanning everything before it, with an empty
// abbreviation table (the zero byte appended to .debug_abbrev). The
// offsets stay the section's, so DIE references, line tables and range
// lists read as they would with one Data for the file; only the unit's
// own abbreviations are parsed. The original bytes are put back before
// New returns, and the units before it are never read through this Data.

// decodedUnits is how many units' Data a source keeps: a lookup parses
// one unit and resolves its names, and a name's references seldom leave
// it.
const decodedUnits = 8

type unitData struct {
	unit int // index in units, with d != nil
	d    *dwarf.Data
}

// fakeHeader is the size of the DWARF 4 unit header written over the
// section's start: unit_length (4), version (2), debug_abbrev_offset (4),
// address_size (1). Every unit header is at least that long, so the bytes
// overwritten are the first unit's header, which no entry decodes.
const fakeHeader = 11

// unitData returns the Data that decodes unit i, nil if it cannot.
func (s *dwarfSource) unitData(i int) *dwarf.Data {
	if i < 0 || i >= len(s.units) || !s.awake() {
		return nil
	}
	for _, c := range s.decoded {
		if c.d != nil && c.unit == i {
			return c.d
		}
	}
	d := s.newUnitData(i)
	if d != nil {
		s.decoded[s.nextDec] = unitData{unit: i, d: d}
		s.nextDec = (s.nextDec + 1) % decodedUnits
	}
	return d
}

// newUnitData makes unit i's Data (see above).
func (s *dwarfSource) newUnitData(i int) (d *dwarf.Data) {
	u := s.units[i]
	info := s.secs.info[:u.end]
	if base := int(u.base); base > 0 {
		if base < fakeHeader || uint64(base)-4 >= 0xfffffff0 {
			return nil
		}
		var saved [fakeHeader]byte
		copy(saved[:], info)
		defer func() { copy(info, saved[:]) }()
		s.order.PutUint32(info[0:], uint32(base-4))
		s.order.PutUint16(info[4:], 4)
		s.order.PutUint32(info[6:], uint32(len(s.secs.abbrev)-1))
		info[10] = 8
	}
	defer func() {
		if recover() != nil {
			d = nil
		}
	}()
	d, err := dwarf.New(s.secs.abbrev, nil, nil, info, s.secs.line, nil, s.secs.ranges, s.secs.str)
	if err != nil {
		return nil
	}
	for n, sec := range s.secs.extra {
		if err := d.AddSection(".debug_"+n, sec); err != nil {
			return nil
		}
	}
	return d
}

// unitOf is the index of the unit holding the DIE at off, -1 for none.
func (s *dwarfSource) unitOf(off dwarf.Offset) int {
	i, _ := slices.BinarySearchFunc(s.units, off, func(u dwarfUnit, o dwarf.Offset) int {
		if u.base <= o {
			return -1
		}
		return 1
	})
	if i == 0 || off >= s.units[i-1].end {
		return -1
	}
	return i - 1
}

// listUnits walks the unit headers of .debug_info. A header it cannot
// read ends the list: the units before it still name their code.
func listUnits(info []byte, order binary.ByteOrder) []dwarfUnit {
	var units []dwarfUnit
	for off := uint64(0); uint64(len(info))-off >= 4; {
		length := uint64(order.Uint32(info[off:]))
		hdr := uint64(4)
		if length == 0xffffffff {
			if uint64(len(info))-off < 12 {
				break
			}
			length, hdr = order.Uint64(info[off+4:]), 12
		} else if length >= 0xfffffff0 {
			break // reserved
		}
		if length > uint64(len(info))-off-hdr {
			break
		}
		end := off + hdr + length
		if length > 0 {
			die, ok := unitDIEOffset(info, off, order)
			if !ok || uint64(die) >= end {
				break
			}
			units = append(units, dwarfUnit{base: dwarf.Offset(off), end: dwarf.Offset(end), off: die})
		}
		off = end
	}
	return slices.Clip(units)
}
