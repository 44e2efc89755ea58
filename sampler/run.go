//go:build linux

package sampler

// The run loop: Run hands the consumer batches of the records the reader
// copied out of the rings; drain empties the queue and the rings at once.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Run reads the rings until the target exits or ctx ends, calling fn with
// each batch of records in time order. fn must not keep the batch.
//
// Batches follow each other in time order thread by thread, not across
// CPUs: the rings are copied one after another, so a sample written to a
// ring just after it was copied, while the next ring's newer records were
// being copied, comes in the next batch. A thread's samples are a
// millisecond or more apart and cannot straddle that window of
// microseconds; what is computed from consecutive samples (intervals,
// latency) is per thread.
func (s *Session) Run(ctx context.Context, fn func(*Batch)) error {
	if len(s.pending) > 0 {
		s.drain(fn)
	}
	for {
		if ctx.Err() != nil {
			s.drain(fn)
			return nil
		}
		var c *chunk
		select {
		case c = <-s.rd.full:
		case <-s.rd.done:
			// The reader ended: its wait failed, or the session closed.
			if s.rd.err != nil {
				return fmt.Errorf("epoll_wait: %w", s.rd.err)
			}
			return nil
		case <-ctx.Done():
			continue
		}
		s.process(c, fn)
		if s.cfg.Follow && time.Since(s.lastScan) > 200*time.Millisecond {
			if _, err := s.scanThreads(); err != nil && !errors.Is(err, ErrNoProcess) {
				s.tellFiles(err)
			}
		}
		s.watch()
		if s.idle != nil {
			s.idle()
		}
		if s.exited.Load() {
			s.endStop()
			s.reap()
			s.drain(fn)
			return nil
		}
	}
}

// SetIdle sets a function Run calls every time it wakes, records or not
// (at least every PollInterval): the place for a caller that owns the
// session's goroutine to take requests.
func (s *Session) SetIdle(fn func()) { s.idle = fn }

// process hands fn one batch of c's records and those of any other chunk
// already queued.
func (s *Session) process(c *chunk, fn func(*Batch)) {
	b := s.startBatch()
	s.decodeChunk(c, b)
	s.decodeQueued(b)
	s.endBatch(b, fn)
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

// drain hands fn every record not yet handed on, in one batch: those the
// reader queued, then those still in the rings.
func (s *Session) drain(fn func(*Batch)) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.drainLocked(fn)
}

// drainLocked is drain with readMu held.
func (s *Session) drainLocked(fn func(*Batch)) {
	b := s.startBatch()
	if s.rd != nil {
		// Oldest first: what the reader copied out before.
		s.decodeQueued(b)
	}
	var rec Record
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
	s.endBatch(b, fn)
}

// startBatch resets the batch, with the records cctop made up first.
func (s *Session) startBatch() *Batch {
	b := &s.batch
	b.reset()
	for _, r := range s.pending {
		b.add(&r)
	}
	s.pending = s.pending[:0]
	return b
}

// endBatch orders the batch and hands it to fn; one drain is over.
func (s *Session) endBatch(b *Batch, fn func(*Batch)) {
	s.forgetRetired()
	if len(b.Records) == 0 {
		return
	}
	b.seal()
	fn(b)
}
