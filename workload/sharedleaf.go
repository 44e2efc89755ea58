package workload

import (
	"context"
	"io"
)

// The sharedleaf workload is stages' shape as real code has it: one basic
// block of sharedRun calls sharedParse, sharedTransform and sharedEmit,
// and each spends its time in one shared leaf, sharedLeaf (as code does in
// memcpy, hashing or allocation), with work 1:6:3. The stages take no
// sample of their own, so a timer-driven sampler gives their edges nothing
// and the leaf's three contexts 0.1, 0.6 and 0.3 of the calls, where all
// seven edges below sharedRounds' loop are called equally often. FDOM
// within one function relates nothing here (each stage has one call site);
// only the relations between levels of the calling context tree do: each
// call is in a block that runs once per call of its caller (issue 29).

func runSharedLeaf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runStaged(ctx, "sharedleaf", args, stdout, stderr,
		"sharedParse's leaf work per call in loop iterations (sharedTransform's is 6 times, sharedEmit's 3 times as much)", "sharedRun calls per round",
		sharedRounds, func(n uint64) []edge {
			return []edge{
				{sharedRounds, sharedRun, n},
				{sharedRun, sharedParse, n},
				{sharedRun, sharedTransform, n},
				{sharedRun, sharedEmit, n},
				{sharedParse, sharedLeaf, n},
				{sharedTransform, sharedLeaf, n},
				{sharedEmit, sharedLeaf, n},
			}
		})
}

// sharedRounds checks for the end only between rounds.
//
//go:noinline
func sharedRounds(s *stopper, size, calls int, rounds, n *uint64) {
	for r := 0; s.more(r); r++ {
		for i := 0; i < calls; i++ {
			sharedRun(size)
		}
		*n += uint64(calls)
		*rounds++
	}
}

// sharedRun is one basic block of three calls, as stageRun.
//
//go:noinline
func sharedRun(size int) {
	sharedParse(size)
	sharedTransform(6 * size)
	sharedEmit(3 * size)
}

// sharedParse, sharedTransform and sharedEmit only call the leaf: a stack
// frame and one call each, no loop and no branch but Go's stack check. The
// seeds keep a linker from folding the three into one function.
//
//go:noinline
func sharedParse(n int) { sharedLeaf(n, 0x9e3779b97f4a7c15) }

//go:noinline
func sharedTransform(n int) { sharedLeaf(n, 0xbf58476d1ce4e5b9) }

//go:noinline
func sharedEmit(n int) { sharedLeaf(n, 0x94d049bb133111eb) }

// sharedLeaf costs time linear in n.
//
//go:noinline
func sharedLeaf(n int, seed uint64) {
	x := uint64(n) | seed
	for i := 0; i < n; i++ {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= mixMul
	}
	var frame [2]uint64 // gives the function a stack frame: see work.go
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
}
