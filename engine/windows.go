package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// Windows is one session that runs without end and cuts its profile into
// windows of a fixed length: continuous profiling (cctop agent). The
// caller pulls each window with Next, as the command that records pulls a
// whole run; nothing here calls back into the caller.
type Windows struct {
	cfg    sampler.Config
	plan   *Plan
	sess   *sampler.Session
	b      *builder
	arm    *armer
	length time.Duration
	start  time.Time // of the window being filled
	procs  *processBook
	gov    *procGovernor // the runtime's Ps, from cctop's CPU time (procs.go)
	done   bool
}

// Window is one cut of a continuous run: the profile of each process
// sampled in it.
type Window struct {
	Start    time.Time
	Duration time.Duration
	// Processes holds one profile per process: a target and the
	// processes it started count as one, the target; with
	// sampler.Config.AllProcesses each process is its own.
	Processes []ProcessProfile
	Samples   uint64 // in the window, of every process
	Lost      uint64 // records the kernel dropped, since the session began
	// Symbols is what the symbol tables hold at the cut, against their
	// budget (Options.SymbolBudget).
	Symbols symbol.MemStats
}

// Empty says the window holds nothing: no process has a sample or time
// off the CPU in it.
func (w *Window) Empty() bool {
	for _, p := range w.Processes {
		if !p.Tree.Total().IsZero() {
			return false
		}
	}
	return true
}

// ProcessProfile is one process's part of a window.
type ProcessProfile struct {
	Process Process
	Tree    *cct.Tree
	Meta    cct.Meta
}

// StartWindows opens a session on cfg's target and returns it ready to
// cut windows of length.
func StartWindows(cfg sampler.Config, plan *Plan, length time.Duration, stderr io.Writer) (*Windows, error) {
	if length <= 0 {
		return nil, errors.New("the window length must be positive")
	}
	start := time.Now()
	sess, b, err := startSession(cfg, plan, stderr)
	if err != nil {
		return nil, err
	}
	w := &Windows{cfg: cfg, plan: plan, sess: sess, b: b, arm: newArmer(plan, sess),
		length: length, start: start, procs: bookOf(cfg, sess)}
	w.gov = newProcGovernor(func() bool { return w.b.pyHoldsP() })
	return w, nil
}

// Next samples until the window being filled is due, ctx ends or the
// target exits, and returns the window. After the last window (the
// target exited, or ctx ended) it returns io.EOF.
func (w *Windows) Next(ctx context.Context) (*Window, error) {
	if w.done {
		return nil, io.EOF
	}
	due := w.start.Add(w.length)
	for time.Now().Before(due) {
		wctx, cancel := context.WithDeadline(ctx, due)
		_, err := readNext(wctx, w.sess, w.b, w.arm)
		cancel()
		w.gov.judge(monoNow())
		if err == nil {
			continue
		}
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		if ctx.Err() != nil || w.sess.Exited() || time.Now().Before(due) {
			// The last window, shorter than the others: the run ended,
			// the target exited, or the session's reader did.
			w.done = true
			break
		}
		// The window's deadline: its records are in.
	}
	return w.cut(), nil
}

// cut ends the window being filled: its tree is settled and weighed and
// split by process, and a new builder takes the samples from here on.
func (w *Windows) cut() *Window {
	now, b := time.Now(), w.b
	mono := monoNow()
	b.finish(mono)
	if b.weights != nil {
		b.weights.apply(b.tree, w.plan.params.Alpha)
	}
	rec := &Recording{cfg: w.cfg, sess: w.sess, b: b, plan: w.plan, arm: w.arm,
		start: w.start, elapsed: now.Sub(w.start)}
	if w.plan.hasCalls() {
		// Control-flow correction reads the machine code of every
		// sampled function: worth it for call estimates, not for an
		// always-on agent's time profile (without counted calls its
		// calls_flow would be samples reshaped).
		fs := b.applyFlow()
		rec.flow = &fs
	}
	win := rec.window(w.procs, "cctop agent")
	// The binaries of processes gone go with the window that named them:
	// on a host whose processes come and go, the budget is then the
	// bound, not the usual footprint.
	b.res.DropUnmapped()
	win.Symbols = b.res.MemStats()
	w.b = successor(b, w.plan, w.sess, mono)
	w.start = now
	w.procs.forgetGone()
	return win
}

