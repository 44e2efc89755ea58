//go:build linux

package sampler

import (
	"context"
	"testing"
	"time"
)

// TestTrialBreakpoints: on a real process, a breakpoint trial counts the
// calls of each function in the watched thread as the program makes them
// (leaf is called -calls times by site_c, and as often by site_d, per
// round), a window stopped early
// by enough is short, and the events are gone when it returns; a uprobe
// trial on the same functions agrees on the ratio.
func TestTrialBreakpoints(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildCalls(t)
	skipIfNoUprobes(t, bin)
	if c, err := OpenBreakpointCounter(0x1000, 0); err != nil {
		t.Skipf("no hardware breakpoints here: %v", err)
	} else {
		c.Close()
	}
	const calls = 50
	s, err := Open(Config{
		Argv:     []string{bin, "100000000", "50", "300"},
		UserOnly: true,
		Stdout:   new(nopWriter),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	specs := []EventSpec{uprobeSpec(t, bin, "leaf"), uprobeSpec(t, bin, "site_c")}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var tid int
	var bp, early, up *ProbeTrial
	var bpErr, earlyErr, upErr error
	s.Run(ctx, func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind == KindSample && tid == 0 {
				tid = int(r.TID)
			}
		}
		if tid == 0 || bp != nil || bpErr != nil {
			return
		}
		bp, bpErr = s.TrialBreakpoints(specs, []int{tid}, 50*time.Millisecond, 0, nil)
		early, earlyErr = s.TrialBreakpoints(specs, []int{tid}, 200*time.Millisecond, 5*time.Millisecond,
			func(h []uint64, cpu time.Duration) bool { return h[0] > 0 })
		up, upErr = s.TrialProbes(specs, []int{tid}, 50*time.Millisecond)
		if up != nil {
			up.Close()
		}
		cancel()
	})
	if bpErr != nil || earlyErr != nil || upErr != nil {
		t.Fatalf("trials: breakpoints %v, early %v, uprobes %v", bpErr, earlyErr, upErr)
	}
	if bp == nil {
		t.Fatal("no sample of the target: no trial ran")
	}
	for name, tr := range map[string]*ProbeTrial{"breakpoints": bp, "uprobes": up} {
		if tr.CPU < 10*time.Millisecond || tr.Hits[1] < 5 {
			t.Errorf("%s: %v of CPU, hits %v: too little to tell", name, tr.CPU, tr.Hits)
			continue
		}
		if r := float64(tr.Hits[0]) / float64(tr.Hits[1]); r < 2*calls*0.8 || r > 2*calls*1.25 {
			t.Errorf("%s: leaf %d calls, site_c %d: ratio %.0f, want about %d", name, tr.Hits[0], tr.Hits[1], r, 2*calls)
		}
	}
	if early.CPU > 50*time.Millisecond || early.Hits[0] == 0 {
		t.Errorf("the early stop ran %v of CPU with %v hits, want about 5 ms", early.CPU, early.Hits)
	}
	for i := range bp.fds {
		if len(bp.fds[i]) != 0 {
			t.Errorf("the breakpoint trial left events open: %v", bp.fds)
		}
	}
}
