package workload

import (
	"context"
	"fmt"
	"io"
	"time"
)

// The recursive workload exercises stack shapes rather than a bias: a deep
// chain of self-recursive frames (unwinding depth, recursion merged once in
// totals) and a wide tree whose bottom fans out to several distinct leaves
// with equal counts and equal cost (many sibling contexts that should come
// out with equal shares).

func runRecursive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, t := newFlagSet("recursive", stderr, 2500*time.Millisecond, "number of rounds (one deep descent and one wide tree)")
	cfg := recursiveConfig{}
	fs.IntVar(&cfg.depth, "depth", 60, "frames of recursiveDeep in the deep chain")
	fs.IntVar(&cfg.width, "width", len(wideLeaves), fmt.Sprintf("distinct leaf functions under each wide-tree bottom node (1-%d)", len(wideLeaves)))
	fs.IntVar(&cfg.branch, "branch", 3, "branching factor of the wide tree")
	fs.IntVar(&cfg.levels, "levels", 3, "levels of recursiveWide above its leaves")
	fs.IntVar(&cfg.size, "size", 200, "work per deep level and per leaf call, in loop iterations")
	if err := parse(fs, t, args); err != nil {
		return err
	}
	switch {
	case cfg.depth <= 0:
		return usageError(fs, "-depth must be > 0")
	case cfg.width <= 0 || cfg.width > len(wideLeaves):
		return usageError(fs, fmt.Sprintf("-width must be in 1-%d", len(wideLeaves)))
	case cfg.branch <= 0:
		return usageError(fs, "-branch must be > 0")
	case cfg.levels < 0:
		return usageError(fs, "-levels must be >= 0")
	case cfg.size <= 0:
		return usageError(fs, "-size must be > 0")
	}

	s, release := t.start(ctx)
	defer release()
	var c recursiveCounts
	recursiveRounds(s, &cfg, &c)

	w := &errWriter{w: stdout}
	w.printf("rounds %d\n", c.rounds)
	edges := []edge{
		{recursiveRounds, recursiveDeep, c.deep},
		{recursiveDeep, recursiveDeep, c.deepSelf},
		{recursiveDeep, recursiveBottom, c.bottom},
		{recursiveRounds, recursiveWide, c.wide},
		{recursiveWide, recursiveWide, c.wideSelf},
	}
	for k, leaf := range wideLeaves[:cfg.width] {
		edges = append(edges, edge{recursiveWide, leaf, c.leaves[k]})
	}
	w.calls(edges)
	return w.err
}

type recursiveConfig struct {
	depth, width, branch, levels, size int
}

type recursiveCounts struct {
	rounds, deep, deepSelf, bottom, wide, wideSelf uint64
	leaves                                         [8]uint64
}

// wideLeaves are called through this table so that one loop covers any
// -width; the calls are indirect, which changes nothing for the profile.
var wideLeaves = [...]func(int){
	wideLeaf0, wideLeaf1, wideLeaf2, wideLeaf3,
	wideLeaf4, wideLeaf5, wideLeaf6, wideLeaf7,
}

//go:noinline
func recursiveRounds(s *stopper, cfg *recursiveConfig, c *recursiveCounts) {
	for r := 0; s.more(r); r++ {
		recursiveDeep(cfg.depth, cfg.size, c)
		c.deep++
		recursiveWide(cfg.levels, cfg, c)
		c.wide++
		c.rounds++
	}
}

// recursiveDeep works before recursing so that every level of the chain,
// not only the bottom, collects samples of its own.
//
//go:noinline
func recursiveDeep(level, size int, c *recursiveCounts) {
	x := uint64(level) | 1
	for i := 0; i < size; i++ {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= mixMul
	}
	var frame [2]uint64 // gives the function a stack frame: see work.go
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
	if level > 1 {
		recursiveDeep(level-1, size, c)
		c.deepSelf++
		return
	}
	// The bottom weighs as much as ten levels, so the deepest context stands
	// out in the tree.
	recursiveBottom(10 * size)
	c.bottom++
}

//go:noinline
func recursiveBottom(n int) {
	x := uint64(n) | 7
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

// recursiveWide is one node of the wide tree: inner nodes only recurse, so
// all the tree's time is in the leaves.
//
//go:noinline
func recursiveWide(level int, cfg *recursiveConfig, c *recursiveCounts) {
	if level > 0 {
		for i := 0; i < cfg.branch; i++ {
			recursiveWide(level-1, cfg, c)
			c.wideSelf++
		}
		return
	}
	for k, leaf := range wideLeaves[:cfg.width] {
		leaf(cfg.size)
		c.leaves[k]++
	}
}

// The wide leaves are identical in cost and distinct in name.

//go:noinline
func wideLeaf0(n int) {
	x := uint64(n) | 9
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

//go:noinline
func wideLeaf1(n int) {
	x := uint64(n) | 11
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

//go:noinline
func wideLeaf2(n int) {
	x := uint64(n) | 13
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

//go:noinline
func wideLeaf3(n int) {
	x := uint64(n) | 15
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

//go:noinline
func wideLeaf4(n int) {
	x := uint64(n) | 17
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

//go:noinline
func wideLeaf5(n int) {
	x := uint64(n) | 19
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

//go:noinline
func wideLeaf6(n int) {
	x := uint64(n) | 21
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

//go:noinline
func wideLeaf7(n int) {
	x := uint64(n) | 23
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
