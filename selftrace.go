package main

import (
	"fmt"
	"io"
	"os"
	"runtime/trace"
)

// startSelfTrace writes the Go runtime's execution trace of cctop itself to
// the file CCTOP_TRACE names, for the engineers measuring what wakes it
// (bench/tui_cpu.sh's PROFILE=trace reads it); it returns the stop.
func startSelfTrace(stderr io.Writer) func() {
	path := os.Getenv("CCTOP_TRACE")
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
