package flow

import (
	"reflect"
	"testing"
)

// FuzzDecode feeds Decode any bytes, for both arches, at any address: it
// must not panic, its CFG must keep the invariants consistent checks, and
// it must not depend on what the pooled scratch held before. The corpus in
// testdata/fuzz/FuzzDecode holds real functions of libc and of Go
// programs for amd64 and arm64.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x85, 0xff, 0x74, 0x05, 0xe8, 0, 0, 0, 0, 0xc3, 0xcc}, false, uint64(base))
	f.Add([]byte{0xff, 0x24, 0xc5, 0, 0, 0, 0, 0x0f, 0x0b}, false, uint64(base))
	f.Add([]byte{0xc5, 0xf8, 0x77, 0xeb, 0xfb, 0x06, 0x00}, false, uint64(0))
	f.Add([]byte{0x40, 0x00, 0x00, 0x54, 0x00, 0x00, 0x00, 0x94, 0xc0, 0x03, 0x5f, 0xd6, 0, 0}, true, uint64(base))
	f.Add([]byte{0x13, 0x00, 0x00, 0xb5, 0x1f, 0x20, 0x03, 0xd5, 0x00, 0x02, 0x1f, 0xd6}, true, uint64(1<<64-8))
	f.Fuzz(func(t *testing.T, code []byte, arm bool, start uint64) {
		arch := "amd64"
		if arm {
			arch = "arm64"
		}
		noReturn := func(target uint64) bool { return target%7 == 0 }
		g := Decode(arch, code, start, noReturn)
		if len(code) > 0 && start+uint64(len(code)) > start {
			if err := consistent(g, arch, code); err != nil {
				t.Fatalf("%v\n%s", err, dump(g))
			}
		}
		// Decoding something else in between leaves the pool's scratch
		// dirty; the same bytes must give the same CFG.
		Decode(arch, code[len(code)/3:], start+1, nil)
		if again := Decode(arch, code, start, noReturn); !reflect.DeepEqual(g, again) {
			t.Fatalf("decoded twice:\n%s\n%s", dump(g), dump(again))
		}
	})
}
