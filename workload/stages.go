package workload

import (
	"context"
	"io"
	"time"
)

// The stages workload is the case control-flow correction (lee2007) is for:
// one basic block of stageRun calls stageParse, stageTransform and
// stageEmit, whose costs are 1:6:3. The three are called exactly as often
// (the block runs them all or none), yet a timer-driven sampler credits the
// edges with about 0.1, 0.6 and 0.3 of the calls, by their time. With no
// call counter read (--calls none), only the control flow says the edges
// are equal: stageParse's call site executes exactly as often as the
// others, each frequency-dominates the others.

func runStages(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// 1000 iterations take about 2 µs here: a stageRun call about 20 µs.
	return runStaged(ctx, "stages", args, stdout, stderr,
		"stageParse's work per call in loop iterations (stageTransform does 6 times, stageEmit 3 times as much)", "stageRun calls per round",
		stagesRounds, func(n uint64) []edge {
			return []edge{
				{stagesRounds, stageRun, n},
				{stageRun, stageParse, n},
				{stageRun, stageTransform, n},
				{stageRun, stageEmit, n},
			}
		})
}

// runStaged is the command of a workload of the stages' shape: -size and
// -calls, then rounds of calls until the end, then the rounds and the
// exact calls of its edges.
func runStaged(ctx context.Context, name string, args []string, stdout, stderr io.Writer, sizeHelp, callsHelp string,
	rounds func(s *stopper, size, calls int, rounds, n *uint64), edges func(n uint64) []edge) error {
	fs, t := newFlagSet(name, stderr, 2500*time.Millisecond, "number of rounds")
	size := fs.Int("size", 1000, sizeHelp)
	calls := fs.Int("calls", 500, callsHelp)
	if err := parse(fs, t, args); err != nil {
		return err
	}
	if *size <= 0 {
		return usageError(fs, "-size must be > 0")
	}
	if *calls <= 0 {
		return usageError(fs, "-calls must be > 0")
	}
	s, release := t.start(ctx)
	defer release()
	var r, n uint64
	rounds(s, *size, *calls, &r, &n)
	w := &errWriter{w: stdout}
	w.printf("rounds %d\n", r)
	w.calls(edges(n))
	return w.err
}

// stagesRounds checks for the end only between rounds.
//
//go:noinline
func stagesRounds(s *stopper, size, calls int, rounds, n *uint64) {
	for r := 0; s.more(r); r++ {
		for i := 0; i < calls; i++ {
			stageRun(size)
		}
		*n += uint64(calls)
		*rounds++
	}
}

// stageRun is the one basic block: three calls, no branch between them.
//
//go:noinline
func stageRun(size int) {
	stageParse(size)
	stageTransform(6 * size)
	stageEmit(3 * size)
}

// stageParse, stageTransform and stageEmit cost time linear in n, each
// seeded apart so that no linker folds them into one function.
//
//go:noinline
func stageParse(n int) {
	x := uint64(n) | 0x9e3779b97f4a7c15
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
func stageTransform(n int) {
	x := uint64(n) | 0xbf58476d1ce4e5b9
	for i := 0; i < n; i++ {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= mixMul
	}
	var frame [2]uint64
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
}

//go:noinline
func stageEmit(n int) {
	x := uint64(n) | 0x94d049bb133111eb
	for i := 0; i < n; i++ {
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		x *= mixMul
	}
	var frame [2]uint64
	frame[x&1] = x
	sink.Store(frame[0] ^ frame[1])
}
