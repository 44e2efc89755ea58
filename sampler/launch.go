//go:build linux

package sampler

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// launch starts cfg.Argv stopped at its first instruction, opens the events
// on it, then lets it run: nothing the program does goes unsampled.
//
// The child is started under PTRACE_TRACEME, so the kernel stops it right
// after execve; the events are opened on the stopped process (inherited, so
// its future threads and children are covered) and the tracer detaches.
// This is the Go equivalent of perf's fork/wait-on-pipe/enable_on_exec dance,
// which needs code between fork and exec that os/exec does not allow.
func (s *Session) launch() error {
	path, err := LookPath(s.cfg.Argv[0])
	if err != nil {
		return err
	}
	cmd := exec.Command(path, s.cfg.Argv[1:]...)
	cmd.Args[0] = s.cfg.Argv[0]
	cmd.Dir = s.cfg.Dir
	cmd.Env = s.cfg.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.cfg.Stdin, s.cfg.Stdout, s.cfg.Stderr
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}

	// ptrace requests must come from the thread that became the tracer.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return launchErr(s.cfg.Argv[0], err)
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		cmd.Process.Kill()
		return fmt.Errorf("wait for %s to start: %w", s.cfg.Argv[0], err)
	}
	if !ws.Stopped() {
		return fmt.Errorf("%s exited before it started (status %v)", s.cfg.Argv[0], ws)
	}
	s.cmd, s.pid = cmd, pid
	s.waitErr = make(chan error, 1)
	s.born(pid, pid)
	s.pending = append(s.pending, Record{Kind: KindComm, PID: uint32(pid), TID: uint32(pid), Comm: readComm(pid, pid)})

	s.procs[pid] = true
	openErr := s.openWithFallbacks(pid)
	if openErr == nil {
		s.useOwnEvents(pid)
		openErr = s.openAllTasks()
	}
	if openErr == nil {
		openErr = s.watchExit(pid)
	}
	if openErr != nil {
		unix.Kill(pid, unix.SIGKILL)
	}
	// Detach with no signal: the SIGTRAP of the exec stop is swallowed.
	if err := unix.PtraceDetach(pid); err != nil && openErr == nil {
		openErr = fmt.Errorf("release %s: %w", s.cfg.Argv[0], err)
		unix.Kill(pid, unix.SIGKILL)
	}
	go func() { s.waitErr <- cmd.Wait() }()
	if openErr != nil {
		<-s.waitErr
		s.waitErr <- nil
		s.exited.Store(true)
		return openErr
	}
	return nil
}

// ExitCode is the launched command's exit code, -1 if it was killed by a
// signal or has not exited, and the signal's name when it was signalled.
func (s *Session) ExitCode() (int, string) {
	st := s.ExitStatus()
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return st.ExitCode(), ""
}

// ProbeLaunch starts path with args under PTRACE_TRACEME, as launching a
// command does, detaches from it and waits for it to end: nil means cctop can
// launch commands here. A refusal comes back explained.
func ProbeLaunch(path string, args ...string) error {
	cmd := exec.Command(path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return launchErr(path, err)
	}
	pid := cmd.Process.Pid
	var ws unix.WaitStatus
	_, err := unix.Wait4(pid, &ws, 0, nil)
	if err == nil && ws.Stopped() {
		err = unix.PtraceDetach(pid)
	}
	if err != nil {
		cmd.Process.Kill()
	}
	cmd.Wait()
	return err
}
