package exporter

import "time"

// logState keeps a collector that is down from flooding the agent's log: each
// kind of trouble gets a line when it starts (or stops), then at most one per
// LogEvery while it lasts. Only the sender's goroutine touches it.
type logState struct {
	every time.Duration

	down      bool
	downSince time.Time
	retriesAt uint64 // Stats.Retries when the failure began
	lastDown  time.Time

	dropsSeen uint64 // Stats.Dropped at the last drop line
	lastDrops time.Time

	refusedSeen uint64
	lastRefused time.Time

	rejectedSeen int64
	lastPartial  time.Time
}

func (e *Exporter) logf(format string, args ...any) {
	if e.cfg.Logf != nil {
		e.cfg.Logf(format, args...)
	}
}

// due reports whether a repeated line may be logged now.
func (l *logState) due(last, now time.Time) bool {
	return last.IsZero() || now.Sub(last) >= l.every
}

func (l *logState) retrying(e *Exporter, s Stats, err error, now time.Time) {
	if !l.down {
		l.down, l.downSince, l.retriesAt, l.lastDown = true, now, s.Retries-1, now
		e.logf("%v; will retry", err)
		return
	}
	if l.due(l.lastDown, now) {
		l.lastDown = now
		e.logf("%v; failing for %s, %d retries, %d windows queued", err,
			now.Sub(l.downSince).Round(time.Second), s.Retries-l.retriesAt, s.Queued)
	}
}

func (l *logState) recovered(e *Exporter, s Stats, now time.Time) {
	if !l.down {
		return
	}
	l.down = false
	e.logf("otlp %s: delivering again after %s and %d retries", e.cfg.Endpoint,
		now.Sub(l.downSince).Round(time.Millisecond), s.Retries-l.retriesAt)
}

func (l *logState) drops(e *Exporter, s Stats, now time.Time) {
	if s.Dropped == l.dropsSeen || !l.due(l.lastDrops, now) {
		return
	}
	e.logf("otlp %s: queue full: dropped %d windows (oldest first), %d in all", e.cfg.Endpoint,
		s.Dropped-l.dropsSeen, s.Dropped)
	l.dropsSeen, l.lastDrops = s.Dropped, now
}

func (l *logState) refused(e *Exporter, s Stats, err error, now time.Time) {
	if !l.due(l.lastRefused, now) {
		return
	}
	e.logf("%v; dropped %d windows the collector refused (%d in all)", err, s.Failed-l.refusedSeen, s.Failed)
	l.refusedSeen, l.lastRefused = s.Failed, now
}

func (l *logState) partial(e *Exporter, s Stats, now time.Time) {
	if !l.due(l.lastPartial, now) {
		return
	}
	e.logf("otlp %s: collector rejected %d profiles: %s", e.cfg.Endpoint,
		s.RejectedProfiles-l.rejectedSeen, s.PartialMessage)
	l.rejectedSeen, l.lastPartial = s.RejectedProfiles, now
}
