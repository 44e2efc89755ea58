package symbol

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"hash/crc32"
	"hash/crc64"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// MiniDebugInfo (GDB's name; Fedora and its relatives ship it) is an ELF
// file holding little more than a .symtab of the functions .dynsym lacks,
// compressed with xz into the .gnu_debugdata section of a stripped binary.
// It is what names local functions when no debug package is installed.

// Bounds on decompressing .gnu_debugdata. Real sections expand 3-10x; a
// claim beyond maxDebugdataRatio times the section (with a floor for tiny
// ones) or maxDebugdata in all is corrupt or hostile, and is ignored.
const (
	maxDebugdata      = 256 << 20
	maxDebugdataRatio = 100
	minDebugdataLimit = 1 << 20
)

// miniDebugInfoCands appends the function symbols of f's .gnu_debugdata.
func miniDebugInfoCands(dst []symCand, f *elf.File, size int64) []symCand {
	s := f.Section(".gnu_debugdata")
	if s == nil || s.Type == elf.SHT_NOBITS || s.Size == 0 || s.FileSize > uint64(size) || s.Size > maxDebugdata {
		return dst
	}
	data, err := s.Data()
	if err != nil {
		return dst
	}
	limit := min(maxDebugdata, max(minDebugdataLimit, maxDebugdataRatio*len(data)))
	img, ok := unxz(data, limit)
	if !ok {
		return dst
	}
	ef, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return dst
	}
	syms, _ := ef.Symbols()
	return funcCands(dst, syms, ef.Sections, false)
}

// unxz decompresses a single-stream xz file of LZMA2 blocks, the only
// kind `xz` writes without filter options, returning at most limit bytes.
//
// The container is walked here and only the LZMA2 data is handed to the
// lzma package, because xz.Reader sizes each block's dictionary from the
// block header before decoding a byte: a 100-byte input may ask for 4 GiB.
// Here the dictionary is never larger than limit, which is enough for any
// stream that decompresses within limit (a match cannot reach further back
// than the output so far). Block checks (CRC-32, CRC-64, SHA-256) are
// verified, so damage is caught rather than parsed as an ELF.
func unxz(data []byte, limit int) ([]byte, bool) {
	const headerLen = 12
	if len(data) < headerLen+headerLen || !bytes.Equal(data[:6], []byte("\xfd7zXZ\x00")) ||
		crc32.ChecksumIEEE(data[6:8]) != binary.LittleEndian.Uint32(data[8:12]) || data[6] != 0 {
		return nil, false
	}
	check, checkLen, ok := xzCheck(data[7])
	if !ok {
		return nil, false
	}
	var (
		out     []byte
		records [][2]uint64 // per block: unpadded size, uncompressed size
	)
	pos := headerLen
	for {
		if pos >= len(data) {
			return nil, false
		}
		if data[pos] == 0 {
			if !xzIndexFooter(data[pos:], data[6:8], records) {
				return nil, false
			}
			return out, true
		}
		hlen := (int(data[pos]) + 1) * 4
		if len(data)-pos < hlen {
			return nil, false
		}
		dict, csize, usize, ok := xzBlockHeader(data[pos : pos+hlen])
		if !ok {
			return nil, false
		}
		start := len(out)
		src := bytes.NewReader(data[pos+hlen:])
		dictCap := int(max(lzma.MinDictCap, min(dict, int64(limit))))
		lz, err := lzma.Reader2Config{DictCap: dictCap}.NewReader2(src)
		if err != nil {
			return nil, false
		}
		out, ok = readLimited(out, lz, limit)
		if !ok {
			return nil, false
		}
		used := len(data) - pos - hlen - src.Len()
		if (csize >= 0 && int64(used) != csize) || (usize >= 0 && int64(len(out)-start) != usize) {
			return nil, false
		}
		pos += hlen + used
		for ; pos%4 != 0; pos++ {
			if pos >= len(data) || data[pos] != 0 {
				return nil, false
			}
		}
		if len(data)-pos < checkLen {
			return nil, false
		}
		if check != nil && !bytes.Equal(check(out[start:]), data[pos:pos+checkLen]) {
			return nil, false
		}
		pos += checkLen
		records = append(records, [2]uint64{uint64(hlen + used + checkLen), uint64(len(out) - start)})
	}
}

