package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/tui"
)

func cmdTop(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	var tf targetFlags
	tf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, plan, err := tf.resolve(fs)
	if err != nil {
		return err
	}
	return runTop(cfg, plan, stderr)
}

// runTop samples cfg's target live in the TUI until the user quits. A
// launched target is stopped on quit; an attached one runs on.
func runTop(cfg sampler.Config, plan *countingPlan, stderr io.Writer) error {
	if len(cfg.Argv) > 0 && cfg.Stdout == nil {
		// The TUI owns the terminal: the target's output would tear it.
		cfg.Stdout, cfg.Stderr = io.Discard, io.Discard
	}
	sess, b, err := startSession(cfg, plan, stderr)
	if err != nil {
		return err
	}
	defer sess.Close()
	l := newLive(targetName(cfg, sess), sess, b, plan)

	prog := tea.NewProgram(tui.New(l, tui.Options{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// A panic here must not leave the terminal in the alternate
		// screen: restore it, then report.
		defer func() {
			if r := recover(); r != nil {
				prog.Kill()
				done <- fmt.Errorf("internal error: %v", r)
			}
		}()
		l.run(ctx)
		done <- nil
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		if _, ok := <-sig; ok {
			prog.Quit()
		}
	}()
	_, runErr := prog.Run()
	signal.Stop(sig)
	close(sig)
	cancel()
	aggErr := <-done
	if len(cfg.Argv) > 0 {
		sess.Stop(2 * time.Second)
	}
	if aggErr != nil {
		return aggErr
	}
	if runErr != nil && runErr != tea.ErrProgramKilled {
		return fmt.Errorf("terminal: %v", runErr)
	}
	return nil
}

func targetName(cfg sampler.Config, sess *sampler.Session) string {
	if len(cfg.Argv) > 0 {
		return fmt.Sprintf("%s (pid %d)", strings.Join(cfg.Argv, " "), sess.PID())
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cfg.PID))
	return fmt.Sprintf("pid %d (%s)", cfg.PID, strings.TrimSpace(string(comm)))
}
