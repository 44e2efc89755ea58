package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// cleanupProbes are the functions the clean-up tests count with uprobes:
// the density workload's leaf, and one that it never calls. With one
// event set per thread that is enough events (more than 16) for
// closeSession to hand them to the release child, and few enough that it
// releases them in seconds (each takes the kernel 0.1 to 0.5 s).
func cleanupProbes() string {
	return "uprobe:" + testutil.WorkloadPkg + "densityLeaf," + testutil.WorkloadPkg + "wideLeaf0"
}

// perfEvents counts the perf events pid holds open.
func perfEvents(pid int) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, fd := range fds {
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); l == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

// cctopExes are the executables a cctop of this test runs as: the built
// binary, and this test binary in the helper processes.
func cctopExes(t *testing.T) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{cctopBin, exe}
}

// perfHolders lists the processes other than this one that run one of exes
// and hold perf events, with their command lines and event counts, and the
// processes that may be releasing them. A process that exits lets go of
// its executable first, then of its descriptors; one of its threads then
// releases them (for uprobe events, 0.1 to 0.5 s each), while its main
// thread is already a zombie and its descriptor table looks empty. Such a
// process is known only by its command name, which another cctop may
// share: those that were there before (pids in before) are left out.
func perfHolders(exes []string, before map[int]bool) []string {
	var comms []string
	for _, e := range exes {
		comms = append(comms, filepath.Base(e)[:min(15, len(filepath.Base(e)))])
	}
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if pid == os.Getpid() {
			continue
		}
		comm, _ := os.ReadFile(p + "/comm")
		name := strings.TrimSpace(string(comm))
		exe, err := os.Readlink(p + "/exe")
		if err == nil && slices.Contains(exes, strings.TrimSuffix(exe, " (deleted)")) {
			if n := perfEvents(pid); n > 0 {
				cmdline, _ := os.ReadFile(p + "/cmdline")
				out = append(out, fmt.Sprintf("pid %d (%s): %d perf events", pid, strings.ReplaceAll(string(cmdline), "\x00", " "), n))
			}
			continue
		}
		if err != nil && !before[pid] && slices.Contains(comms, name) && exiting(pid) {
			out = append(out, fmt.Sprintf("pid %d (%s): exiting", pid, name))
		}
	}
	return out
}

// exiting says whether a thread of process pid is still there, not a
// zombie.
func exiting(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/[0-9]*", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(task + "/stat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// pids is the set of processes there now.
func pids() map[int]bool {
	out := map[int]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		out[pid] = true
	}
	return out
}

// tracefsProbes lists the tracefs uprobe definitions on exes. cctop's
// probes are perf uprobe events, scoped to their descriptors: there must
// never be any.
func tracefsProbes(exes []string) []string {
	var out []string
	for _, f := range []string{"/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"} {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			for _, exe := range exes {
				if strings.Contains(line, exe) {
					out = append(out, f+": "+line)
				}
			}
		}
	}
	return out
}

// waitReleased waits, for at most two minutes, until no cctop of this test
// (the release child included) holds or is releasing a perf event, and
// checks that tracefs has no probe of cctop. before is the set of
// processes from before the test's cctop started.
func waitReleased(t *testing.T, before map[int]bool) {
	t.Helper()
	exes := cctopExes(t)
	start := time.Now()
	deadline := start.Add(2 * time.Minute)
	for {
		held := perfHolders(exes, before)
		if len(held) == 0 {
			t.Logf("no perf events held %.1f s after cctop ended", time.Since(start).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("perf events still held two minutes after cctop ended:\n%s", strings.Join(held, "\n"))
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The release child deletes the tracefs probes once it has closed the
	// events on them: a few tenths of a second.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		p := tracefsProbes(exes)
		if len(p) == 0 {
			t.Logf("no probes in tracefs %.1f s after cctop ended", time.Since(start).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("uprobes left in tracefs 10 s after cctop ended:\n%s", strings.Join(p, "\n"))
			break
		}
	}
}

// program is the pid of the command the session's shell runs in the
// foreground (its one child), waiting up to 10 s for it to appear.
func (s *tmuxSession) program() int {
	s.t.Helper()
	shell, err := strconv.Atoi(s.format("#{pane_pid}"))
	if err != nil {
		s.t.Fatalf("pane pid: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if kids := children(shell); len(kids) == 1 {
			return kids[0]
		}
	}
	s.t.Fatalf("the shell runs no single command: children %v", children(shell))
	return 0
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		b, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			c, _ := strconv.Atoi(filepath.Base(p))
			out = append(out, c)
		}
	}
	return out
}

// waitGone waits up to timeout for process pid to end (and be reaped).
func waitGone(t *testing.T, pid int, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return
		}
	}
	t.Errorf("process %d still there %v after the terminal closed", pid, timeout)
}

