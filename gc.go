package main

import (
	"os"
	"runtime"
	"runtime/debug"
)

// profilerGCPercent is the heap growth the profiling commands allow between
// collections. Their heap is mostly tables kept for the whole run (symbols,
// the tree, the sample log) and the batches passing through; Go's default
// (100) lets it reach twice the tables before collecting, which was half of
// `cctop top`'s resident memory. The big tables hold no pointers, so the
// extra collections cost little to mark: at 35 rather than 50, the
// collector's share of the live view's CPU went from about 2% to 3%
// (BENCHMARKS.md, issue 34), and an hour's peak lost a tenth of the heap.
const profilerGCPercent = 35

// tuneRuntime sets profilerGCPercent, unless GOGC says otherwise, and fixes
// GOMAXPROCS at the value the runtime chose, unless GOMAXPROCS says
// otherwise. Setting it stops the runtime's check of the CPU affinity and
// the cgroup's CPU limit, once a second for the whole run: four system
// calls, each of which wakes the runtime's monitor thread from its sleep
// when cctop is otherwise idle, as a live view mostly is.
func tuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(profilerGCPercent)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	}
}
