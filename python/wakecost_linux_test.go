//go:build linux

package python

import "testing"

// The thread's CPU clock sees a sleep's wake: some µs, not nothing, and not
// the sleep itself (200 µs each).
func TestWakeCost(t *testing.T) {
	w := wakeCost()
	if w == 0 || w >= 150e3 {
		t.Fatalf("wakeCost = %d ns; want more than 0, less than a sleep", w)
	}
	t.Logf("a sleep and its wake: %.1f µs of the thread's CPU time", float64(w)/1e3)
}
