//go:build linux

package sampler

import (
	"bytes"
	"os"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fakeRing lays out a perf mmap region in plain memory: a metadata page and
// dataPages of data, and plays the kernel's part of writing records.
type fakeRing struct {
	mem  []byte
	meta *unix.PerfEventMmapPage
	data []byte
	head uint64
}

func newFakeRing(t testing.TB, dataPages int) (*fakeRing, *ring) {
	page := os.Getpagesize()
	words := make([]uint64, (1+dataPages)*page/8) // 8-byte aligned backing
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(words)*8)
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
	meta.Data_offset = uint64(page)
	meta.Data_size = uint64(dataPages * page)
	r, err := newRing(mem)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeRing{mem: mem, meta: meta, data: mem[page:]}, r
}

// write appends a record, wrapping at the end of the data area, and
// publishes the new head. It reports false when the ring is full.
func (f *fakeRing) write(rec []byte) bool {
	size := uint64(len(f.data))
	if f.head+uint64(len(rec))-atomic.LoadUint64(&f.meta.Data_tail) > size {
		return false
	}
	for i, b := range rec {
		f.data[(f.head+uint64(i))%size] = b
	}
	f.head += uint64(len(rec))
	atomic.StoreUint64(&f.meta.Data_head, f.head)
	return true
}

func TestRingWrapAround(t *testing.T) {
	f, r := newFakeRing(t, 1)
	size := len(f.data)
	var want [][]byte
	// Records of awkward sizes so that several straddle the end of the area.
	for i := 0; i < 200; i++ {
		chain := make([]uint64, 1+i%13)
		for j := range chain {
			chain[j] = uint64(i*100 + j)
		}
		rec := testSample{id: 1, ip: uint64(i), pid: 1, tid: 1, time: uint64(i), chain: chain}.bytes()
		if !f.write(rec) {
			got := readRecords(t, r)
			checkRecords(t, got, want)
			want = want[:0]
			if !f.write(rec) {
				t.Fatal("record does not fit an empty ring")
			}
		}
		want = append(want, rec)
	}
	checkRecords(t, readRecords(t, r), want)
	if f.head < uint64(3*size) {
		t.Fatalf("test wrote %d bytes, want several laps of %d", f.head, size)
	}
	if r.unread() != 0 {
		t.Fatal("pending after reading everything")
	}
}

func readRecords(t *testing.T, r *ring) [][]byte {
	var got [][]byte
	_, corrupt := r.readAll(func(raw []byte) { got = append(got, append([]byte(nil), raw...)) })
	if corrupt {
		t.Fatal("corrupt")
	}
	return got
}

func checkRecords(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("record %d differs", i)
		}
	}
}

func TestRingCorruptHeader(t *testing.T) {
	f, r := newFakeRing(t, 1)
	f.write(testSample{id: 1, chain: []uint64{contextUser, 1}}.bytes())
	f.write(make([]byte, 16)) // a zero size field: must not loop forever
	n, corrupt := r.readAll(func([]byte) {})
	if n != 1 || !corrupt {
		t.Fatalf("n=%d corrupt=%v", n, corrupt)
	}
	if r.unread() != 0 {
		t.Fatal("corrupt batch not skipped")
	}
	// The ring keeps working after a corrupt batch.
	f.write(testSample{id: 2, chain: []uint64{contextUser, 1}}.bytes())
	if n, corrupt := r.readAll(func([]byte) {}); n != 1 || corrupt {
		t.Fatalf("after corruption: n=%d corrupt=%v", n, corrupt)
	}
}

func TestNewRingRejectsBadLayout(t *testing.T) {
	if _, err := newRing(make([]byte, 100)); err == nil {
		t.Fatal("tiny mapping accepted")
	}
	f, _ := newFakeRing(t, 2)
	f.meta.Data_size = 3 * uint64(os.Getpagesize()) // not a power of two
	if _, err := newRing(f.mem); err == nil {
		t.Fatal("non-power-of-two data area accepted")
	}
}

// BenchmarkRingReadDecode measures the hot path, ring to decoded sample,
// per record: a full ring is read and decoded again and again. It must not
// allocate.
func BenchmarkRingReadDecode(b *testing.B) {
	f, r := newFakeRing(b, 16)
	rec := testSample{id: 1, ip: 0x401000, pid: 1, tid: 1, period: 1000000,
		values: []Value{{ID: 1, Value: 5}, {ID: 2, Value: 9}},
		chain:  []uint64{contextUser, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}}.bytes()
	perRing := 0
	for f.write(rec) {
		perRing++
	}
	d := newDecoder(testFormat)
	var out Record
	var sink uint64
	fn := func(raw []byte) {
		if ok, _ := d.decode(raw, &out); ok {
			sink += out.IP
		}
	}
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += perRing {
		atomic.StoreUint64(&f.meta.Data_tail, 0)
		r.readAll(fn)
	}
	_ = sink
}

func TestRingReadDecodeAllocs(t *testing.T) {
	f, r := newFakeRing(t, 4)
	rec := testSample{id: 1, chain: []uint64{contextUser, 1, 2, 3}, values: []Value{{1, 1}}}.bytes()
	d := newDecoder(testFormat)
	var out Record
	fn := func(raw []byte) { d.decode(raw, &out) }
	allocs := testing.AllocsPerRun(100, func() {
		for f.write(rec) {
		}
		r.readAll(fn)
	})
	if allocs != 0 {
		t.Fatalf("read+decode allocates %.1f times per batch", allocs)
	}
}

// TestRingUnread: what the reader sizes its buffer by is the bytes between
// tail and head, never more than the ring holds, and none once read.
func TestRingUnread(t *testing.T) {
	f, r := newFakeRing(t, 1)
	if n := r.unread(); n != 0 {
		t.Fatalf("an empty ring has %d bytes unread", n)
	}
	var want uint64
	for i := range 3 {
		rec := testSample{id: 1, ip: uint64(i), chain: []uint64{contextUser, 1, 2}}.bytes()
		f.write(rec)
		want += uint64(len(rec))
	}
	if n := r.unread(); n != want {
		t.Fatalf("unread %d bytes, wrote %d", n, want)
	}
	readRecords(t, r)
	if n := r.unread(); n != 0 {
		t.Fatalf("after reading: %d bytes unread", n)
	}
	// A head past a whole ring (corrupt) counts as the ring.
	r.meta.Data_head = r.meta.Data_tail + 10*uint64(len(r.data))
	if n := r.unread(); n != uint64(len(r.data)) {
		t.Fatalf("a head 10 rings ahead: unread %d, want %d", n, len(r.data))
	}
}
