package cfi

import "encoding/binary"

// Helpers that assemble CFI sections byte by byte for the unit tests. They
// are written from the LSB and DWARF descriptions independently of the
// parser, so the two check each other.

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// encodePtr writes v in pointer encoding enc for a field at address at.
func encodePtr(enc byte, v, at, text, data uint64) []byte {
	switch enc & 0x70 {
	case pePcrel:
		v -= at
	case peTextrel:
		v -= text
	case peDatarel:
		v -= data
	}
	switch enc & 0x0f {
	case peAbsptr, peUdata8, peSdata8:
		return le64(v)
	case peUleb128:
		return uleb(v)
	case peUdata2, peSdata2:
		return le16(uint16(v))
	case peUdata4, peSdata4:
		return le32(uint32(v))
	case peSleb128:
		return sleb(int64(v))
	}
	panic("test helper: unsupported encoding")
}

// frames builds one section. vaddr is its address (for pcrel); debug
// selects the .debug_frame layout; dwarf64 the 64-bit length escape.
type frames struct {
	b          []byte
	vaddr      uint64
	debug      bool
	dwarf64    bool
	text, data uint64
}

func (f *frames) entry(id uint64, body []byte) int {
	off := len(f.b)
	idSize := 4
	if f.dwarf64 {
		idSize = 8
	}
	n := uint64(idSize + len(body))
	if f.dwarf64 {
		f.b = append(f.b, le32(0xffffffff)...)
		f.b = append(f.b, le64(n)...)
		f.b = append(f.b, le64(id)...)
	} else {
		f.b = append(f.b, le32(uint32(n))...)
		f.b = append(f.b, le32(uint32(id))...)
	}
	f.b = append(f.b, body...)
	return off
}

// cieSpec describes a CIE.
type cieSpec struct {
	version   byte // 1, 3 or 4; 0 means 1
	aug       string
	addrSize  byte // version 4
	segSize   byte // version 4
	codeAlign uint64
	dataAlign int64
	ra        uint64
	augData   []byte
	ins       []byte
}

func (f *frames) cie(c cieSpec) int {
	if c.version == 0 {
		c.version = 1
	}
	body := []byte{c.version}
	body = append(body, c.aug...)
	body = append(body, 0)
	eh := c.aug == "eh"
	if eh {
		// The exception data pointer comes right after the string.
		body = append(body, c.augData...)
	}
	if c.version >= 4 {
		body = append(body, c.addrSize, c.segSize)
	}
	body = append(body, uleb(c.codeAlign)...)
	body = append(body, sleb(c.dataAlign)...)
	if c.version == 1 {
		body = append(body, byte(c.ra))
	} else {
		body = append(body, uleb(c.ra)...)
	}
	if len(c.aug) > 0 && c.aug[0] == 'z' {
		body = append(body, uleb(uint64(len(c.augData)))...)
	}
	if !eh {
		body = append(body, c.augData...)
	}
	body = append(body, c.ins...)
	id := uint64(0)
	if f.debug {
		id = 0xffffffff
		if f.dwarf64 {
			id = ^uint64(0)
		}
	}
	return f.entry(id, body)
}

// fde appends an FDE for [begin, begin+size) under the CIE at cieOff.
// enc is the CIE's 'R' encoding (absptr in .debug_frame); augData, when
// not nil, is written behind its length as 'z' CIEs require.
func (f *frames) fde(cieOff int, enc byte, begin, size uint64, augData []byte, ins ...byte) int {
	hdr := 8
	if f.dwarf64 {
		hdr = 20
	}
	at := f.vaddr + uint64(len(f.b)+hdr)
	body := encodePtr(enc, begin, at, f.text, f.data)
	body = append(body, encodePtr(enc&0x0f, size, 0, 0, 0)...)
	if augData != nil {
		body = append(body, uleb(uint64(len(augData)))...)
		body = append(body, augData...)
	}
	body = append(body, ins...)
	id := uint64(cieOff)
	if !f.debug {
		id = uint64(len(f.b) + hdr - 4 - cieOff)
	}
	return f.entry(id, body)
}

