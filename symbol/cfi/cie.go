package cfi

// cie holds what the FDEs of one Common Information Entry share.
type cie struct {
	codeAlign   uint64
	dataAlign   int64
	ra          uint64 // column holding the return address
	ins, insEnd uint32 // initial instructions, as offsets in Table.buf
	enc         uint8  // encoding of the FDEs' pc_begin and pc_range ('R')
	addrSize    uint8
	segSize     uint8
	aug         bool  // 'z': FDEs carry augmentation data behind a length
	signal      bool  // 'S': the FDEs describe signal trampolines
	sect        uint8 // index into Table.sects
}

// Alignment factors far beyond any real target's (x86-64 uses 1 and -8)
// only serve to overflow offset arithmetic, so such CIEs are refused.
const maxAlign = 1 << 16

// parseCIE parses the CIE at off in section s. It reports false for
// anything whose instructions cannot be located or trusted, which drops
// every FDE that names the CIE.
func parseCIE(s *section, si uint8, off int, addrSize uint8) (cie, bool) {
	var c cie
	e, st := readEntry(s.data, off, s.debug)
	if st != entryOK || !e.isCIE(s.debug) {
		return c, false
	}
	r := reader{b: s.data[:e.end], pos: e.body}
	version := r.u8()
	if version != 1 && version != 3 && version != 4 {
		return c, false
	}
	aug := r.cstring()
	c.addrSize = addrSize
	c.enc = peAbsptr
	if len(aug) >= 2 && aug[0] == 'e' && aug[1] == 'h' {
		// Pre-"z" GCC: a pointer to exception data follows the string.
		r.skip(uint64(addrSize))
	}
	if version >= 4 {
		c.addrSize = r.u8()
		c.segSize = r.u8()
		if (c.addrSize != 4 && c.addrSize != 8) || c.segSize > 8 {
			return c, false
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.ra = uint64(r.u8())
	} else {
		c.ra = r.uleb()
	}
	if c.codeAlign > maxAlign || c.dataAlign > maxAlign || c.dataAlign < -maxAlign {
		return c, false
	}
	switch {
	case len(aug) > 0 && aug[0] == 'z':
		c.aug = true
		n := r.uleb()
		if !r.need(n) {
			return c, false
		}
		end := r.pos + int(n)
		ar := reader{b: r.b[:end], pos: r.pos}
		b := bases{pc: s.vaddr}
	chars:
		for _, ch := range aug[1:] {
			switch ch {
			case 'R':
				c.enc = ar.u8()
			case 'P':
				// Only the size matters: unwinding never calls the
				// personality routine.
				enc := ar.u8()
				ar.ptr(enc&^peIndirect, c.addrSize, &b)
			case 'L':
				ar.u8()
			case 'S':
				c.signal = true
			case 'B', 'G':
				// AArch64 branch protection and memory tagging: no data.
			default:
				// The data length still says where instructions start.
				break chars
			}
		}
		if ar.bad {
			return c, false
		}
		r.pos = end
	case len(aug) == 0, string(aug) == "eh":
	default:
		// An augmentation without 'z' has data of unknown size in front
		// of the instructions.
		return c, false
	}
	if r.bad {
		return c, false
	}
	c.ins = s.start + uint32(r.pos)
	c.insEnd = s.start + uint32(e.end)
	c.sect = si
	return c, true
}
