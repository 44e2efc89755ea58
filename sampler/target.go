//go:build linux

package sampler

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// watchState keeps the target's run state. The reader calls it on every
// wake, so that stops are seen whatever Run's goroutine is doing
// (re-arming counters takes seconds on a loaded machine).
func (s *Session) watchState() {
	now := time.Now()
	if now.Sub(s.lastCheck) < watchEvery || s.exited.Load() {
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

// watch mends, when records were lost since the last look, the thread
// bookkeeping that lost EXIT records leave behind.
func (s *Session) watch() {
	if lost := s.stats.lost.Load(); lost != s.lastLost {
		s.lastLost = lost
		s.reconcile()
	}
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

// reconcile forgets threads that are gone although no EXIT record said so
// (it was lost with a full ring): their events are closed and they no
// longer count as alive.
func (s *Session) reconcile() {
	gone := func(tid int) bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(tid))
		return err != nil
	}
	for tid := range s.alive {
		if gone(tid) {
			s.exited1(tid)
		}
	}
	for tid := range s.root {
		if gone(tid) {
			s.exited1(tid)
		}
	}
	if s.cfg.Follow {
		for tid := range s.tidFDs {
			if gone(tid) {
				s.closeThread(tid)
			}
		}
	}
}

// runState is the state letter of /proc/PID/stat (R, S, D, T, t, Z...), 0
// when it cannot be read.
func runState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold anything: the state
	// follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// fileLimit is what cctop did about RLIMIT_NOFILE.
type fileLimit struct {
	told bool // the user was told that threads go unsampled
}

// fileSlack is descriptors left for cctop's own files (symbol files, the
// output, the terminal) beyond the events.
const fileSlack = 128

// fdsPerThread is the descriptors one thread's events take: a group per
// CPU, a descriptor per event of the group.
func (s *Session) fdsPerThread() int {
	n := 0
	for i := range s.groups {
		if !s.groups[i].allTasks {
			n += 1 + len(s.groups[i].members)
		}
	}
	return n * len(s.cpus)
}

// ensureFiles makes room under RLIMIT_NOFILE for the events of threads more
// threads. Go raises the soft limit to the hard one at start; beyond that
// cctop raises the hard limit where it may (root, CAP_SYS_RESOURCE), and
// otherwise says how many descriptors it needs and how to allow them.
func (s *Session) ensureFiles(threads int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil // let perf_event_open say
	}
	need := uint64(openFiles() + threads*s.fdsPerThread() + fileSlack)
	if need <= lim.Cur {
		return nil
	}
	// Room for threads to come, as long as the limits allow.
	want := need + need/4
	if want <= lim.Max {
		if setFileLimit(want, lim.Max) == nil {
			return nil
		}
	}
	if nr := nrOpen(); nr > 0 && want > nr {
		want = max(need, nr)
	}
	if want > lim.Max && setFileLimit(want, want) == nil {
		s.note(fmt.Sprintf("raised the open-file limit (RLIMIT_NOFILE) from %d to %d: the events of %d threads on %d CPUs need about %d descriptors",
			lim.Cur, want, len(s.tidFDs)+threads, len(s.cpus), need))
		return nil
	}
	if lim.Cur < lim.Max {
		setFileLimit(lim.Max, lim.Max)
	}
	return s.files.tooFew(len(s.tidFDs)+threads, s.fdsPerThread())
}

// tooFew is the error for a descriptor limit too low for threads threads.
func (f *fileLimit) tooFew(threads, perThread int) error {
	var lim unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
	return &FileLimitError{Threads: threads, Need: threads*perThread + fileSlack, Limit: lim.Cur, Hard: lim.Max, Root: os.Geteuid() == 0}
}

// FileLimitError says that RLIMIT_NOFILE is too low for the events of the
// target's threads and cctop could not raise it.
type FileLimitError struct {
	Threads     int    // threads to sample
	Need        int    // descriptors needed, about
	Limit, Hard uint64 // RLIMIT_NOFILE
	Root        bool   // cctop runs as root, and still could not raise it
}

func (e *FileLimitError) Error() string {
	fix := fmt.Sprintf("run `ulimit -n %d` first (above the hard limit that takes root), or run cctop as root", e.Need)
	if e.Root {
		fix = fmt.Sprintf("root without CAP_SYS_RESOURCE cannot raise the hard limit: raise it where cctop starts (`ulimit -Hn %d` in a shell that may, or the container's or service's LimitNOFILE)", e.Need)
	}
	return fmt.Sprintf("open-file limit too low: sampling %d threads takes about %d descriptors, RLIMIT_NOFILE is %d (hard %d) and cctop cannot raise it: %s",
		e.Threads, e.Need, e.Limit, e.Hard, fix)
}

// setFileLimit sets RLIMIT_NOFILE through the syscall package, which then
// lets commands cctop starts inherit the new limit rather than the one Go
// found at start.
func setFileLimit(cur, hard uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: cur, Max: hard})
}

// openFiles is how many descriptors cctop has open.
func openFiles() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

// nrOpen is fs.nr_open, the most RLIMIT_NOFILE may be, 0 if unknown.
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return n
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

// MayLockMemory reports whether cctop may lock more memory for its rings
// than kernel.perf_event_mlock_kb allows a user: it has CAP_IPC_LOCK.
func MayLockMemory() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			caps, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return caps&(1<<unix.CAP_IPC_LOCK) != 0
		}
	}
	return false
}
