package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/engine"
)

// Always-on profiling runs at the rate continuous profilers use: 19 Hz
// (not 20, to stay out of step with timers), a few samples a second per
// busy thread, a cost a host does not notice.
const agentHz = 19

// agentSymbolMiB is the agent's default --symbol-mib: an always-on agent
// keeps to a smaller share than a person's record or top.
const agentSymbolMiB = 256

func cmdAgent(args []string, stderr io.Writer) error {
	sigCtx, stopSignals := catchSignals()
	defer stopSignals()
	fs, tf := newTargetFlags("agent")
	window := durationFlag{10 * time.Second}
	fs.Var(&window, "window", "cut and send a profile every `DURATION`")
	var dur durationFlag
	fs.Var(&dur, "d", "stop after `DURATION` (default: when the target exits, or SIGTERM/Ctrl-C)")
	out := fs.String("o", "", "also write everything profiled to a pprof `FILE` when the agent stops")
	flush := durationFlag{10 * time.Second}
	fs.Var(&flush, "flush-timeout", "on SIGTERM, send what is queued for at most `DURATION`")
	lines := fs.Bool("lines", false, "read DWARF for source lines and inlined frames (memory: some 20 MB for a libc's debug information); by default functions are named from symbol tables, and a backend symbolizes lines by build ID")
	of := addOTLPFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tf.opts.NamesOnly = !*lines
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if !set["symbol-mib"] {
		tf.symMiB = agentSymbolMiB
	}
	if tf.symMiB >= 1 {
		// The Go heap grows to twice what is live before it collects:
		// with the symbol tables near their budget that is the budget
		// again. A soft limit of the budget and 64 MiB for the rest
		// makes the collector work harder there instead (seen: 279 MiB
		// peak RSS while a CI run's test binaries came and went, 28 MiB
		// of symbols after).
		debug.SetMemoryLimit(tf.symMiB<<20 + 64<<20)
	}
	if !set["F"] && !set["c"] {
		tf.freq = agentHz
	}
	if !set["calls"] {
		// Counting calls costs the target; the agent's default costs
		// nothing beyond its samples.
		tf.opts.Calls = "none"
	}
	if of.endpoint == "" && *out == "" {
		return usageError("agent needs somewhere to send profiles: --otlp HOST:PORT (or -o FILE)")
	}
	if *out != "" {
		if err := engine.CheckWritable(*out); err != nil {
			return err
		}
	}
	cfg, plan, err := tf.resolve(fs)
	if err != nil {
		return err
	}
	// Records may wait in the rings up to a second (a quarter of a
	// shorter window): the agent wakes a few times a window, not ten
	// times a second.
	cfg.PollInterval = min(time.Second, window.d/4)
	// Rings of half a MiB a CPU, perf record's default, that wake the
	// reader when half full: at 19 Hz with 8 KiB stack copies that is
	// 1.5 s of a busy CPU, so the poll wakes it first, once a second,
	// where a quarter of the smallest rings woke it three times a
	// second a CPU, each wake-up costing the runtime's scheduling again.
	cfg.RingPages = max(cfg.RingPages, hostRingBytes/os.Getpagesize())
	cfg.WakeupDiv = 2
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "cctop agent: "+format+"\n", args...)
	}
	fl, err := of.open(logf)
	if err != nil {
		return err
	}

	ctx, stop := runContext(sigCtx, dur.d)
	defer stop()
	ws, err := engine.StartWindows(cfg, plan, window.d, stderr)
	if err != nil {
		fl.close(context.Background())
		return err
	}
	logf("sampling %s, windows of %s%s", ws.Describe(), window.d, fl.where())
	local := newLocalProfile()
	cut, empty := 0, 0
	for {
		win, err := ws.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			ws.Close(stderr)
			fl.close(context.Background())
			return err
		}
		if err := fl.err(); err != nil {
			ws.Close(stderr)
			return err
		}
		cut++
		note := ""
		if win.Empty() {
			// Nothing to say: a collector would drop it unread.
			empty++
			note = " (empty: not sent)"
		} else {
			fl.push(win)
		}
		if *out != "" {
			local.add(win)
		}
		logf("window %d (%.1fs): %d processes, %d samples%s%s; symbols %.1f of %d MiB; %s", cut, win.Duration.Seconds(), len(win.Processes), win.Samples,
			lostNote(win.Lost), note, float64(win.Symbols.Bytes)/(1<<20), win.Symbols.Budget>>20, fl.status())
	}
	ws.Close(stderr)
	// The last windows go out within the flush deadline; the local
	// profile is written whatever became of them.
	fctx, cancel := context.WithTimeout(context.Background(), flush.d)
	defer cancel()
	ferr := fl.close(fctx)
	logf("stopped after %d windows with samples and %d without; %s", cut-empty, empty, fl.status())
	if *out != "" {
		if err := local.write(*out); err != nil {
			return err
		}
		logf("wrote %s", *out)
	}
	return ferr
}

func lostNote(lost uint64) string {
	if lost == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d records lost so far)", lost)
}

// localProfile is every window of a run merged, for -o.
type localProfile struct {
	tree *cct.Tree
	meta cct.Meta
	have bool
}

func newLocalProfile() *localProfile { return &localProfile{tree: cct.New()} }

func (lp *localProfile) add(win *engine.Window) {
	for _, p := range win.Processes {
		lp.tree.Merge(p.Tree)
		if !lp.have {
			lp.meta, lp.have = p.Meta, true
			lp.meta.Threads = map[uint32]cct.Thread{}
			lp.meta.Modules = map[string]cct.Module{}
			lp.meta.DurationNanos = 0
		}
		for tid, th := range p.Meta.Threads {
			lp.meta.Threads[tid] = th
		}
		for path, m := range p.Meta.Modules {
			lp.meta.Modules[path] = m
		}
	}
	lp.meta.DurationNanos += win.Duration.Nanoseconds()
}

func (lp *localProfile) write(path string) error {
	return engine.WriteTreeProfile(path, lp.tree, lp.meta)
}
