// Command heapprog writes a Go heap profile to its argument: main.holdBig holds 4 MiB,
// main.holdSmall 1 MiB, and main.churn allocated 62.5 MiB that it did not keep, so
// inuse_space and alloc_space rank them differently (TestViewHeapInTmux). With a second
// argument, "half", main.holdBig holds 2 MiB: a base to diff against.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

var sink []byte

//go:noinline
func holdBig(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64<<10))
	}
}

//go:noinline
func holdSmall() {
	for i := 0; i < 16; i++ {
		keep = append(keep, make([]byte, 64<<10))
	}
}

//go:noinline
func churn() {
	for i := 0; i < 4000; i++ {
		sink = make([]byte, 16<<10)
	}
}

func main() {
	runtime.MemProfileRate = 1
	n := 64
	if len(os.Args) > 2 && os.Args[2] == "half" {
		n = 32
	}
	holdBig(n)
	holdSmall()
	churn()
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		panic(err)
	}
	if err := f.Close(); err != nil {
		panic(err)
	}
}
