package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/annotate"
	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/tui"
)

func cmdTop(args []string, stderr io.Writer) error {
	// A signal from here on ends top: before the TUI, as soon as it runs.
	early, stopEarly := catchSignals()
	defer stopEarly()
	fs, tf := newTargetFlags("top")
	tf.hostByDefault = true
	fs.DurationVar(&tf.opts.Refresh, "refresh", engine.DefaultRefresh, "redraw for new samples every `D`")
	of := addOTLPFlags(fs)
	af := addAnnotateFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if tf.opts.Refresh <= 0 {
		return usageError("--refresh must be a positive duration, such as 500ms or 2s")
	}
	cfg, plan, err := tf.resolve(fs)
	if err != nil {
		return err
	}
	if of.endpoint == "" {
		return runTop(cfg, plan, stderr, &startSignals{early, stopEarly}, af.options())
	}
	// The TUI owns the terminal: the exporter's log lines wait for the
	// status printed after it.
	fl, err := of.start(func(string, ...any) {}, false)
	if err != nil {
		return err
	}
	l, err := startLive(cfg, plan, stderr)
	if err != nil {
		fl.close(context.Background())
		return err
	}
	err = runLiveWith(&pushAtQuit{Live: l, fl: fl}, stderr, &startSignals{early, stopEarly}, tui.Options{Annotator: annotate.New(af.options())})
	// The push goes within a deadline: a collector that is away costs
	// the quit at most that long.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ferr := fl.close(ctx)
	fmt.Fprintf(stderr, "cctop: %s\n", fl.status())
	return cmp.Or(err, ferr, fl.undelivered())
}

// pushAtQuit is a live profile that shows where it will be pushed in the
// header, and queues itself for the push when the TUI closes it.
type pushAtQuit struct {
	*engine.Live
	fl *fleet
}

func (p *pushAtQuit) Snapshot() tui.Snapshot {
	s := p.Live.Snapshot()
	s.Header.Export, s.Header.ExportWarn = p.fl.brief()
	return s
}

func (p *pushAtQuit) Close(stderr io.Writer) {
	// Before the target is stopped: its process is read for the
	// profile's resource.
	p.fl.push(p.Live.Window())
	p.Live.Close(stderr)
}

// runTop samples cfg's target live in the TUI until the user quits. A
// launched target is stopped on quit; an attached one runs on.
func runTop(cfg sampler.Config, plan *engine.Plan, stderr io.Writer, early *startSignals, ao annotate.Options) error {
	l, err := startLive(cfg, plan, stderr)
	if err != nil {
		return err
	}
	return runLiveWith(l, stderr, early, tui.Options{Annotator: annotate.New(ao)})
}

// startSignals are the signals a command caught while it started
// (catchSignals): one of them quits the TUI as soon as it runs.
type startSignals struct {
	ctx  context.Context
	stop context.CancelFunc
}

// startLive opens the session of cfg's target for the live TUI.
func startLive(cfg sampler.Config, plan *engine.Plan, stderr io.Writer) (*engine.Live, error) {
	if len(cfg.Argv) > 0 && cfg.Stdout == nil {
		// The TUI owns the terminal: the target's output would tear it.
		cfg.Stdout, cfg.Stderr = io.Discard, io.Discard
	}
	return engine.StartLive(cfg, plan, stderr)
}

// liveProfile is what runLive drives: engine.Live, which the panic tests
// wrap to break it where it runs.
type liveProfile interface {
	tui.Source
	// Run samples and serves the TUI until ctx ends.
	Run(ctx context.Context)
	// Close stops what the profile started and releases its events.
	Close(stderr io.Writer)
}

// liveFPS is the TUI's frame rate in top.
const liveFPS = 10

// runLive shows l in the TUI, running it meanwhile, until the user quits,
// then closes it.
func runLive(l liveProfile, stderr io.Writer, early *startSignals) error {
	return runLiveWith(l, stderr, early, tui.Options{})
}