// xzIndexFooter checks the end of an xz stream, b: the index, which must
// list records (unpadded and uncompressed size of each block) and nothing
// else, then the footer, which must repeat the stream flags and end b.
// The blocks have passed their checks by then; this catches truncation
// and trailing data.
func xzIndexFooter(b, flags []byte, records [][2]uint64) bool {
	p := 1 // index indicator
	n, k := xzVarint(b[p:])
	if k == 0 || n != uint64(len(records)) {
		return false
	}
	p += k
	for _, r := range records {
		for _, want := range r {
			v, k := xzVarint(b[p:])
			if k == 0 || v != want {
				return false
			}
			p += k
		}
	}
	for ; p%4 != 0; p++ {
		if p >= len(b) || b[p] != 0 {
			return false
		}
	}
	if len(b)-p != 4+12 || crc32.ChecksumIEEE(b[:p]) != binary.LittleEndian.Uint32(b[p:]) {
		return false
	}
	f := b[p+4:]
	return crc32.ChecksumIEEE(f[4:10]) == binary.LittleEndian.Uint32(f) &&
		uint64(binary.LittleEndian.Uint32(f[4:]))+1 == uint64(p+4)/4 &&
		bytes.Equal(f[8:10], flags) && string(f[10:]) == "YZ"
}

// readLimited appends everything r yields to out, failing past limit
// bytes in all.
func readLimited(out []byte, r io.Reader, limit int) ([]byte, bool) {
	for {
		if len(out) == cap(out) {
			if len(out) > limit {
				return nil, false
			}
			out = append(out, 0)[:len(out)]
		}
		n, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > limit {
			return nil, false
		}
		if err == io.EOF {
			return out, true
		}
		if err != nil {
			return nil, false
		}
	}
}

// xzCheck returns, for an xz check type, the function computing the check
// as stored (CRCs little-endian) and its size. None (0) has no function;
// types this package cannot compute are refused rather than skipped.
func xzCheck(typ byte) (func([]byte) []byte, int, bool) {
	switch typ {
	case 0:
		return nil, 0, true
	case 1:
		return func(b []byte) []byte { return binary.LittleEndian.AppendUint32(nil, crc32.ChecksumIEEE(b)) }, 4, true
	case 4:
		return func(b []byte) []byte { return binary.LittleEndian.AppendUint64(nil, crc64.Checksum(b, crc64Table)) }, 8, true
	case 10:
		return func(b []byte) []byte { h := sha256.Sum256(b); return h[:] }, 32, true
	}
	return nil, 0, false
}

// crc64Table is CRC-64/ECMA-182 as xz uses it (Go's crc64 complements
// before and after, as xz does).
var crc64Table = crc64.MakeTable(crc64.ECMA)

const xzLZMA2 = 0x21

// xzBlockHeader parses a block header (h is all of it, CRC included): it
// must have one filter, LZMA2. It returns the dictionary size and the
// compressed and uncompressed sizes, -1 when the header leaves them out.
func xzBlockHeader(h []byte) (dict, csize, usize int64, ok bool) {
	n := len(h)
	if crc32.ChecksumIEEE(h[:n-4]) != binary.LittleEndian.Uint32(h[n-4:]) {
		return 0, 0, 0, false
	}
	flags := h[1]
	if flags&0x3f != 0 { // filter count - 1 must be 0, reserved bits clear
		return 0, 0, 0, false
	}
	p := 2
	csize, usize = -1, -1
	if flags&0x40 != 0 {
		v, k := xzVarint(h[p : n-4])
		if k == 0 || v == 0 || v > 1<<62 {
			return 0, 0, 0, false
		}
		csize, p = int64(v), p+k
	}
	if flags&0x80 != 0 {
		v, k := xzVarint(h[p : n-4])
		if k == 0 || v > 1<<62 {
			return 0, 0, 0, false
		}
		usize, p = int64(v), p+k
	}
	id, k := xzVarint(h[p : n-4])
	if k == 0 || id != xzLZMA2 {
		return 0, 0, 0, false
	}
	p += k
	psize, k := xzVarint(h[p : n-4])
	if k == 0 || psize != 1 || p+k >= n-4 {
		return 0, 0, 0, false
	}
	p += k
	code := h[p]
	if code > 40 {
		return 0, 0, 0, false
	}
	if code == 40 {
		dict = 1<<32 - 1
	} else {
		dict = (2 | int64(code&1)) << (code/2 + 11)
	}
	for _, b := range h[p+1 : n-4] {
		if b != 0 {
			return 0, 0, 0, false
		}
	}
	return dict, csize, usize, true
}

// xzVarint decodes xz's multibyte integer: up to 9 bytes of 7 bits, low
// first. It returns the value and its length, 0 when malformed.
func xzVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 9; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			if b[i] == 0 && i > 0 {
				return 0, 0 // not the shortest form
			}
			return v, i + 1
		}
	}
	return 0, 0
}
