//go:build linux

package sampler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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
	wakes := 0        // calls of Next: each returns, records or not
	var cpu []float64 // the target's CPU in each phase, ms
	phase := func(d time.Duration) int {
		count = 0
		before := cpuMillis(tg.pid)
		defer func() { cpu = append(cpu, cpuMillis(tg.pid)-before) }()
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
	// cpu: running, in flight, paused, resumed, at 99 Hz.
	t.Logf("samples in 0.5 s: running %d, paused %d, resumed %d, at 99 Hz %d; %d calls of Next; the target's CPU in each phase %.0f ms", running, paused, resumed, slow, wakes, cpu)
	// Two spinning workers for 0.5 s: about 1000 samples on an idle
	// machine. With other tests running the target gets less CPU, and at
	// 999 Hz a sample stands for a millisecond of it: what is asked is
	// half the samples its CPU time makes, where it got enough to tell.
	for _, p := range []struct {
		name    string
		samples int
		cpu     float64
	}{{"running", running, cpu[0]}, {"resumed", resumed, cpu[3]}} {
		if p.cpu < 100 {
			t.Logf("%s: the target had %.0f ms of CPU, too little to judge", p.name, p.cpu)
			continue
		}
		if float64(p.samples) < p.cpu/2 {
			t.Errorf("%s: %d samples for %.0f ms of the target's CPU at 999 Hz", p.name, p.samples, p.cpu)
		}
	}
	if paused != 0 {
		t.Errorf("%d samples while paused", paused)
	}
	// Per millisecond of the target's CPU, 99 Hz takes a tenth of 999 Hz.
	if cpu[3] >= 100 && cpu[4] >= 100 && (slow == 0 || float64(slow)/cpu[4] > float64(resumed)/cpu[3]/4) {
		t.Errorf("at 99 Hz %d samples in %.0f ms of CPU, at 999 Hz %d in %.0f ms", slow, cpu[4], resumed, cpu[3])
	}
	// Paused, no record comes: Next still returns every poll interval.

	if wakes < 10 {
		t.Errorf("Next returned %d times in 2 s", wakes)
	}
}

// cpuMillis is the user and system time of process pid so far, in ms
// (clock ticks of 10 ms).
func cpuMillis(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) * 1000 / 100
}
