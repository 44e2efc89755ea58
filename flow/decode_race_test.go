package flow

import (
	"encoding/binary"
	"reflect"
	"sync"
	"testing"
)

// Decode runs on several goroutines at once (the caller decodes a
// module's functions in parallel): under -race this finds shared state,
// arm64asm's coverage table among it, and the pooled scratch must not
// leak between them.
func TestDecodeConcurrent(t *testing.T) {
	var a64 []byte
	for _, w := range []uint32{0xd5033fdf, 0xd4000001, 0x54000040, 0x94000010, 0xd65f03c0, 0xd503201f} { // isb, svc, b.eq, bl, ret, nop
		a64 = binary.LittleEndian.AppendUint32(a64, w)
	}
	x86 := []byte{0x85, 0xff, 0x74, 0x05, 0xe8, 0, 0, 0, 0, 0x0f, 0x10, 0x07, 0xc3, 0xcc}
	want := []*CFG{Decode("arm64", a64, base, nil), Decode("amd64", x86, base, nil)}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				got := []*CFG{Decode("arm64", a64, base, nil), Decode("amd64", x86, base, nil)}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got\n%s%s\nwant\n%s%s", dump(got[0]), dump(got[1]), dump(want[0]), dump(want[1]))
					return
				}
			}
		})
	}
	wg.Wait()
}
