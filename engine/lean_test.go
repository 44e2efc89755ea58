package engine

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's allowance.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestLean: an export runs under a tenth's allowance, or the user's if it
// is less (GOGC=off included), the allowance is put back after, and the
// memory the export freed is the system's again at once.
func TestLean(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	var sink [][]byte
	err := lean(func() error {
		if p := gcPercent(); p != leanGCPercent {
			t.Errorf("during an export the allowance is %d, want %d", p, leanGCPercent)
		}
		for range 64 {
			sink = append(sink, make([]byte, 1<<20))
		}
		return nil
	})
	if err != nil || len(sink) != 64 {
		t.Fatal(err)
	}
	sink = nil
	if p := gcPercent(); p != 50 {
		t.Errorf("after an export the allowance is %d, want 50 back", p)
	}
	// The 64 MB are garbage now: collected, their pages are free but
	// still the process's until something hands them back.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if kept := ms.HeapIdle - ms.HeapReleased; kept < 32<<20 {
		t.Skipf("the runtime handed back the pages itself (%d MB kept)", kept>>20)
	}
	lean(func() error { return nil })
	runtime.ReadMemStats(&ms)
	if kept := ms.HeapIdle - ms.HeapReleased; kept > 8<<20 {
		t.Errorf("after an export %d MB of free heap is still the process's", kept>>20)
	}

	debug.SetGCPercent(-1)
	lean(func() error {
		if p := gcPercent(); p != -1 {
			t.Errorf("GOGC=off: during an export the allowance is %d", p)
		}
		return nil
	})
	debug.SetGCPercent(5)
	lean(func() error {
		if p := gcPercent(); p != 5 {
			t.Errorf("GOGC=5: during an export the allowance is %d", p)
		}
		return nil
	})
}
