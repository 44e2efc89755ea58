// A Go target whose hot code is inlined: mix is small enough for the
// compiler to inline into spin, which runs on two goroutines besides main.
package main

import (
	"os"
	"strconv"
	"time"
)

var sink [3]uint64

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	return x ^ x>>29
}

//go:noinline
func spin(id int, until time.Time) {
	x := uint64(id + 1)
	for time.Now().Before(until) {
		for i := 0; i < 100000; i++ {
			x = mix(x + uint64(i))
		}
	}
	sink[id] = x
}

func main() {
	secs, _ := strconv.ParseFloat(os.Args[1], 64)
	until := time.Now().Add(time.Duration(secs * float64(time.Second)))
	done := make(chan bool)
	for id := 1; id <= 2; id++ {
		go func() { spin(id, until); done <- true }()
	}
	spin(0, until)
	<-done
	<-done
}
