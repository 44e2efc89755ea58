// Package workload owns cctop's built-in target programs: small, deterministic
// CPU workloads that are profiled by the sampler, used as ground truth by the
// evaluation, and run by the demo (`cctop workload NAME [flags]`). On Linux
// there are also off-CPU workloads (see offcpu_linux.go), whose threads block
// in system calls, for off-CPU and wall-clock profiling.
//
// Each workload is shaped to expose one sampling bias or unwinding case
// (call density, lock latency, deep and wide stacks, short-lived threads) and
// prints, at exit, the exact number of calls along its instrumented call
// edges, one line per edge:
//
//	calls <caller> -> <callee> <count>
//
// with function names as runtime.FuncForPC prints them, so that a profile's
// edge weights can be compared with the truth. Other result lines start with
// a different word and can be skipped by parsers.
//
// The functions named in those lines are marked //go:noinline and compute in
// registers, so that they keep their own frames (frame-pointer unwinding and
// uprobes need them) and their cost is what the flags say it is.
package workload

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// runFunc runs one workload until it is done or ctx is cancelled; it parses
// args itself so that each workload documents its own flags.
type runFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) error

type entry struct {
	name string
	run  runFunc
}

// registry is in the order Names reports. The off-CPU workloads come last and
// exist only where they can block the way they must (Linux).
var registry = append([]entry{
	{"density", runDensity},
	{"latency", runLatency},
	{"recursive", runRecursive},
	{"stages", runStages},
	{"sharedleaf", runSharedLeaf},
	{"threads", runThreads},
	{"spin", runSpin},
}, offCPUWorkloads...)

// Names lists the workloads Run accepts.
func Names() []string {
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = e.name
	}
	return names
}

// Run runs the workload called name with its command-line args. SIGINT and
// SIGTERM end it early but cleanly: the counts are still printed and Run
// returns nil. Bad flags return an error (flag.ErrHelp for -h).
func Run(name string, args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, name, args, stdout, stderr)
}

// run is Run without the signal handling, so tests can end a -loop run
// without signalling the test process.
func run(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	for _, e := range registry {
		if e.name == name {
			return e.run(ctx, args, stdout, stderr)
		}
	}
	return fmt.Errorf("unknown workload %q (known: %s)", name, strings.Join(Names(), ", "))
}

// timing holds the flags that decide when a workload ends.
type timing struct {
	duration time.Duration
	loop     bool
	rounds   int // 0 unless the workload has -rounds and it was set

	// defaultRounds, when > 0, is the number of rounds to run when none of
	// -rounds, -duration and -loop is given: a workload whose truth is best
	// compared round for round defaults to a fixed amount of work, and
	// -duration still bounds it by time when asked to. Set it before parse.
	defaultRounds int
}

// newFlagSet returns a flag set for workload name with the ending flags;
// roundsHelp, when not empty, adds -rounds with that meaning.
func newFlagSet(name string, stderr io.Writer, duration time.Duration, roundsHelp string) (*flag.FlagSet, *timing) {
	fs := flag.NewFlagSet("workload "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	t := &timing{}
	fs.DurationVar(&t.duration, "duration", duration, "how long to run")
	fs.BoolVar(&t.loop, "loop", false, "run until SIGINT or SIGTERM (overrides -duration and -rounds)")
	if roundsHelp != "" {
		fs.IntVar(&t.rounds, "rounds", 0, roundsHelp+"; when > 0 it replaces -duration")
	}
	return fs, t
}

// parse parses args and rejects what the flag package lets through.
func parse(fs *flag.FlagSet, t *timing, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fs, fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if t.rounds < 0 {
		return usageError(fs, "-rounds must be >= 0")
	}
	if t.defaultRounds > 0 {
		given := false
		fs.Visit(func(f *flag.Flag) {
			given = given || f.Name == "rounds" || f.Name == "duration" || f.Name == "loop"
		})
		if !given {
			t.rounds = t.defaultRounds
		}
	}
	if t.loop {
		t.rounds = 0
	}
	if !t.loop && t.rounds == 0 && t.duration <= 0 {
		return usageError(fs, "-duration must be > 0")
	}
	return nil
}

// usageError reports a bad flag value the way the flag package reports an
// unknown flag: message and usage on the flag set's output.
func usageError(fs *flag.FlagSet, msg string) error {
	err := fmt.Errorf("%s: %s", fs.Name(), msg)
	fmt.Fprintln(fs.Output(), err)
	fs.Usage()
	return err
}

// stopper turns "duration elapsed or context cancelled" into a flag that hot
// loops poll for the price of an atomic load, and a channel for code that
// sleeps.
type stopper struct {
	flag   atomic.Bool
	done   chan struct{}
	quit   chan struct{}
	rounds int
}

// start begins watching for the end; release must be called to free the
// watcher.
func (t *timing) start(ctx context.Context) (s *stopper, release func()) {
	s = &stopper{done: make(chan struct{}), quit: make(chan struct{}), rounds: t.rounds}
	var timer *time.Timer
	var expire <-chan time.Time
	if !t.loop && t.rounds == 0 {
		timer = time.NewTimer(t.duration)
		expire = timer.C
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-expire:
		case <-s.quit:
		}
		s.flag.Store(true)
		close(s.done)
	}()
	return s, func() {
		if timer != nil {
			timer.Stop()
		}
		close(s.quit)
		<-s.done
	}
}

// stopped reports whether the workload should wrap up.
func (s *stopper) stopped() bool { return s.flag.Load() }

// more reports whether a workload that has completed r rounds should run
// another one.
func (s *stopper) more(r int) bool {
	return !s.stopped() && (s.rounds == 0 || r < s.rounds)
}

// errWriter keeps the first write error so result printing can stay linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
