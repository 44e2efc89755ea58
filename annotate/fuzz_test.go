package annotate

import (
	"testing"
)

// FuzzDecode: any bytes decode without a panic into rows that tile the
// code: each at the address after the one before, none empty, targets of
// direct branches computed without overflow trouble.
func FuzzDecode(f *testing.F) {
	f.Add(true, []byte{0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0, 0x74, 0xfe, 0xc3})              // push, mov, call, je, ret
	f.Add(false, []byte{0xfd, 0x7b, 0xbf, 0xa9, 0x00, 0x00, 0x00, 0x94, 0xc0, 0x03, 0x5f, 0xd6}) // stp, bl, ret
	f.Add(true, []byte{0x0f})                                                                    // a cut instruction
	f.Fuzz(func(t *testing.T, amd64 bool, code []byte) {
		arch := "arm64"
		if amd64 {
			arch = "amd64"
		}
		const start = 0x401000
		lookup := func(a uint64) (string, uint64) {
			if a >= start && a < start+uint64(len(code)) {
				return "f", start
			}
			return "", 0
		}
		ds, ok := decode(arch, code, start, lookup)
		if !ok {
			t.Fatal("no decoder")
		}
		next := uint64(start)
		for _, d := range ds {
			if d.addr != next || d.size <= 0 || d.text == "" {
				t.Fatalf("row %+v after %#x", d, next)
			}
			next += uint64(d.size)
		}
		// arm64 decodes whole words; a tail of fewer bytes is no row.
		if end := start + uint64(len(code)); next != end && !(arch == "arm64" && end-next < 4) {
			t.Fatalf("rows end at %#x; the code at %#x", next, end)
		}
	})
}