// runLiveWith is runLive with the TUI's options (where the annotate view
// finds sources).
func runLiveWith(l liveProfile, stderr io.Writer, early *startSignals, topts tui.Options) error {
	// The signals stay caught until the events are handed over.
	stopSignals := func() {}
	defer func() {
		l.Close(stderr)
		stopSignals()
	}()

	// Bubble Tea draws on a ticker, and upstream each tick wakes the
	// process whether anything changed or not: with the target idle, 30
	// frames a second were 0.6% of a core, nearly all of cctop's cost.
	// third_party/bubbletea stops the ticker after a frame in which no view
	// came and draws the next view at once; while views keep coming (keys
	// held, the annotate view building), 10 frames a second bound the
	// drawing. A terminal over SSH adds its round trip.
	prog := newTUI(tui.New(l, topts), tea.WithFPS(liveFPS))
	stopSignals = quitOnSignals(prog)
	if early != nil {
		// quitOnSignals has them now: one that came before quits at once,
		// and the next after quitting has its default effect again.
		if early.ctx.Err() != nil {
			go prog.Quit()
		}
		early.stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// A panic here must not leave the terminal in the alternate
		// screen: quit the program, which restores it (Kill before Run
		// has set the terminal up would skip the restore), then report.
		defer func() {
			if r := recover(); r != nil {
				done <- internalError(r, debug.Stack())
				prog.Quit()
			}
		}()
		l.Run(ctx)
		done <- nil
	}()
	_, runErr := prog.Run()
	cancel()
	if aggErr := <-done; aggErr != nil {
		return aggErr
	}
	return tuiError(runErr)
}

// newTUI makes the Bubble Tea program of top, demo and view, without Bubble
// Tea's own signal handler: quitOnSignals handles the signals. (Bubble
// Tea's handler sends its quit message without watching for the program's
// end: when the program ended first, on a key or on another handler's
// Quit, the handler blocked and the program's shutdown waited for it
// forever, cctop hung in the TUI. charmbracelet/bubbletea#1806.)
func newTUI(m tea.Model, opts ...tea.ProgramOption) *tea.Program {
	return tea.NewProgram(m, append(opts, tea.WithoutSignalHandler())...)
}

// quitOnSignals makes SIGINT, SIGTERM and SIGHUP quit prog as q does, so
// the terminal is restored and the caller cleans up: a launched target is
// stopped, probe events released. Until stop is called the first of them is
// taken, also after prog has ended, so that one coming during the clean-up
// does not cut it short; the next has its default effect, so that a cctop
// whose clean-up hangs still ends.
func quitOnSignals(prog *tea.Program) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, quitSignals...)
	done := make(chan struct{})
	go func() {
		// The first signal quits; the others are caught and dropped until
		// stop: a closing terminal sends SIGHUP twice (the kernel, then
		// the shell), and the second, left to its default action, killed
		// cctop while it removed its probes from tracefs.
		quitting := false
		for {
			select {
			case <-sig:
				if !quitting {
					quitting = true
					prog.Quit()
				}
			case <-done:
				return
			}
		}
	}()
	return sync.OnceFunc(func() {
		signal.Stop(sig)
		close(done)
	})
}

// quitSignals end cctop in order: the TUI quits, a recording stops and is
// written, and either way the target cctop launched is stopped and the
// events released. SIGHUP too: the terminal or the SSH session is gone.
var quitSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// tuiError is the error of a TUI's Run: nil when it quit.
func tuiError(err error) error {
	switch {
	case err == nil || err == tea.ErrProgramKilled:
		return nil
	case errors.Is(err, tea.ErrProgramPanic):
		// Bubble Tea has printed the panic and its stack.
		return errors.New("internal error in the TUI (the panic is above)")
	}
	return fmt.Errorf("terminal: %v", err)
}

// internalError reports a bug: one line for the terminal, and the stack in
// a file for the report.
func internalError(r any, stack []byte) error {
	f, err := os.CreateTemp("", "cctop-panic-*.txt")
	if err != nil {
		return fmt.Errorf("internal error: %v", r)
	}
	fmt.Fprintf(f, "cctop internal error: %v\n\n%s", r, stack)
	f.Close()
	return fmt.Errorf("internal error: %v (stack trace in %s)", r, f.Name())
}
