package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
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
	defer closeSession(sess, stderr)
	l := newLive(targetName(cfg, sess), sess, b, plan)

	// 30 frames a second is smooth for keys, and every frame wakes the
	// process: half of cctop's own CPU use was waking up.
	prog := tea.NewProgram(tui.New(l, tui.Options{}), tea.WithFPS(30))
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

func targetName(cfg sampler.Config, sess *sampler.Session) string {
	if len(cfg.Argv) > 0 {
		// The header has room for the command, not for its path: the
		// samples and rate after it must stay visible at 80 columns.
		cmd := strings.Join(append([]string{filepath.Base(cfg.Argv[0])}, cfg.Argv[1:]...), " ")
		if r := []rune(cmd); len(r) > 32 {
			cmd = string(r[:31]) + "…"
		}
		return fmt.Sprintf("%s (pid %d)", cmd, sess.PID())
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cfg.PID))
	return fmt.Sprintf("pid %d (%s)", cfg.PID, strings.TrimSpace(string(comm)))
}
