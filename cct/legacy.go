package cct

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// legacyEnd checks that a profile in one of pprof's legacy formats is whole. Those
// formats carry no length and no checksum, and pprof's parsers take what they find, so a
// file cut in the middle would read as a smaller profile. They do end in a known way: the
// gperftools CPU format's records end with a trailer record (count 0, one pc, 0), after
// which comes the text of /proc/self/maps; the text formats end with a newline.
func legacyEnd(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	word, order, ok := cpuFormat(data)
	if !ok {
		if data[len(data)-1] != '\n' {
			return errors.New("it ends in the middle of a line (cut short?)")
		}
		return nil
	}
	read := func(i int) uint64 { return readWord(data[i*word:(i+1)*word], order) }
	n := len(data) / word
	// The header is 5 words: 0, 3 (its length after these two), version, period, 0.
	for i := 5; i+1 < n; {
		count, depth := read(i), read(i+1)
		if depth > uint64(n) {
			break
		}
		if count == 0 && depth == 1 && i+2 < n && read(i+2) == 0 {
			maps := data[(i+3)*word:]
			if len(maps) > 0 && !bytes.HasSuffix(maps, []byte("\n")) {
				return errors.New("its memory map ends in the middle of a line (cut short?)")
			}
			return nil
		}
		i += 2 + int(depth)
	}
	return errors.New("its samples end without the format's trailer (cut short?)")
}

// cpuFormat says whether data starts a gperftools CPU profile, and in which word size
// and byte order (the header's first word is 0, its second 3).
func cpuFormat(data []byte) (word int, order binary.ByteOrder, ok bool) {
	for _, w := range []int{8, 4} {
		if len(data) < 5*w || !allZero(data[:w]) {
			continue
		}
		for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			if readWord(data[w:2*w], o) == 3 {
				return w, o, true
			}
		}
	}
	return 0, nil, false
}

// readWord reads a 4- or 8-byte word, as long as b.
func readWord(b []byte, order binary.ByteOrder) uint64 {
	if len(b) == 4 {
		return uint64(order.Uint32(b))
	}
	return order.Uint64(b)
}