// TestTopCleanup ends the live TUI every way it can end, with uprobe
// counters armed: q, ctrl-c, the signals SIGINT, SIGTERM and SIGHUP, the
// terminal closing, and a panic in the aggregator. Every time the terminal
// is restored, the exit status says how it ended, the target cctop
// launched is gone, and once cctop and its release child have exited no
// perf event or uprobe of cctop is left.
func TestTopCleanup(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	calls := cleanupProbes()
	top := func(s *tmuxSession) {
		s.run(cctopBin + " top --calls " + calls + " -- " + cctopBin + " workload density -loop")
	}
	helper := func(name string) func(*tmuxSession) {
		return func(s *tmuxSession) {
			s.runHelper(name, helperCallsEnv+"="+calls, "TMPDIR="+s.t.TempDir())
		}
	}
	keys := func(k string) func(*tmuxSession) {
		return func(s *tmuxSession) { s.keys(k) }
	}
	kill := func(sig syscall.Signal) func(*tmuxSession) {
		return func(s *tmuxSession) {
			if err := syscall.Kill(s.program(), sig); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	const samples = `[0-9]{3,} samples`
	cases := []struct {
		name  string
		run   func(*tmuxSession)
		ready string // what the screen shows before the end; "" to end at once
		end   func(*tmuxSession)
		code  int    // the exit status; -1 when the terminal is gone
		said  string // what cctop printed after the TUI
	}{
		// The demo arms its counters (uprobes, without a PMU) after a
		// second of samples.
		{"demo ctrl-c", func(s *tmuxSession) { s.run(cctopBin + " demo") }, `([0-9]{4,}|[0-9.]+k) samples`, keys("C-c"), 0, ""},
		{"q", top, samples, keys("q"), 0, ""},
		// In the TUI ctrl-c is a key; kill -INT comes as a signal.
		{"SIGINT", top, samples, kill(syscall.SIGINT), 0, ""},
		// Bubble Tea's own SIGTERM handler raced cctop's: cctop hung
		// with the TUI on screen.
		{"SIGTERM", top, samples, kill(syscall.SIGTERM), 0, ""},
		{"SIGHUP", top, samples, kill(syscall.SIGHUP), 0, ""},
		{"terminal closed", top, samples, nil, -1, ""},
		// A panic in cctop's aggregator goroutine, which Bubble Tea does
		// not see, is recovered by runLive: the program quits, and cctop
		// exits 1 with the panic as its error.
		{"panic", helper("TestHelperPanicAggregator"), samples, keys("b"), 1,
			`cctop: internal error: panickyLive: exploded on b \(stack trace in /[^ ]*cctop-panic-[0-9]+\.txt\)`},
		// runLive's recover once called prog.Kill(), which, before
		// prog.Run() had put the terminal in raw mode, used up the
		// program's one shutdown and left the shell with -icanon -echo
		// -isig -icrnl -opost; it now asks the program to quit, which Run
		// honours once it is up.
		{"panic at start", helper("TestHelperPanicAggregatorAtStart"), "", nil, 1,
			`cctop: internal error: panickyLive: exploded at start \(stack trace in /[^ ]*cctop-panic-[0-9]+\.txt\)`},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			before := pids()
			s := newTmuxShell(t, "", 160, 50)
			c.run(s)
			if c.ready != "" {
				s.waitFor(c.ready, 20*time.Second)
				t.Logf("%d perf events open", perfEvents(s.program()))
				if len(perfHolders(cctopExes(t), before)) == 0 {
					t.Fatal("perfHolders does not see the running cctop's events")
				}
			}
			if c.code < 0 {
				pid := s.program()
				exec.Command("tmux", "kill-session", "-t", "="+s.name).Run()
				waitGone(t, pid, time.Minute)
			} else {
				if c.end != nil {
					c.end(s)
				}
				start := time.Now()
				if code := s.exitCode(30 * time.Second); code != c.code {
					t.Errorf("exit status %d, want %d:\n%s", code, c.code, s.capture("-J", "-S", "-"))
				}
				t.Logf("exited %.1f s after the end", time.Since(start).Seconds())
				if all := s.capture("-J", "-S", "-"); c.said != "" && !regexp.MustCompile(c.said).MatchString(all) {
					t.Errorf("%q not printed:\n%s", c.said, all)
				}
				s.checkRestored("samples", "trigger time")
				t.Logf("terminal checked %.1f s after the end", time.Since(start).Seconds())
			}
			workloadLeft(t)
			waitReleased(t, before)
		})
	}
}
