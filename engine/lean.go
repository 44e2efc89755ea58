package engine

import "runtime/debug"

// leanGCPercent is the collector's allowance while an export runs.
const leanGCPercent = 10

// lean runs f, an export: a burst of allocations (the pprof profile's
// samples, locations and labels, then its encoding) that is all garbage
// once the file is written. Under the profiling commands' allowance (GOGC
// 50) the heap grew by half again of the export's own size before a
// collection, and the pages stayed with the process until the scavenger's
// slow return: each `x` of a long live session added 8-10 MB to its peak.
// While f runs the collector allows a tenth over what is live, and what f
// freed goes back to the system at once after.
func lean(f func() error) error {
	old := debug.SetGCPercent(leanGCPercent)
	if old < leanGCPercent {
		debug.SetGCPercent(old) // the user asked for less, or none (GOGC=off)
	}
	err := f()
	debug.SetGCPercent(old)
	debug.FreeOSMemory()
	return err
}
