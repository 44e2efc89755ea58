//go:build linux

package sampler

import (
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The reader empties the rings on a goroutine of its own, from Open to
// Close: it copies their records out and hands them to the goroutine that calls Next,
// which decodes them and calls the consumer. A consumer busy for a while
// (symbolizing the first samples of a large binary took 1.7 s and then 5.4 s
// of wall time under a 500-thread load) then no longer leaves the rings
// unread: the reader frees the kernel's space within a wake-up, and records
// are only lost when the consumer falls behind by the reader's queue as
// well. Between calls of Next (attaching, re-arming counters, writing the
// profile) the reader keeps the rings empty too.

// chunk is the records of one pass over the rings, copied out.
type chunk struct {
	data    []byte
	ends    []int // end offset of each record in data
	corrupt int   // ring reads stopped at a malformed header
	// at is when the pass began (CLOCK_MONOTONIC ns): the records
	// written before are in the chunk, and the wait probes' records up
	// to there can go with them.
	at uint64
	// slack counts the passes in a row that used under a quarter of the
	// buffer (keepData).
	slack int
}

// chunks is how many passes may wait for the consumer.
const chunks = 16

// maxChunks is how many chunks there may be: those queued and those the
// consumer's batch holds (their stacks are in them) until its next call.
const maxChunks = 2 * chunks

// maxChunkKeep is the most memory a chunk keeps between passes.
const maxChunkKeep = 8 << 20

type reader struct {
	// Each holds every chunk there is (maxChunks), so no send to either
	// blocks: the reader sends to full with readMu held, which drain
	// waits for.
	full, free chan *chunk
	made       atomic.Int32 // chunks there are
	stop       chan struct{}
	done       chan struct{}
	stopped    bool
	err        error        // set before done is closed
	queued     atomic.Int64 // bytes in full chunks
}

// maxQueued is how many copied bytes may wait for the consumer: as much as
// the rings hold, twice over.
func (s *Session) maxQueued() int64 { return max(2*s.ringBytes.Load(), 4<<20) }

// startReader starts the reader goroutine.
func (s *Session) startReader() {
	rd := &reader{full: make(chan *chunk, maxChunks), free: make(chan *chunk, maxChunks), stop: make(chan struct{}), done: make(chan struct{})}
	for range keepFree {
		rd.free <- &chunk{}
	}
	rd.made.Store(keepFree)
	s.rd = rd
	go s.readLoop(rd)
}

// stopReader ends the reader goroutine; its chunks stay queued.
func (s *Session) stopReader() {
	rd := s.rd
	if rd == nil || rd.stopped {
		return
	}
	rd.stopped = true
	close(rd.stop)
	<-rd.done
}

// readLoop waits for the rings, the poll interval or the target's exit, and
// copies every ring out on each wake. Every pass sends a chunk, empty or
// not: it is also the consumer's tick.
func (s *Session) readLoop(rd *reader) {
	defer close(rd.done)
	events := make([]unix.EpollEvent, len(s.cpus)+2)
	idle := 0 // passes in a row that copied nothing
	for {
		select {
		case <-rd.stop:
			return
		default:
		}
		n, err := s.waiter.wait(events, s.pollFor(idle))
		if err != nil {
			rd.err = err
			return
		}
		if s.woken.Swap(false) {
			idle = 0 // a consumer at work: answer it promptly for a while
		}
		s.watchState(idle == 0)
		for i := 0; i < n; i++ {
			ev := events[i]
			if int(ev.Fd) == s.pidfd {
				s.exited.Store(true)
				// It stays readable: once is enough.
				unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, s.pidfd, nil)
				continue
			}
			if ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 {
				// The event's task is gone; level-triggered HUP would spin.
				// Its ring is still read below.
				unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			}
		}
		if rd.queued.Load() > s.maxQueued() {
			// The consumer is that far behind: let the rings hold the
			// rest, and the kernel count what they cannot.
			continue
		}
		var c *chunk
		select {
		case c = <-rd.free:
		default:
			if rd.made.Load() < maxChunks {
				// The consumer holds the chunks of the batch it works
				// on: one more.
				c = &chunk{}
				rd.made.Add(1)
				break
			}
			// Every chunk queued or held: wait for the consumer.
			select {
			case c = <-rd.free:
			case <-rd.stop:
				return
			}
		}
		// The rings are read and the chunk queued under readMu, so that
		// drain, holding it, finds every record copied so far queued.
		// Reconfigure holds it for as long as opening the new events
		// takes (seconds, with uprobes on a loaded machine): meanwhile
		// the reader keeps waking, to watch the target.
		if !s.readMu.TryLock() {
			s.recycle(c)
			continue
		}
		s.copyRings(c)
		if len(c.data) == 0 && n == 0 {
			idle++
		} else {
			idle = 0
		}
		rd.queued.Add(int64(len(c.data)))
		rd.full <- c
		s.readMu.Unlock()
	}
}

// copyRings copies every ring's records into c.
func (s *Session) copyRings(c *chunk) {
	c.data, c.ends, c.corrupt = c.data[:0], c.ends[:0], 0
	c.at = monoNow()
	rings := s.ringList.Load()
	if rings == nil {
		return
	}
	// The buffer is sized once for what the rings hold now, and an
	// eighth more for what comes while they are read: grown by append
	// from a dropped buffer, a pass of 2 MB made 2 MB more of garbage.
	var n uint64
	for _, r := range *rings {
		n += r.unread()
	}
	if n += n / 8; uint64(cap(c.data)) < n {
		c.data = make([]byte, 0, n)
	}
	for _, r := range *rings {
		_, corrupt := r.readAll(func(raw []byte) {
			c.data = append(c.data, raw...)
			c.ends = append(c.ends, len(c.data))
		})
		if corrupt {
			c.corrupt++
		}
	}
}

