//go:build linux

package sampler

import (
	"context"
	"testing"
	"time"
)

// TestIdlePollBacksOffAndWakes: on a target that sends nothing, the passes
// over the rings space out towards IdlePoll, and Wake brings the next one
// at once: a consumer's request is not left waiting for the backed-off poll.
func TestIdlePollBacksOffAndWakes(t *testing.T) {
	skipIfNoPerf(t)
	const idlePoll = 8 * time.Second
	s, err := Open(Config{Argv: []string{"sleep", "60"}, UserOnly: true, PollInterval: 50 * time.Millisecond, IdlePoll: idlePoll})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer s.Stop(time.Second)
	ctx := context.Background()
	// Passes in a row that find nothing: 50, 100, 200, ... ms.
	start := time.Now()
	passes := 0
	for time.Since(start) < 3*time.Second {
		if _, err := s.Next(ctx); err != nil {
			t.Fatal(err)
		}
		passes++
	}
	// At a fixed 50 ms poll that would be 60 passes.
	if passes > 15 {
		t.Errorf("%d passes in 3 s of an idle target: the poll did not back off", passes)
	}
	// The next wait is seconds long now; Wake ends it.
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.Wake()
	}()
	at := time.Now()
	if _, err := s.Next(ctx); err != nil {
		t.Fatal(err)
	}
	// The wait it ended had 3 s to run (the 50 ms doubled six times).
	if d := time.Since(at); d > 1500*time.Millisecond {
		t.Errorf("Next returned %v after the Wake's call, the backed-off poll's time: Wake did not end the wait", d)
	}
}