// Instruction builders, named after the DW_CFA_ opcodes.
func defCFA(reg, off uint64) []byte { return cat([]byte{cfaDefCFA}, uleb(reg), uleb(off)) }
func defCFASf(reg uint64, off int64) []byte {
	return cat([]byte{cfaDefCFASf}, uleb(reg), sleb(off))
}
func defCFAOffset(off uint64) []byte     { return cat([]byte{cfaDefCFAOffset}, uleb(off)) }
func defCFAOffsetSf(off int64) []byte    { return cat([]byte{cfaDefCFAOffsetSf}, sleb(off)) }
func defCFARegister(reg uint64) []byte   { return cat([]byte{cfaDefCFARegister}, uleb(reg)) }
func offset(reg byte, off uint64) []byte { return cat([]byte{cfaOffset | reg}, uleb(off)) }
func offsetExt(reg, off uint64) []byte   { return cat([]byte{cfaOffsetExtended}, uleb(reg), uleb(off)) }
func offsetExtSf(reg uint64, off int64) []byte {
	return cat([]byte{cfaOffsetExtendedSf}, uleb(reg), sleb(off))
}
func valOffset(reg, off uint64) []byte { return cat([]byte{cfaValOffset}, uleb(reg), uleb(off)) }
func valOffsetSf(reg uint64, off int64) []byte {
	return cat([]byte{cfaValOffsetSf}, uleb(reg), sleb(off))
}
func negOffsetExt(reg, off uint64) []byte {
	return cat([]byte{cfaGNUNegativeOffsetExtended}, uleb(reg), uleb(off))
}
func advance(d byte) []byte           { return []byte{cfaAdvanceLoc | d} }
func advance1(d byte) []byte          { return []byte{cfaAdvanceLoc1, d} }
func advance2(d uint16) []byte        { return cat([]byte{cfaAdvanceLoc2}, le16(d)) }
func advance4(d uint32) []byte        { return cat([]byte{cfaAdvanceLoc4}, le32(d)) }
func restore(reg byte) []byte         { return []byte{cfaRestore | reg} }
func restoreExt(reg uint64) []byte    { return cat([]byte{cfaRestoreExtended}, uleb(reg)) }
func undefined(reg uint64) []byte     { return cat([]byte{cfaUndefined}, uleb(reg)) }
func sameValue(reg uint64) []byte     { return cat([]byte{cfaSameValue}, uleb(reg)) }
func register(reg, src uint64) []byte { return cat([]byte{cfaRegister}, uleb(reg), uleb(src)) }
func argsSize(n uint64) []byte        { return cat([]byte{cfaGNUArgsSize}, uleb(n)) }
func defCFAExpr(e []byte) []byte {
	return cat([]byte{cfaDefCFAExpression}, uleb(uint64(len(e))), e)
}
func expression(reg uint64, e []byte) []byte {
	return cat([]byte{cfaExpression}, uleb(reg), uleb(uint64(len(e))), e)
}
func valExpression(reg uint64, e []byte) []byte {
	return cat([]byte{cfaValExpression}, uleb(reg), uleb(uint64(len(e))), e)
}

var (
	remember  = []byte{cfaRememberState}
	restoreSt = []byte{cfaRestoreState}
	nop       = []byte{cfaNop}
)

// The PLT's CFA: rsp+8, plus 8 more once the pc is past the push in the
// second half of the 16-byte entry.
var pltExpr = []byte{opBreg0 + 7, 8, opBreg0 + 16, 0, opLit0 + 15, opAnd, opLit0 + 11, opGe, opLit0 + 3, opShl, opPlus}

// The realigned main's CFA: the incoming stack pointer, saved below RBP.
var drapExpr = cat([]byte{opBreg0 + 6}, sleb(-8), []byte{opDeref})

// gccCIE is the CIE GCC emits on x86-64: "zR", pcrel sdata4 pointers,
// CFA = rsp+8, return address at CFA-8.
func gccCIE(f *frames) int {
	return f.cie(cieSpec{
		aug: "zR", codeAlign: 1, dataAlign: -8, ra: 16,
		augData: []byte{pePcrel | peSdata4},
		ins:     cat(defCFA(RegRSP, 8), offset(RegRA, 1)),
	})
}

// gccFDE adds an FDE under gccCIE's CIE.
func gccFDE(f *frames, cieOff int, begin, size uint64, ins ...[]byte) int {
	return f.fde(cieOff, pePcrel|peSdata4, begin, size, []byte{}, cat(ins...)...)
}

// ehTable loads f as .eh_frame.
func ehTable(f *frames) *Table {
	return load(input{eh: f.b, ehAddr: f.vaddr, text: f.text, data: f.data, addrSize: 8})
}
