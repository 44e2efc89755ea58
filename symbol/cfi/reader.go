package cfi

import "encoding/binary"

// reader decodes the little-endian fields of a CFI section. Reading past
// the end sets bad and yields zeros, so a parser checks once per entry
// instead of after every field, and truncated input can never index out of
// range.
type reader struct {
	b   []byte
	pos int
	bad bool
}

// need reports whether n more bytes are available, marking the reader bad
// (and exhausted) when they are not.
func (r *reader) need(n uint64) bool {
	if r.pos > len(r.b) || n > uint64(len(r.b)-r.pos) {
		r.bad = true
		r.pos = len(r.b)
		return false
	}
	return true
}

func (r *reader) skip(n uint64) {
	if r.need(n) {
		r.pos += int(n)
	}
}

func (r *reader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.pos]
	r.pos++
	return v
}

// take is the next n bytes, or nil past the end (the reader is then bad).
func (r *reader) take(n int) []byte {
	if !r.need(uint64(n)) {
		return nil
	}
	b := r.b[r.pos : r.pos+n]
	r.pos += n
	return b
}

func (r *reader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// addr reads a target address of size bytes (4 or 8).
func (r *reader) addr(size uint8) uint64 {
	if size == 4 {
		return uint64(r.u32())
	}
	return r.u64()
}

// uleb reads an unsigned LEB128. Bits beyond 64 are dropped rather than
// rejected: the encoding is still consumed to its end, so the next field
// stays in sync.
func (r *reader) uleb() uint64 {
	v, _, _ := r.leb()
	return v
}

// sleb reads a signed LEB128.
func (r *reader) sleb() int64 {
	v, shift, last := r.leb()
	if shift < 64 && last&0x40 != 0 {
		v |= ^uint64(0) << shift
	}
	return int64(v)
}

// leb reads the bits of a LEB128 (as uleb says), and returns how far they
// reached and the last byte, whose 0x40 bit is the sign of an sleb.
func (r *reader) leb() (v uint64, shift uint, last byte) {
	for {
		c := r.u8()
		if r.bad {
			return 0, 0, 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
			shift += 7
		}
		if c&0x80 == 0 {
			return v, shift, c
		}
	}
}

// cstring returns the NUL-terminated string at the current position,
// without copying, and steps past its terminator.
func (r *reader) cstring() []byte {
	for i := r.pos; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := r.b[r.pos:i]
			r.pos = i + 1
			return s
		}
	}
	r.bad = true
	r.pos = len(r.b)
	return nil
}

// Pointer encodings (DW_EH_PE_*), from the LSB's description of .eh_frame.
const (
	peAbsptr  = 0x00
	peUleb128 = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb128 = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c

	pePcrel   = 0x10
	peTextrel = 0x20
	peDatarel = 0x30
	peFuncrel = 0x40
	peAligned = 0x50

	peIndirect = 0x80
	peOmit     = 0xff
)

// bases are the addresses an encoded pointer can be relative to.
type bases struct {
	pc   uint64 // virtual address of r.b[0]: pcrel adds the field's own address
	text uint64
	data uint64
	fn   uint64 // start of the FDE's function, for funcrel
}

// ptr reads a pointer in encoding enc. The indirect flag is left to the
// caller: resolving it would need the process's memory, and only the
// personality routine, which unwinding never uses, is encoded that way in
// practice.
func (r *reader) ptr(enc uint8, addrSize uint8, b *bases) uint64 {
	if enc == peOmit {
		return 0
	}
	var base uint64
	switch enc & 0x70 {
	case peAbsptr:
	case pePcrel:
		base = b.pc + uint64(r.pos)
	case peTextrel:
		base = b.text
	case peDatarel:
		base = b.data
	case peFuncrel:
		base = b.fn
	case peAligned:
		if a := int(addrSize); r.pos%a != 0 {
			r.skip(uint64(a - r.pos%a))
		}
	default:
		r.bad = true
		return 0
	}
	var v uint64
	switch enc & 0x0f {
	case peAbsptr:
		v = r.addr(addrSize)
	case peUleb128:
		v = r.uleb()
	case peUdata2:
		v = uint64(r.u16())
	case peUdata4:
		v = uint64(r.u32())
	case peUdata8, peSdata8:
		v = r.u64()
	case peSleb128:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.u16())))
	case peSdata4:
		v = uint64(int64(int32(r.u32())))
	default:
		r.bad = true
		return 0
	}
	v += base
	if addrSize == 4 {
		v = uint64(uint32(v))
	}
	return v
}
