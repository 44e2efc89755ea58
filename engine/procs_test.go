package engine

import "testing"

// TestProcGovernor: the live view's Ps follow cctop's CPU time: one after
// procsQuiet light seconds in a row, not before; procsBusy at once when a
// second is heavy, never above what the runtime chose; two at least while
// the Python poller holds a P; nothing between judgements a second apart.
func TestProcGovernor(t *testing.T) {
	for _, c := range []struct {
		name   string
		max    int
		shares []float64 // cores used, second by second
		held   bool
		want   []int // GOMAXPROCS after each second
	}{
		{"light", 8, []float64{0.05, 0.05, 0.05, 0.05}, false, []int{8, 8, 1, 1}},
		{"light, then heavy", 8, []float64{0.05, 0.05, 0.05, 0.9, 0.3, 0.1, 0.1, 0.1}, false, []int{8, 8, 1, 4, 4, 4, 4, 1}},
		{"a middling second restarts the count", 8, []float64{0.05, 0.05, 0.3, 0.05, 0.05, 0.05}, false, []int{8, 8, 8, 8, 8, 1}},
		{"two CPUs", 2, []float64{0.9, 0.05, 0.05, 0.05}, false, []int{2, 2, 2, 1}},
		{"the poller holds a P", 8, []float64{0.05, 0.05, 0.05, 0.05}, true, []int{8, 8, 2, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			procs := c.max
			var cpu, now uint64 = 1, 1e9
			g := &procGovernor{max: c.max, cur: c.max, held: func() bool { return c.held },
				set: func(n int) int {
					old := procs
					if n > 0 {
						procs = n
					}
					return old
				},
				clock: func() uint64 { return cpu }}
			g.judge(now)
			for i, share := range c.shares {
				// Half a second: no judgement.
				now += 5e8
				cpu += uint64(share * 5e8)
				g.judge(now)
				if i > 0 && procs != c.want[i-1] {
					t.Fatalf("second %d: %d Ps between judgements, want %d still", i, procs, c.want[i-1])
				}
				now += 5e8
				cpu += uint64(share * 5e8)
				g.judge(now)
				if procs != c.want[i] {
					t.Fatalf("after second %d (%.2f of a core): %d Ps, want %d", i, share, procs, c.want[i])
				}
			}
		})
	}
	t.Setenv("GOMAXPROCS", "3")
	if g := newProcGovernor(nil); !g.off {
		t.Error("GOMAXPROCS set by the user, and the governor would change it")
	}
}
