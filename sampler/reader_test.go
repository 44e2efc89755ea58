//go:build linux

package sampler

import (
	"testing"
	"time"
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
