package main

import (
	"os"
	"runtime/debug"
)

// profilerGCPercent is the heap growth the profiling commands allow between
// collections. Their heap is mostly tables kept for the whole run (symbols,
// the tree, the sample log) and the batches passing through; Go's default
// (100) lets it reach twice the tables before collecting, which was half of
// `cctop top`'s resident memory. The big tables hold no pointers, so the
// extra collections cost little to mark.
const profilerGCPercent = 50

// tuneGC sets profilerGCPercent, unless GOGC says otherwise.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(profilerGCPercent)
	}
}
