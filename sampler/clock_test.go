//go:build linux

package sampler

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMonoNowIsClockMonotonic: MonoNow reads the clock perf stamps records
// with under use_clockid CLOCK_MONOTONIC, not another monotonic clock
// (CLOCK_BOOTTIME, or one with an offset, would put every record's time
// off by the machine's suspended time or the offset).
func TestMonoNowIsClockMonotonic(t *testing.T) {
	for range 5 {
		var ts unix.Timespec
		a := MonoNow()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Skip(err)
		}
		b := MonoNow()
		k := uint64(ts.Nano())
		if a <= k && k <= b && b-a < 1e7 {
			return
		}
		t.Logf("MonoNow %d, CLOCK_MONOTONIC %d, MonoNow %d", a, k, b)
	}
	t.Fatal("CLOCK_MONOTONIC was never between two MonoNow readings")
}