// Stats is the session's counters.
func (w *Windows) Stats() sampler.Stats { return w.sess.Stats() }

// Describe says what the session samples, for the agent's first line.
func (w *Windows) Describe() string { return Describe(w.sess.Config()) }

// Close stops a target the session launched (an attached one runs on),
// closes the session and releases its probes.
func (w *Windows) Close(stderr io.Writer) {
	if len(w.cfg.Argv) > 0 && !w.sess.Exited() {
		w.sess.Stop(2 * time.Second)
	}
	closeSession(w.sess, stderr)
	w.b.py.close()
}

// successor is the builder that takes a session's samples after b: a new
// tree and sample log, with what belongs to the target rather than to the
// profile carried over (symbols, the armed entries, the counters panel's
// history, which is of the target, threads off the CPU since before now).
// A window's cut and the TUI's reset both start one.
func successor(b *builder, plan *Plan, sess *sampler.Session, now uint64) *builder {
	b.flushParked() // what waits for a module belongs to b's profile
	nb := newSessionBuilder(b.res, plan, sess)
	nb.entries = b.entries
	nb.py = b.py.successor()
	if b.weights != nil && nb.weights != nil {
		nb.weights.timeline, nb.weights.latency = b.weights.timeline, b.weights.latency
		nb.weights.trigger = b.weights.trigger
	}
	if b.off != nil {
		nb.off = b.off.carry(now)
	}
	if b.proc.enabled {
		// A target that had children still has them: the new profile
		// has its process level from the start. The frames are the
		// new tree's.
		nb.enableProcesses(b.proc.on, b.proc.target)
	}
	return nb
}

// moduleInfo is what the resolver knows of the binaries b's tree names:
// build IDs and executable segments, for a backend to symbolize with.
func moduleInfo(b *builder) map[string]cct.Module {
	mods := map[string]cct.Module{}
	for id := range b.tree.NumFuncs() {
		path := b.tree.Func(cct.FuncID(id)).Module
		if _, done := mods[path]; done || path == "" {
			continue
		}
		var m cct.Module
		if bid, start, limit, off, ok := b.res.ModuleInfo(path); ok {
			m = cct.Module{BuildID: hex.EncodeToString(bid), Start: start, Limit: limit, Offset: off}
		}
		m.GoBuildID = b.res.GoBuildID(path)
		mods[path] = m
	}
	for path, m := range mods {
		if m == (cct.Module{}) {
			delete(mods, path)
		}
	}
	return mods
}

// window is r's profile as a window, split by process through procs; its
// comments name the command that made it.
func (r *Recording) window(procs *processBook, command string) *Window {
	m := profileMeta(r.cfg, r)
	m.Comments[0] = command
	return &Window{Start: r.start, Duration: r.elapsed, Samples: r.b.samples, Lost: r.sess.Stats().Lost,
		Processes: procs.split(r.cfg, r.sess, r.b, m)}
}

// bookOf is the process book of a session: a target's process is read
// while it runs (a launched target may be gone at the end); with
// AllProcesses each is read when a window first names it.
func bookOf(cfg sampler.Config, sess *sampler.Session) *processBook {
	pb := newProcessBook()
	if !cfg.AllProcesses {
		pb.see(uint32(sess.PID()))
	}
	return pb
}

// Window is the whole recording as one window, for a one-off push.
func (r *Recording) Window() *Window { return r.window(r.procs, "cctop record") }

// Window is the live profile as one window, for a push when the TUI quits.
// Call it once Run has returned: it reads the aggregator's builder.
func (l *Live) Window() *Window {
	l.b.renameJIT(true) // the profile's end: no placeholder goes out
	if l.b.weights != nil {
		l.b.weights.apply(l.b.tree, l.viewState.params.Alpha)
	}
	rec := &Recording{cfg: l.sess.Config(), sess: l.sess, b: l.b, plan: l.plan, arm: l.arm, start: l.start, elapsed: time.Since(l.start)}
	win := rec.window(newProcessBook(), "cctop top")
	win.Symbols = l.b.res.MemStats()
	return win
}
