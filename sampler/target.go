//go:build linux

package sampler

// The target's lifecycle besides its samples: its run state (stops), the
// program it last executed, stopping a launched target and collecting its
// exit status.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// targetState is what happened to the target besides its samples: stops
// (SIGSTOP, a debugger) and the program it last executed.
type targetState struct {
	stopped    bool
	since      time.Time // of the current stop
	stops      int
	stoppedFor time.Duration // completed stops
	exec       string        // the command name after the last exec
}

// watchEvery is how often the reader looks at the target's run state.
const watchEvery = 250 * time.Millisecond

// watchBusyEvery is watchEvery while the last pass over the rings found
// records.
const watchBusyEvery = time.Second

// watchState keeps the target's run state. The reader calls it on every
// wake, so that stops are seen whatever the goroutine that calls Next is doing
// (re-arming counters takes seconds on a loaded machine).
func (s *Session) watchState(busy bool) {
	now := time.Now()
	// A target whose samples keep coming is running: it is looked at less
	// often (its children may be what samples while it is stopped).
	every := watchEvery
	if busy {
		every = watchBusyEvery
		if s.stopped() {
			every = 0 // samples again: the stop may be over
		}
	}
	// No target process (AllProcesses): no run state to watch.
	if now.Sub(s.lastCheck) < every || s.exited.Load() || s.pid == 0 {
		return
	}
	s.lastCheck = now
	st := runState(s.pid)
	stopped := st == 'T' || st == 't'
	s.mu.Lock()
	switch {
	case stopped && !s.state.stopped:
		s.state.stopped, s.state.since = true, now
		s.state.stops++
	case !stopped && s.state.stopped:
		s.state.stopped = false
		s.state.stoppedFor += now.Sub(s.state.since)
	}
	s.mu.Unlock()
}

// stopped reports whether the target was last seen stopped.
func (s *Session) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.stopped
}

// endStop ends the current stop, if any: the target was continued or is
// gone.
func (s *Session) endStop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.stopped {
		s.state.stopped = false
		s.state.stoppedFor += time.Since(s.state.since)
	}
}

// runState is the state letter of /proc/PID/stat (R, S, D, T, t, Z...), 0
// when it cannot be read.
func runState(pid int) byte {
	// Three system calls, not os.ReadFile's ten (it offers the file to
	// the netpoller and stats it): the reader does this several times a
	// second.
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return 0
	}
	b := buf[:n]
	// The command name, in parentheses, may hold anything: the state
	// follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// Target returns what became of the target so far.
func (s *Session) Target() TargetState {
	s.mu.Lock()
	st := s.state
	s.mu.Unlock()
	t := TargetState{
		Stopped: st.stopped, Stops: st.stops, StoppedFor: st.stoppedFor, Exec: st.exec,
		Processes: s.stats.processes.Load(), Execs: s.stats.execs.Load(), Missed: s.stats.missed.Load(),
	}
	if st.stopped {
		t.StoppedFor += time.Since(st.since)
	}
	return t
}

// ExitStatus is the launched command's exit status once it has exited.
func (s *Session) ExitStatus() *os.ProcessState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitStatus
}

// Exited reports whether the target has exited.
func (s *Session) Exited() bool { return s.exited.Load() }

// ExitSignal is the signal that killed the launched command, if one did.
func (s *Session) ExitSignal() (syscall.Signal, bool) {
	st := s.ExitStatus()
	if st == nil {
		return 0, false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

// SignalName is a signal's name as kill(1) takes it: "SIGKILL".
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(sig))
}

// Stop ends a launched target: SIGTERM, then SIGKILL after grace. It does
// nothing for an attached target.
func (s *Session) Stop(grace time.Duration) {
	if s.cmd == nil || s.cmd.Process == nil || s.exited.Load() {
		return
	}
	s.cmd.Process.Signal(unix.SIGTERM)
	// A stopped target (SIGSTOP, ^Z) would only act on SIGTERM once
	// continued.
	s.cmd.Process.Signal(unix.SIGCONT)
	s.endStop()
	select {
	case err := <-s.waitErr:
		s.waitErr <- err
	case <-time.After(grace):
		s.cmd.Process.Kill()
	}
}

// reap collects the launched command's exit status.
func (s *Session) reap() {
	if s.cmd == nil {
		return
	}
	err := <-s.waitErr
	s.waitErr <- err
	s.mu.Lock()
	s.exitStatus = s.cmd.ProcessState
	s.mu.Unlock()
}

func (s *Session) watchExit(pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	s.pidfd = fd
	return unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
}
