//go:build !linux

package python

import "time"

// rawSleepUntil sleeps until the monotonic clock reads t (ns).
func rawSleepUntil(t uint64) {
	if d := int64(t) - int64(monoNow()); d > 0 {
		time.Sleep(time.Duration(d))
	}
}

func threadCPU() uint64  { return 0 }
func processCPU() uint64 { return 0 }
