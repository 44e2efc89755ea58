//go:build linux

package sampler

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestPauseResumeRate: a live session pauses (no samples while paused, on
// any thread), resumes, and changes its rate by reopening its events, all
// while the target runs on; Next returns every poll interval even without
// records.
func TestPauseResumeRate(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildAttachTarget(t)
	tg := startTarget(t, bin, "2", "100", "4000")
	tg.waitWorkers(t, 2)
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	count := 0
	fn := func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind == KindSample {
				count++
			}
		}
	}
	wakes := 0 // calls of Next: each returns, records or not
	phase := func(d time.Duration) int {
		count = 0
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		for done := false; !done; {
			b, err := s.Next(ctx)
			if done = errors.Is(err, io.EOF); err != nil && !done {
				t.Fatal(err)
			}
			fn(b)
			wakes++
		}
		return count
	}
	running := phase(500 * time.Millisecond)
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	phase(50 * time.Millisecond) // what was in flight
	paused := phase(500 * time.Millisecond)
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := phase(500 * time.Millisecond)
	drained, err := s.ReconfigureWith(func(c *Config) { c.Freq = 99 })
	fn(drained)
	if err != nil {
		t.Fatal(err)
	}
	slow := phase(500 * time.Millisecond)
	t.Logf("samples in 0.5 s: running %d, paused %d, resumed %d, at 99 Hz %d; %d calls of Next", running, paused, resumed, slow, wakes)
	// Two spinning workers for 0.5 s: about 1000 samples on an idle
	// machine, and still hundreds with other tests running.
	if running < 150 || resumed < 150 {
		t.Errorf("too few samples while sampling: %d, %d", running, resumed)
	}
	if paused != 0 {
		t.Errorf("%d samples while paused", paused)
	}
	if slow == 0 || slow > resumed/4 {
		t.Errorf("at 99 Hz %d samples, at 999 Hz %d", slow, resumed)
	}
	// Paused, no record comes: Next still returns every poll interval.
	if wakes < 10 {
		t.Errorf("Next returned %d times in 2 s", wakes)
	}
}
