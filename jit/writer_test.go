package jit

import (
	"encoding/binary"
)

// dumpWriter writes synthetic jitdump files the way runtimes do, for the
// tests and the fuzz seeds.
type dumpWriter struct {
	b     []byte
	order binary.AppendByteOrder
}

func newDump(flags uint64) *dumpWriter {
	return newDumpOrder(binary.LittleEndian, flags)
}

func newDumpOrder(order binary.AppendByteOrder, flags uint64) *dumpWriter {
	w := &dumpWriter{order: order}
	w.u32(magic)
	w.u32(version)
	w.u32(headerSize)
	w.u32(62) // EM_X86_64
	w.u32(0)
	w.u32(4242)
	w.u64(1_000)
	w.u64(flags)
	return w
}

func (w *dumpWriter) u32(v uint32) { w.b = w.order.AppendUint32(w.b, v) }
func (w *dumpWriter) u64(v uint64) { w.b = w.order.AppendUint64(w.b, v) }

// record appends a record of type id with body; total_size is computed
// unless size is non-zero.
func (w *dumpWriter) record(id uint32, ts uint64, body []byte, size uint32) int {
	off := len(w.b)
	if size == 0 {
		size = uint32(recordHeader + len(body))
	}
	w.u32(id)
	w.u32(size)
	w.u64(ts)
	w.b = append(w.b, body...)
	return off
}

func (w *dumpWriter) fields(vs ...any) []byte {
	var b []byte
	for _, v := range vs {
		switch v := v.(type) {
		case uint32:
			b = w.order.AppendUint32(b, v)
		case uint64:
			b = w.order.AppendUint64(b, v)
		case string:
			b = append(append(b, v...), 0)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

// load appends a JIT_CODE_LOAD of size bytes of code (int3s) and returns
// its offset.
func (w *dumpWriter) load(ts, addr, size, index uint64, name string) int {
	code := make([]byte, size)
	for i := range code {
		code[i] = 0xcc
	}
	return w.record(recLoad, ts, w.fields(uint32(4242), uint32(4243), addr, addr, size, index, name, code), 0)
}

func (w *dumpWriter) move(ts, old, addr, size, index uint64) int {
	return w.record(recMove, ts, w.fields(uint32(4242), uint32(4243), addr, old, addr, size, index), 0)
}

type entry struct {
	addr uint64
	line uint32
	file string
}

func (w *dumpWriter) debug(ts, addr uint64, es ...entry) int {
	b := w.fields(addr, uint64(len(es)))
	for _, e := range es {
		b = append(b, w.fields(e.addr, e.line, uint32(0), e.file)...)
	}
	return w.record(recDebugInfo, ts, b, 0)
}

// unwinding appends a JIT_CODE_UNWINDING_INFO with eh (an .eh_frame)
// followed by a 20-byte .eh_frame_hdr, padded to 8 bytes as CPython pads.
func (w *dumpWriter) unwinding(ts uint64, eh []byte) int {
	hdr := make([]byte, 20)
	hdr[0] = 1
	data := append(append([]byte(nil), eh...), hdr...)
	body := w.fields(uint64(len(data)), uint64(len(hdr)), uint64((len(data)+15)&^15), data)
	for (recordHeader+len(body))%8 != 0 {
		body = append(body, 0)
	}
	return w.record(recUnwinding, ts, body, 0)
}

func (w *dumpWriter) close(ts uint64) int { return w.record(recClose, ts, nil, 0) }

// leafEHFrame is the .eh_frame of a frameless leaf function of size bytes
// at code, laid out to be mapped right after it at the next 8-byte
// boundary: CFA = rsp+8, return address at CFA-8, throughout.
func leafEHFrame(code, size uint64) []byte {
	le := binary.LittleEndian
	var b []byte
	// CIE: length, id 0, version 1, "zR", code align 1, data align -8,
	// RA column 16, augmentation data: FDE pointers pcrel|sdata4;
	// def_cfa rsp+8, offset r16 at cfa-8, two nops.
	b = le.AppendUint32(b, 20)
	b = append(b, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0)
	// FDE: length, CIE pointer, initial location (pcrel), range, no
	// augmentation data, three nops.
	vaddr := code + (size+7)&^7
	b = le.AppendUint32(b, 16)
	b = le.AppendUint32(b, uint32(len(b))) // back to the CIE at 0
	b = le.AppendUint32(b, uint32(int32(int64(code)-int64(vaddr+uint64(len(b))))))
	b = le.AppendUint32(b, uint32(size))
	b = append(b, 0, 0, 0, 0)
	b = le.AppendUint32(b, 0) // terminator
	return b
}
