//go:build linux

package sampler

// The read loop: Next hands the caller the records the reader copied out
// of the rings, a batch per wake; drain empties the queue and the rings at
// once.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Next waits for the reader's next pass over the rings and returns the
// records it copied, and any it queued meanwhile, as one batch. It returns
// at least every PollInterval, with an empty batch when nothing came: the
// goroutine that reads the session does its other work (a UI's requests,
// re-arming counters) between calls. When ctx has ended, or the target has
// exited (and is reaped: its exit status is known), the batch holds every
// record not yet handed on, those still in the rings too, and Next returns
// io.EOF with it: the caller takes that batch and stops. After Close, Next
// returns io.EOF and an empty batch. The batch, and its records' slices, are
// valid until the next call of Next or ReconfigureWith.
//
// Batches follow each other in time order thread by thread, not across
// CPUs: the rings are copied one after another, so a sample written to a
// ring just after it was copied, while the next ring's newer records were
// being copied, comes in the next batch. A thread's samples are a
// millisecond or more apart and cannot straddle that window of
// microseconds; what is computed from consecutive samples (intervals,
// latency) is per thread.
func (s *Session) Next(ctx context.Context) (*Batch, error) {
	// The last batch is done with: its chunks go back to the reader
	// before the wait for the next, which may need them.
	s.releaseChunks()
	if ctx.Err() != nil {
		return s.drain(), io.EOF
	}
	var c *chunk
	select {
	case c = <-s.rd.full:
	case <-s.rd.done:
		// The reader ended: its wait failed, or the session closed.
		if s.rd.err != nil {
			return s.startBatch(), fmt.Errorf("epoll_wait: %w", s.rd.err)
		}
		return s.startBatch(), io.EOF
	case <-ctx.Done():
		return s.drain(), io.EOF
	}
	b := s.startBatch()
	s.decodeChunk(c, b)
	s.decodeQueued(b)
	if s.cfg.Follow && time.Since(s.lastScan) > 200*time.Millisecond {
		if _, err := s.scanThreads(); err != nil && !errors.Is(err, ErrNoProcess) {
			s.tellFiles(err)
		}
	}
	if s.cfg.AllProcesses {
		s.scanHost()
	} else {
		s.watch()
	}
	if s.exited.Load() {
		s.endStop()
		s.reap()
		s.readMu.Lock()
		s.decodeQueued(b)
		s.decodeRings(b)
		s.readMu.Unlock()
		return s.endBatch(b), io.EOF
	}
	return s.endBatch(b), nil
}

// Run calls fn with every non-empty batch Next returns until ctx ends or
// the target exits: for a caller with nothing to do between batches.
func (s *Session) Run(ctx context.Context, fn func(*Batch)) error {
	for {
		b, err := s.Next(ctx)
		if len(b.Records) > 0 {
			fn(b)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// decodeQueued adds to b the chunks the reader has queued by now. Not
// those it queues meanwhile: a reader that keeps up with the decoding (each
// decoded chunk lets it copy another) would keep the batch from ever ending,
// and the consumer would see nothing while it grew.
func (s *Session) decodeQueued(b *Batch) {
	for n := len(s.rd.full); n > 0; n-- {
		select {
		case c := <-s.rd.full:
			s.decodeChunk(c, b)
		default:
			return
		}
	}
}

// drain is a batch of every record not yet handed on: those the reader
// queued, then those still in the rings.
func (s *Session) drain() *Batch {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	return s.drainLocked()
}

// drainLocked is drain with readMu held.
func (s *Session) drainLocked() *Batch {
	b := s.startBatch()
	if s.rd != nil {
		// Oldest first: what the reader copied out before.
		s.decodeQueued(b)
	}
	s.decodeRings(b)
	return s.endBatch(b)
}

// decodeRings adds to b the records still in the rings; readMu keeps the
// reader off them meanwhile.
func (s *Session) decodeRings(b *Batch) {
	var rec Record
	s.horizon = max(s.horizon, monoNow())
	for _, cpu := range s.cpus {
		r := s.rings[cpu]
		if r == nil {
			continue
		}
		_, corrupt := r.readAll(func(raw []byte) { s.decodeRecord(raw, &rec, b) })
		if corrupt {
			s.stats.corrupt.Add(1)
		}
	}
}

// releaseChunks gives the reader back the chunks the last batch's stacks
// were in.
func (s *Session) releaseChunks() {
	for i, c := range s.heldChunks {
		s.recycle(c)
		s.heldChunks[i] = nil
	}
	s.heldChunks = s.heldChunks[:0]
}

// startBatch resets the batch, with the records cctop made up first.
func (s *Session) startBatch() *Batch {
	b := &s.batch
	b.reset()
	s.releaseChunks()
	for _, r := range s.pending {
		b.add(&r)
	}
	s.pending = s.pending[:0]
	return b
}

// endBatch orders the batch and keeps the thread table by it; one drain is
// over.
func (s *Session) endBatch(b *Batch) *Batch {
	s.takeFirstSeen(b)
	s.takeProbes(b)
	s.forgetRetired()
	if len(b.Records) > 0 {
		b.seal()
	}
	for i := range b.Records {
		s.threads.add(&b.Records[i])
	}
	return b
}
