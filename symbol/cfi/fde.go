package cfi

// fde is one indexed Frame Description Entry: the pc range it covers and
// where its instructions are.
type fde struct {
	begin, end  uint64
	maxEnd      uint64 // largest end among this and all earlier FDEs (in sorted order)
	ins, insEnd uint32 // offsets in Table.buf
	cie         uint32 // index into Table.cies
	sect        uint8  // index into Table.sects, to order duplicates
}

// parseFDE parses the FDE whose header is e, described by c.
func parseFDE(s *section, e *entry, c *cie, b *bases) (fde, bool) {
	var f fde
	if c.enc == peOmit || c.enc&peIndirect != 0 {
		// An indirect pc_begin would need the process's memory.
		return f, false
	}
	r := reader{b: s.data[:e.end], pos: e.body}
	r.skip(uint64(c.segSize))
	begin := r.ptr(c.enc, c.addrSize, b)
	size := r.ptr(c.enc&0x0f, c.addrSize, b)
	if c.aug {
		r.skip(r.uleb())
	}
	end := begin + size
	if r.bad || size == 0 || end < begin {
		return f, false
	}
	f.begin, f.end = begin, end
	f.ins = s.start + uint32(r.pos)
	f.insEnd = s.start + uint32(e.end)
	return f, true
}
