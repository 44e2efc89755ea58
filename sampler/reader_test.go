//go:build linux

package sampler

import (
	"bytes"
	"testing"
	"time"
	"unsafe"
)

// TestDecodeQueuedEnds: a batch takes the chunks queued when it starts.
// With a reader that queues a chunk for each one decoded, as a reader
// keeping pace with an overloaded consumer does, taking "all queued" never
// ended: under -race, the exact trigger's batch grew for minutes and the
// live view saw no sample.
func TestDecodeQueuedEnds(t *testing.T) {
	// Chunks of LOST records, each lost one: decoding one takes a while,
	// long enough for the reader to queue the chunk freed before it.
	lost := record(recLost, 0, (&enc{}).u64(1).u64(1).sampleID(1, 1, 1, 0, 1).b)
	const perChunk = 2000
	rd := &reader{full: make(chan *chunk, chunks), free: make(chan *chunk, chunks)}
	for i := 0; i < chunks; i++ {
		c := &chunk{}
		for j := 0; j < perChunk; j++ {
			c.data = append(c.data, lost...)
			c.ends = append(c.ends, len(c.data))
		}
		rd.full <- c
	}
	s := &Session{rd: rd, decoder: newDecoder(testFormat)}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the reader: every freed chunk is queued again at once
		for {
			select {
			case c := <-rd.free:
				rd.full <- c
			case <-stop:
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		s.decodeQueued(&s.batch)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("decodeQueued did not return while the reader kept queueing (%d records decoded)", s.stats.lost.Load())
	}
	if n := s.stats.lost.Load(); n != chunks*perChunk {
		t.Errorf("one batch decoded %d records, want the %d queued when it started", n, chunks*perChunk)
	}
}

// TestBatchBorrowsChunkStacks: a sample's stack copy stays in the chunk the
// reader copied it to, with no second copy, and the chunk goes back to the
// reader only when the next batch starts: until then the batch's stacks
// are intact, whatever the reader copies meanwhile.
func TestBatchBorrowsChunkStacks(t *testing.T) {
	if unwindRegsMask == 0 {
		t.Skip("no register layout for this architecture")
	}
	n := onesBelow(64)
	stack := make([]byte, 64)
	for i := range stack {
		stack[i] = byte(i)
	}
	c := &chunk{data: stackSample(0x401000, make([]uint64, n), stack, 48)}
	c.ends = []int{len(c.data)}
	rd := &reader{full: make(chan *chunk, chunks), free: make(chan *chunk, chunks)}
	rd.full <- c
	s := &Session{rd: rd, decoder: newDecoder(stackFormat), threads: newThreadTable(),
		early: map[int]bool{}, earlier: map[int]bool{}, ids: map[uint64]EventRef{}}
	b := s.startBatch()
	s.decodeQueued(b)
	s.endBatch(b)
	if len(b.Records) != 1 || !bytes.Equal(b.Records[0].Stack, stack[:48]) {
		t.Fatalf("batch %d records, stack %v", len(b.Records), b.Records)
	}
	got := b.Records[0].Stack
	if start := &c.data[0]; uintptr(unsafe.Pointer(&got[0])) < uintptr(unsafe.Pointer(start)) ||
		uintptr(unsafe.Pointer(&got[0])) >= uintptr(unsafe.Pointer(start))+uintptr(len(c.data)) {
		t.Errorf("the stack was copied out of the chunk")
	}
	if len(rd.free) != 0 {
		t.Fatalf("the chunk went back to the reader while the batch uses its stacks")
	}
	s.startBatch()
	if len(rd.free) != 1 {
		t.Fatalf("%d chunks back with the reader after the next batch started, want 1", len(rd.free))
	}
}

// TestChunkLetsBurstGo: a chunk keeps its buffer while its passes use a
// good part of it, and lets a buffer grown for a burst go once they have
// not for chunkSlack passes in a row (a small pass between big ones, as a
// ring's watermark wakes, keeps it); small buffers stay whatever they hold.
func TestChunkLetsBurstGo(t *testing.T) {
	for _, c := range []struct {
		cap, len int
		keep     bool
	}{
		{chunkKeepFloor, 0, true},
		{4 << 20, 2 << 20, true},
		{4 << 20, 512 << 10, false},
		{4 << 20, 0, false},
		{maxChunkKeep + 1, maxChunkKeep + 1, false},
	} {
		ch := &chunk{data: make([]byte, c.len, c.cap)}
		got := true
		for range chunkSlack {
			got = got && ch.keepData()
		}
		if got != c.keep {
			t.Errorf("a %d-byte buffer holding %d for %d passes: keep %v, want %v", c.cap, c.len, chunkSlack, got, c.keep)
		}
	}
	ch := &chunk{data: make([]byte, 0, 4<<20)}
	for i := range 3 * chunkSlack {
		ch.data = ch.data[:0]
		if i%4 == 0 {
			ch.data = ch.data[:2<<20] // a timed pass among watermark ones
		}
		if !ch.keepData() {
			t.Fatalf("pass %d: a buffer that every fourth pass fills by half went", i)
		}
	}
}

// TestRecycleKeepsFewIdle: chunks given back past the few idle ones the
// reader cycles through go, and the reader's count of chunks follows; the
// idle ones keep their buffers, so a steady reader allocates none.
func TestRecycleKeepsFewIdle(t *testing.T) {
	s := &Session{rd: &reader{free: make(chan *chunk, maxChunks)}}
	s.rd.made.Store(keepFree + 5)
	for range keepFree + 5 {
		s.recycle(&chunk{data: make([]byte, 100<<10)})
	}
	if n := len(s.rd.free); n != keepFree || s.rd.made.Load() != keepFree {
		t.Fatalf("%d idle chunks, %d counted; want %d and %d", n, s.rd.made.Load(), keepFree, keepFree)
	}
	for range keepFree {
		if c := <-s.rd.free; cap(c.data) != 100<<10 {
			t.Errorf("an idle chunk kept %d bytes, want its %d", cap(c.data), 100<<10)
		}
	}
}
