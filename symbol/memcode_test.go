package symbol

import (
	"os"
	"testing"
	"time"
	"unsafe"
)

// TestReadMemCode reads this process's own memory as a target's: bytes
// come from where they are, are cached per mapping until memCodeTTL, and
// a mapping made anew starts over.
func TestReadMemCode(t *testing.T) {
	// On the heap (a stack-allocated buffer moves when the stack grows,
	// and its address with it).
	memSink = make([]byte, 3*codeChunk)
	buf := memSink
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	base := uint64(uintptr(unsafe.Pointer(&buf[0])))
	m := &mapping{Mapping: Mapping{Start: base, Limit: base + uint64(len(buf))}, anon: true}
	r := NewResolver()
	pid := os.Getpid()
	now := uint64(1000 * time.Second)
	m.mem = &memCode{chunks: map[uint64]memChunk{}, now: func() uint64 { return now }}

	got := make([]byte, 40)
	at := base + codeChunk - 20 // across a chunk boundary
	if !r.readCode(pid, m, at, got) {
		t.Fatal("readCode failed on our own memory")
	}
	for i := range got {
		if want := buf[codeChunk-20+i]; got[i] != want {
			t.Fatalf("byte %d: %#x, want %#x", i, got[i], want)
		}
	}
	// Cached: a change within the TTL is not seen, after it is.
	buf[codeChunk-20] ^= 0xff
	r.readCode(pid, m, at, got[:1])
	if got[0] == buf[codeChunk-20] {
		t.Error("read again within the TTL")
	}
	now += memCodeTTL + uint64(time.Millisecond)
	r.readCode(pid, m, at, got[:1])
	if got[0] != buf[codeChunk-20] {
		t.Errorf("stale after the TTL: %#x, want %#x", got[0], buf[codeChunk-20])
	}
	// The sample's time, where set, is the clock: a change is seen once
	// the sample is past the TTL, whatever the fallback clock says.
	buf[codeChunk-20] ^= 0xff
	r.SetTime(now + 2*memCodeTTL)
	r.readCode(pid, m, at, got[:1])
	if got[0] != buf[codeChunk-20] {
		t.Errorf("the sample's time was not the clock: %#x, want %#x", got[0], buf[codeChunk-20])
	}
	r.SetTime(0)
	// Outside the mapping: refused without reading.
	if r.readCode(pid, m, base+uint64(len(buf))-4, got[:8]) {
		t.Error("read past the mapping's end")
	}
	// A process that is gone: false, and remembered as unreadable.
	gone := &mapping{Mapping: m.Mapping, anon: true}
	if r.readCode(1<<22+12345, gone, at, got[:8]) {
		t.Error("read from a pid that does not exist")
	}
}

var memSink []byte

func TestJumpBefore(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x55, 0x30, 0x7f, 0, 0, 0x41, 0xff, 0x24, 0xda}, true}, // HotSpot's dispatch: jmp *(%r10,%rbx,8)
		{[]byte{0xe9, 1, 2, 3, 4}, true},
		{[]byte{0x90, 0xeb, 0x10}, true},
		{[]byte{0x5d, 0xc3}, true},
		{[]byte{0xff, 0xd1}, false}, // a call: callBefore's
		{[]byte{0x48, 0x89, 0xe5}, false},
	} {
		if got := jumpBefore(c.code); got != c.want {
			t.Errorf("jumpBefore(% x) = %v", c.code, got)
		}
	}
}
