package exporter

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// maxBackoffStep caps the retry number given to Backoff.Delay: the delay has
// long reached Max by then.
const maxBackoffStep = 64

// run is the exporter's goroutine: it sends the queue's head, one call at a
// time (the order of windows is their time order), until Close stops it or the
// exporter gives up.
func (e *Exporter) run() {
	defer func() {
		e.mu.Lock()
		e.stopped = true
		e.mu.Unlock()
		close(e.done)
	}()
	step := 0 // failed attempts in a row: the collector's state, not the window's
	for {
		w, ok := e.next()
		if !ok {
			return
		}
		e.reconnect()
		ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(e.runCtx, e.md), e.cfg.Timeout)
		resp, err := e.client.Export(ctx, pprofileotlp.NewExportRequestFromProfiles(w.p))
		cancel()
		if err == nil {
			e.delivered(w, resp)
			step = 0
			continue
		}
		if e.runCtx.Err() != nil { // Close's deadline: the window stays queued, to be counted
			e.mu.Lock()
			e.q.busy = false
			e.mu.Unlock()
			return
		}
		f := e.classify(err)
		switch f.verdict {
		case fatal:
			e.mu.Lock()
			e.q.busy = false // so that giveUp drops it with the rest
			e.mu.Unlock()
			e.giveUp(f.err)
			return
		case refused:
			e.refuse(f.err)
			step = 0 // the collector answered: it is up
			continue
		}
		e.willRetry(f.err)
		wait := e.cfg.Backoff.Delay(step, rand.Float64())
		step = min(step+1, maxBackoffStep)
		if f.delay > wait {
			wait = f.delay
		}
		// A wait the server asked for (RetryInfo) is never cut short, even
		// when our own backoff made it longer.
		if !e.sleep(wait, f.delay == 0) {
			return
		}
	}
}

// reconnect makes our retry schedule, not gRPC's reconnect backoff, say when
// the collector is tried again. After a failed connection gRPC fails calls at
// once with the old error until its own timer (up to Backoff.Max) has a new
// connection up, so a retry, or Close's last try, would not see a collector
// that is back. So when the connection is down, reconnect now and give it up
// to Backoff.Initial to come up; the channel stays TRANSIENT_FAILURE until it
// is READY, so a collector still down costs that wait.
func (e *Exporter) reconnect() {
	if e.conn.GetState() != connectivity.TransientFailure {
		return
	}
	e.conn.ResetConnectBackoff()
	ctx, cancel := context.WithTimeout(e.runCtx, min(e.cfg.Backoff.Initial, e.cfg.Timeout))
	defer cancel()
	for s := e.conn.GetState(); s == connectivity.TransientFailure && e.conn.WaitForStateChange(ctx, s); s = e.conn.GetState() {
	}
}

// next marks the queue's head busy and returns it, waiting for one to be
// queued. It returns false when Close stops the sender or the exporter gave up
// (then it drops what is left).
func (e *Exporter) next() (window, bool) {
	for {
		e.mu.Lock()
		if e.fatal != nil {
			e.st.Dropped += uint64(e.q.clear())
			e.idleLocked()
			e.mu.Unlock()
			return window{}, false
		}
		if e.runCtx.Err() != nil {
			e.mu.Unlock()
			return window{}, false
		}
		if e.q.n > 0 {
			e.q.busy = true
			w := e.q.front()
			e.mu.Unlock()
			return w, true
		}
		e.mu.Unlock()
		select {
		case <-e.wake:
		case <-e.runCtx.Done():
			return window{}, false
		}
	}
}

// sleep waits d before a retry. Close cuts one wait short (if cuttable: never
// one the server asked for) so that a collector that is back gets the queue
// before Close's deadline rather than after a 30 s backoff. It returns false
// if Close stopped the sender.
func (e *Exporter) sleep(d time.Duration, cuttable bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var closing <-chan struct{}
	if cuttable && !e.cutShort {
		closing = e.closing
	}
	select {
	case <-t.C:
		return true
	case <-closing:
		e.cutShort = true
		return true
	case <-e.runCtx.Done():
		return false
	}
}

// idleLocked wakes Flush when the queue is empty.
func (e *Exporter) idleLocked() {
	if e.q.n == 0 {
		close(e.idle)
		e.idle = make(chan struct{})
	}
}

func (e *Exporter) delivered(w window, resp pprofileotlp.ExportResponse) {
	now := time.Now()
	e.mu.Lock()
	e.q.pop() // the busy head is w: nothing drops it
	e.st.Sent++
	e.st.SentBytes += uint64(w.size)
	e.st.LastSuccess = now
	partial := false
	if ps := resp.PartialSuccess(); ps.RejectedProfiles() != 0 || ps.ErrorMessage() != "" {
		partial = true
		e.st.RejectedProfiles += ps.RejectedProfiles()
		e.st.PartialMessage = oneLine(ps.ErrorMessage())
	}
	e.idleLocked()
	s := e.statsLocked()
	e.mu.Unlock()
	e.log.recovered(e, s, now)
	if partial {
		e.log.partial(e, s, now)
	}
	e.log.drops(e, s, now)
}

func (e *Exporter) refuse(err error) {
	now := time.Now()
	e.mu.Lock()
	e.q.pop()
	e.st.Failed++
	e.st.LastError, e.st.LastErrorTime = err, now
	e.idleLocked()
	s := e.statsLocked()
	e.mu.Unlock()
	e.log.recovered(e, s, now)
	e.log.refused(e, s, err, now)
	e.log.drops(e, s, now)
}

func (e *Exporter) willRetry(err error) {
	now := time.Now()
	e.mu.Lock()
	e.q.busy = false
	e.st.Retries++
	e.st.LastError, e.st.LastErrorTime = err, now
	s := e.statsLocked()
	e.mu.Unlock()
	e.log.retrying(e, s, err, now)
	e.log.drops(e, s, now)
}

// giveUp records a permanent failure: windows queued are dropped, Enqueue
// refuses new ones, and Failed is closed. A window in an attempt (Check may
// give up while the sender sends) is left to its attempt.
func (e *Exporter) giveUp(err error) {
	e.mu.Lock()
	if e.fatal != nil {
		e.mu.Unlock()
		return
	}
	e.fatal = err
	for e.q.dropOldestWaiting() {
		e.st.Dropped++
	}
	if !e.q.busy {
		e.st.Dropped += uint64(e.q.clear())
	}
	e.st.LastError, e.st.LastErrorTime = err, time.Now()
	e.idleLocked()
	close(e.failed)
	e.mu.Unlock()
	e.logf("%v; giving up", err)
}

func (e *Exporter) statsLocked() Stats {
	s := e.st
	s.Queued, s.QueuedBytes = e.q.n, e.q.bytes
	return s
}
