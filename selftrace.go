package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// startSelfTrace writes the Go runtime's execution trace of cctop itself to
// the file CCTOP_TRACE names, and its allocations over its life (pprof's
// allocs profile) to the file CCTOP_ALLOCS names, for the engineers
// measuring what wakes it and what its collector works on; it returns the
// stop.
func startSelfTrace(stderr io.Writer) func() {
	if path := os.Getenv("CCTOP_ALLOCS"); path != "" {
		// Reachable, runtime.MemProfile keeps the linker from turning
		// the sampling of allocations off (pprof's writer reaches the
		// records another way).
		runtime.MemProfile(nil, true)
		stopTrace := startTrace(os.Getenv("CCTOP_TRACE"), stderr)
		write := func(path string) {
			runtime.GC() // the profile is as of the last collection
			f, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
			if err != nil {
				fmt.Fprintf(stderr, "cctop: CCTOP_ALLOCS: %v\n", err)
			}
		}
		// CCTOP_ALLOCS_AT=SECONDS also writes PATH.base then, for
		// go tool pprof -base: what the steady state allocates.
		if d, err := time.ParseDuration(os.Getenv("CCTOP_ALLOCS_AT") + "s"); err == nil && d > 0 {
			time.AfterFunc(d, func() { write(path + ".base") })
		}
		return func() {
			stopTrace()
			write(path)
		}
	}
	return startTrace(os.Getenv("CCTOP_TRACE"), stderr)
}

func startTrace(path string, stderr io.Writer) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "cctop: CCTOP_TRACE: %v\n", err)
		return func() {}
	}
	if err := trace.Start(f); err != nil {
		fmt.Fprintf(stderr, "cctop: CCTOP_TRACE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		trace.Stop()
		f.Close()
	}
}