// publishRings makes the rings as they are now the ones the reader reads.
// Call it with readMu held, or while no reader runs, whenever s.rings
// changes; a ring dropped from the list may be unmapped once readMu is
// unlocked.
func (s *Session) publishRings() {
	list := make([]*ring, 0, len(s.rings))
	var n int64
	for _, cpu := range s.cpus {
		if r := s.rings[cpu]; r != nil {
			list = append(list, r)
			n += int64(len(r.data))
		}
	}
	s.ringList.Store(&list)
	s.ringBytes.Store(n)
}

// decodeChunk decodes c's records into b. Their stacks stay in c, which
// b holds until the next batch starts (a stack copy is most of a sample's
// bytes: copied once more, it was 6% of the live view's CPU).
func (s *Session) decodeChunk(c *chunk, b *Batch) {
	var rec Record
	s.horizon = max(s.horizon, c.at)
	start := 0
	b.borrowStacks = true
	for _, end := range c.ends {
		s.decodeRecord(c.data[start:end], &rec, b)
		start = end
	}
	b.borrowStacks = false
	for i := 0; i < c.corrupt; i++ {
		s.stats.corrupt.Add(1)
	}
	s.rd.queued.Add(-int64(len(c.data)))
	s.heldChunks = append(s.heldChunks, c)
}

// chunkKeepFloor is what a chunk may keep however little its last pass
// held: a pass at 1000 Hz with stack copies is about 100 KiB.
const chunkKeepFloor = 256 << 10

// keepData reports whether c keeps its buffer for the next pass: not past
// maxChunkKeep, nor once chunkSlack passes in a row have used under a
// quarter of it. Not after one such pass: the passes a ring's watermark
// wakes come between the timed ones and hold a fraction of theirs, and
// dropping the buffer at each had the reader grow a new one a few times a
// second (1.3 MB/s of garbage in the live view, most of what its collector
// worked on).
func (c *chunk) keepData() bool {
	n := cap(c.data)
	if n > maxChunkKeep {
		return false
	}
	if n <= chunkKeepFloor || len(c.data) >= n/4 {
		c.slack = 0
		return true
	}
	c.slack++
	return c.slack < chunkSlack
}

// chunkSlack is how many passes in a row a chunk may use under a quarter
// of its buffer before it lets it go.
const chunkSlack = 16

// keepFree is how many idle chunks wait for the reader: it fills one a
// pass, and more are made only while the consumer holds them. The free
// chunks are taken in turn, so each keeps a buffer the size of a pass: 8
// of them were 9 MB of a live view's 19 MB heap; one filling, one queued
// and one held by the consumer's batch is the steady state.
const keepFree = 4

// recycle gives c back to the reader. A chunk that grew for a burst (the
// backlog of a start, or of a consumer that waited) lets its buffer go once
// its passes are back to a quarter of it, and a chunk past the few idle
// ones the reader cycles through goes altogether: 32 chunks kept at their
// largest were 15 MB of a live view's 55 MB heap. (Dropping the buffers of
// idle chunks instead, while keeping the chunks, made the reader allocate
// a buffer every pass: 3x the live view's CPU.)
func (s *Session) recycle(c *chunk) {
	if !c.keepData() {
		c.data, c.slack = nil, 0
	}
	if len(s.rd.free) >= keepFree {
		s.rd.made.Add(-1) // the reader makes another when it runs short
		return
	}
	s.rd.free <- c // it has room for every chunk
}

// decodeRecord decodes one raw record and adds it to b if it is the
// target's.
func (s *Session) decodeRecord(raw []byte, rec *Record, b *Batch) {
	ok, err := s.decoder.decode(raw, rec)
	if err != nil {
		s.stats.corrupt.Add(1)
		return
	}
	if ok && s.account(rec) {
		b.add(rec)
	}
}

// storePoll publishes the configuration's poll intervals to the reader.
func (s *Session) storePoll() {
	s.poll.Store(int64(s.cfg.PollInterval))
	idle := s.cfg.IdlePoll
	if s.cfg.Follow {
		idle = 0
	}
	s.idlePoll.Store(int64(idle))
}

// pollFor is the reader's wait after idle passes in a row found nothing:
// the poll interval, doubled for each up to IdlePoll. A stopped target
// keeps the interval its state is watched at, so that its resumption is
// timed as closely as before.
func (s *Session) pollFor(idle int) time.Duration {
	base := time.Duration(s.poll.Load())
	limit := time.Duration(s.idlePoll.Load())
	if idle == 0 || limit <= base {
		return base
	}
	if s.stopped() {
		limit = min(limit, max(base, watchEvery))
	}
	return min(base<<min(idle, 16), limit)
}

// Wake makes the reader pass over the rings now, so that Next returns
// soon even while an idle target has the poll backed off: for a consumer
// that has work to do between batches (a UI's request). Safe from any
// goroutine.
func (s *Session) Wake() {
	if s.waiter == nil {
		return
	}
	s.woken.Store(true)
	s.waiter.kick()
}
