//go:build linux

package sampler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// skipIfNoSystemWide skips where CPU-wide events are not allowed.
func skipIfNoSystemWide(t *testing.T) {
	t.Helper()
	skipIfNoPerf(t)
	if ok, why := SystemWideAllowed(); !ok {
		t.Skipf("system-wide sampling not permitted here: %s", why)
	}
}

// TestSystemWideEvents: on 64 CPUs, AllProcesses opens each group's events
// once per CPU for every task (pid -1): (2 + 1) x 64 for a primary group
// with a member and an extra group, whatever the host's threads (64 more
// spin meanwhile, and a process that churns threads starts after Open),
// none inherited, with the records the mode needs on the primary leader
// alone, and the idle task left out.
func TestSystemWideEvents(t *testing.T) {
	skipIfNoSystemWide(t)
	spinners, churn := buildSpinners(t), buildC(t, "churn")
	for _, userOnly := range []bool{false, true} {
		t.Run(map[bool]string{false: "kernel", true: "user only"}[userOnly], func(t *testing.T) {
			const ncpu = 64
			busy := exec.Command(spinners, "64", "30")
			if err := busy.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { busy.Process.Kill(); busy.Wait() }()
			fake, k := newFakeCPUs(t, ncpu)
			extra := Group{Leader: namedEvents["task-clock"], Period: 10_000_000}
			s, err := openWith(Config{AllProcesses: true, Freq: 99, UserOnly: userOnly,
				Members: []EventSpec{namedEvents["task-clock"]}, Extra: []Group{extra}}, k)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			const perCPU = 2 + 1
			opened := func() []perfCall {
				fake.mu.Lock()
				defer fake.mu.Unlock()
				return slices.Clone(fake.calls)
			}
			calls := opened()
			if len(calls) != perCPU*ncpu {
				t.Fatalf("%d events opened, want %d (%d per CPU)", len(calls), perCPU*ncpu, perCPU)
			}
			perCPUs := map[int]int{}
			var leaders []perfCall
			for _, c := range calls {
				perCPUs[c.cpu]++
				if c.pid != -1 {
					t.Errorf("event on CPU %d opened for pid %d, want -1", c.cpu, c.pid)
				}
				if c.attr.Bits&unix.PerfBitInherit != 0 {
					t.Errorf("event on CPU %d inherited", c.cpu)
				}
				if c.attr.Bits&unix.PerfBitContextSwitch != 0 {
					t.Errorf("event on CPU %d records context switches", c.cpu)
				}
				if got := c.attr.Bits&(unix.PerfBitExcludeKernel|unix.PerfBitExcludeCallchainKernel) != 0; got != userOnly {
					t.Errorf("event on CPU %d excludes the kernel: %v, want %v", c.cpu, got, userOnly)
				}
				if c.attr.Bits&unix.PerfBitExcludeHv == 0 {
					t.Errorf("event on CPU %d counts the hypervisor", c.cpu)
				}
				if c.group == -1 {
					leaders = append(leaders, c)
				}
			}
			for cpu := range ncpu {
				if perCPUs[cpu] != perCPU {
					t.Errorf("CPU %d: %d events, want %d", cpu, perCPUs[cpu], perCPU)
				}
			}
			if len(leaders) != 2*ncpu {
				t.Fatalf("%d leaders, want %d", len(leaders), 2*ncpu)
			}
			sideband := uint64(unix.PerfBitMmap | unix.PerfBitMmap2 | unix.PerfBitComm | unix.PerfBitCommExec | unix.PerfBitTask | unix.PerfBitSampleIDAll)
			want := uint64(sampleIdentifier | sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleRead | sampleCallchain | sampleRegsUser | sampleStackUser)
			primaries := 0
			for _, l := range leaders {
				a := l.attr
				if a.Bits&unix.PerfBitExcludeIdle == 0 {
					t.Errorf("clock leader on CPU %d samples the idle task", l.cpu)
				}
				if a.Type != unix.PERF_TYPE_SOFTWARE || a.Config != unix.PERF_COUNT_SW_CPU_CLOCK {
					continue // the extra group's
				}
				primaries++
				if a.Bits&sideband != sideband {
					t.Errorf("primary leader on CPU %d: bits %#x lack mmap, mmap2, comm, comm_exec, task or sample_id_all", l.cpu, a.Bits)
				}
				if a.Sample_type != want || a.Sample != 99 || a.Bits&unix.PerfBitFreq == 0 {
					t.Errorf("primary leader on CPU %d: sample type %#x (want %#x), %d Hz", l.cpu, a.Sample_type, want, a.Sample)
				}
			}
			if primaries != ncpu {
				t.Errorf("%d primary leaders, want %d", primaries, ncpu)
			}
			for _, l := range leaders {
				if l.attr.Config == unix.PERF_COUNT_SW_TASK_CLOCK && l.attr.Bits&(unix.PerfBitMmap|unix.PerfBitComm|unix.PerfBitTask) != 0 {
					t.Errorf("extra leader on CPU %d asks for sideband records too: they would come twice", l.cpu)
				}
			}
			if events, _, _ := s.ProbeFootprint(); events != ncpu {
				t.Errorf("one more probe would open %d events, want %d", events, ncpu)
			}
			// Threads come and go: no event is opened for them.
			cmd := exec.Command(churn, "1500", "2000", "8")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ended := make(chan struct{})
			go func() { cmd.Wait(); close(ended) }()
			churned := map[uint32]bool{}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for done := false; !done; {
				select {
				case <-ended:
					done = true
				default:
				}
				b, err := s.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range b.Records {
					if r.Kind == KindSample && int(r.PID) == cmd.Process.Pid {
						churned[r.TID] = true
					}
				}
			}
			if got := len(opened()); got != perCPU*ncpu {
				t.Errorf("%d events after threads came and went, want %d", got, perCPU*ncpu)
			}
			if len(churned) == 0 && !userOnly {
				t.Errorf("no samples of the churning process %d", cmd.Process.Pid)
			}
			t.Logf("samples from %d of the churning process's threads; %+v", len(churned), s.Stats())
		})
	}
}

// TestSystemWideConfig: AllProcesses takes no PID, command or off-CPU time,
// and says so before anything is opened.
// TestSystemWideCPUList: -C on a 64-CPU machine opens the groups on the
// CPUs listed only, and a CPU that is not online is refused before any
// event is opened.
func TestSystemWideCPUList(t *testing.T) {
	skipIfNoSystemWide(t)
	fake, k := newFakeCPUs(t, 64)
	s, err := openWith(Config{AllProcesses: true, Freq: 99, CPUs: []int{3, 17, 63}}, k)
	if err != nil {
		t.Fatal(err)
	}
	fake.mu.Lock()
	cpus := map[int]int{}
	for _, c := range fake.calls {
		cpus[c.cpu]++
	}
	fake.mu.Unlock()
	s.Close()
	if len(cpus) != 3 || cpus[3] != 1 || cpus[17] != 1 || cpus[63] != 1 || s.CPUs() != 3 {
		t.Errorf("events by CPU %v (session: %d CPUs), want one on each of 3, 17 and 63", cpus, s.CPUs())
	}
	fake, k = newFakeCPUs(t, 64)
	if _, err := openWith(Config{AllProcesses: true, Freq: 99, CPUs: []int{1, 64}}, k); err == nil || !strings.Contains(err.Error(), "CPU 64 is not online (online: 0-63)") {
		t.Errorf("CPU 64 of 64: %v", err)
	}
	if n := fake.count(unix.PERF_TYPE_SOFTWARE); n != 0 {
		t.Errorf("%d events opened for a refused CPU list", n)
	}
}

func TestSystemWideConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{AllProcesses: true, PID: 1}, "takes no PID or command"},
		{Config{AllProcesses: true, Argv: []string{"true"}}, "takes no PID or command"},
		{Config{AllProcesses: true, OffCPU: true}, "off-CPU time is not recorded system-wide"},
	} {
		_, err := Open(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", c.cfg, err, c.want)
		}
	}
}

// TestSystemWideRefusal: whether CPU-wide events are allowed, by paranoid
// level and capabilities, and the one line a refusal prints.
func TestSystemWideRefusal(t *testing.T) {
	for _, c := range []struct {
		level int
		caps  uint64
		ok    bool
		why   string
	}{
		{2, 0, false, "kernel.perf_event_paranoid is 2, needs <= 0, or CAP_PERFMON or root"},
		{1, 1 << unix.CAP_IPC_LOCK, false, "kernel.perf_event_paranoid is 1, needs <= 0"},
		{0, 0, true, "kernel.perf_event_paranoid=0 allows"},
		{-1, 0, true, "kernel.perf_event_paranoid=-1 allows"},
		{2, 1 << unix.CAP_PERFMON, true, "CAP_PERFMON"},
		{4, 1 << unix.CAP_SYS_ADMIN, true, "CAP_SYS_ADMIN"},
	} {
		ok, why := systemWide(c.level, c.caps)
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("level %d caps %#x: %v %q, want %v %q", c.level, c.caps, ok, why, c.ok, c.why)
		}
	}
	what, fix := systemWideRefusal(2, 0, false)
	err := error(&PermissionError{What: what, Fix: fix, Err: unix.EACCES})
	line := err.Error()
	for _, want := range []string{"system-wide sampling refused", "perf_event_paranoid is 2", "needs <= 0", "CAP_PERFMON", "`sysctl kernel.perf_event_paranoid=0`"} {
		if !strings.Contains(line, want) {
			t.Errorf("refusal %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\n") || !IsPermission(err) {
		t.Errorf("refusal %q: not one line, or not a permission error", line)
	}
	if what, _ := systemWideRefusal(0, 0, true); !strings.Contains(what, "seccomp") {
		t.Errorf("refused at level 0 under seccomp: %q", what)
	}
}

// TestSystemWideDeniedLive: a user without privileges at this machine's
// paranoid level gets the refusal line from Open: the test binary runs
// itself as nobody, without capabilities.
func TestSystemWideDeniedLive(t *testing.T) {
	if os.Getenv("CCTOP_SYSTEMWIDE_CHILD") == "1" {
		_, err := Open(Config{AllProcesses: true})
		fmt.Printf("open: %v\n", err)
		return
	}
	skipIfNoPerf(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run itself as another user")
	}
	if paranoidLevel() <= 0 {
		t.Skipf("kernel.perf_event_paranoid=%d lets every user sample system-wide", paranoidLevel())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "cctop-systemwide")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "sampler.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestSystemWideDeniedLive$")
	cmd.Env = append(os.Environ(), "CCTOP_SYSTEMWIDE_CHILD=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	line := ""
	for l := range strings.Lines(string(out)) {
		if strings.HasPrefix(l, "open: ") {
			line = strings.TrimSpace(l)
		}
	}
	want := fmt.Sprintf("system-wide sampling refused: kernel.perf_event_paranoid is %d, needs <= 0, or CAP_PERFMON or root: permission denied; `sysctl kernel.perf_event_paranoid=0`", paranoidLevel())
	if !strings.Contains(line, want) {
		t.Errorf("as nobody: %q, want it to hold %q\n%s", line, want, out)
	}
}

// hostSession is a session with no events in AllProcesses mode, as
// tableSession is for a target: it takes records as the rings would hand
// them over.
func hostSession() *Session {
	s := &Session{
		cfg: Config{AllProcesses: true}, self: os.Getpid(), procs: map[int]bool{}, threads: newThreadTable(),
		ids: map[uint64]EventRef{}, root: map[int]int{}, heirs: map[int]int{}, rootEnded: map[int]bool{},
		early: map[int]bool{}, earlier: map[int]bool{},
	}
	s.threads.forgetExited = true
	return s
}

func kinds(rs []Record, pid int) []Kind {
	var ks []Kind
	for _, r := range rs {
		if int(r.PID) == pid {
			ks = append(ks, r.Kind)
		}
	}
	return ks
}

// TestSystemWideTracking: system-wide, a process is tracked from its first
// sample, with a KindNewProcess record ahead of it and its threads named from
// /proc, or from its FORK by a tracked process (without one); records of
// processes not tracked, of the idle task and of cctop itself are dropped;
// the thread table keeps up with the threads alive however many came and
// went; an ended process is forgotten (KindGone), one gone before it could
// be read too.
func TestSystemWideTracking(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	s := hostSession()
	p := sleeper.Process.Pid
	// PIDs no task has here (above pid_max): gone as /proc sees them.
	child, other, ghost := fakePID+10, fakePID+20, fakePID+30
	sample := func(pid, tid int, time uint64) Record {
		return Record{Kind: KindSample, PID: uint32(pid), TID: uint32(tid), Time: time}
	}
	fork := func(ppid, pid, tid int, time uint64) Record {
		return Record{Kind: KindFork, PID: uint32(pid), TID: uint32(tid), PPID: uint32(ppid), PTID: uint32(ppid), Time: time}
	}
	exit := func(pid, tid int, time uint64) Record {
		return Record{Kind: KindExit, PID: uint32(pid), TID: uint32(tid), PPID: 1, Time: time}
	}

	got := s.drainOf(
		Record{Kind: KindMmap, PID: uint32(other), TID: uint32(other), Filename: "/lib/x.so", Time: 1},
		Record{Kind: KindComm, PID: uint32(other), TID: uint32(other), Comm: "other", Time: 2},
		fork(other, other, other+1, 2), fork(other, other+5, other+5, 2),
		sample(os.Getpid(), os.Getpid(), 3), sample(0, 0, 4),
		sample(p, p, 10), sample(p, p, 11))
	if ks := kinds(got, p); !slices.Equal(ks, []Kind{KindNewProcess, KindComm, KindSample, KindSample}) {
		t.Errorf("records of %d: %v, want new process, its thread's name, two samples", p, ks)
	}
	if len(got) != 4 {
		t.Errorf("%d records handed on, want the 4 of %d: %+v", len(got), p, got)
	}
	if th := s.threads.byTID[uint32(p)]; th == nil || th.Name != "sleep" || th.Samples != 2 {
		t.Errorf("row of %d: %+v, want sleep with 2 samples", p, th)
	}
	if ks := kinds(s.drainOf(sample(p, p, 20)), p); !slices.Equal(ks, []Kind{KindSample}) {
		t.Errorf("tracked already: %v", ks)
	}

	// A child of a tracked process is tracked from its FORK; its
	// threads come and go by the thousand, sampled, and the table keeps
	// the live ones only.
	if ks := kinds(s.drainOf(fork(p, child, child, 30)), child); !slices.Equal(ks, []Kind{KindFork}) {
		t.Errorf("child's records: %v, want its fork alone", ks)
	}
	for i := range 10000 {
		tid := child + 1 + i%5
		at := uint64(100 + 10*i)
		s.drainOf(fork(child, child, tid, at), sample(child, tid, at+1), exit(child, tid, at+2))
	}
	if n := len(s.threads.byTID); n != 2 {
		t.Errorf("%d rows after 10,000 threads came and went, want 2 (%d and %d): %v", n, p, child, s.Threads())
	}
	// A sample read a drain after its thread's exit (another CPU's ring)
	// makes no row.
	late := child + 100
	s.drainOf(fork(child, child, late, 199_990), exit(child, late, 200_000))
	s.drainOf(sample(child, late, 199_999))
	if th := s.threads.byTID[uint32(late)]; th != nil {
		t.Errorf("a late sample left a row for exited thread %d: %+v", late, th)
	}

	// The child ends: forgotten the drain after its last thread's exit.
	s.drainOf(exit(child, child, 300_000))
	s.drainOf()
	if gone := gonePIDs(s.drainOf()); !slices.Equal(gone, []int{child}) {
		t.Errorf("gone %v, want [%d]", gone, child)
	}
	// A process gone before it could be listed is forgotten all the same.
	if ks := kinds(s.drainOf(sample(ghost, ghost, 400_000)), ghost); !slices.Equal(ks, []Kind{KindNewProcess, KindSample}) {
		t.Errorf("ghost's records: %v", ks)
	}
	s.drainOf()
	if gone := gonePIDs(s.drainOf()); !slices.Equal(gone, []int{ghost}) {
		t.Errorf("gone %v, want [%d]", gone, ghost)
	}
	if len(s.procs) != 1 || !s.procs[p] || len(s.threads.byTID) != 1 || len(s.threads.alive) != 1 {
		t.Errorf("tracked %v, rows %d, alive %v: want %d alone", s.procs, len(s.threads.byTID), s.threads.alive, p)
	}
	// The sleeper ends without an EXIT read (lost with a full ring): the
	// look at /proc ends it.
	sleeper.Process.Kill()
	sleeper.Wait()
	s.lastScan = time.Time{}
	s.scanHost()
	s.drainOf()
	s.drainOf()
	if gone := gonePIDs(s.drainOf()); !slices.Equal(gone, []int{p}) {
		t.Errorf("gone %v after the look at /proc, want [%d]", gone, p)
	}
	if len(s.procs) != 0 || len(s.threads.byTID) != 0 || len(s.threads.alive) != 0 {
		t.Errorf("left after every process ended: tracked %v, rows %v, alive %v", s.procs, s.Threads(), s.threads.alive)
	}
}

// TestSystemWideLive samples the whole machine at 99 Hz while two processes
// spin, one started before the session and one after: samples come from
// both and from each of their threads, each process announced
// (KindNewProcess) before its first sample and forgotten (KindGone) after it
// exits, with no row of their threads left; this test process spins too,
// and none of its samples come unless IncludeSelf asks for them.
func TestSystemWideLive(t *testing.T) {
	skipIfNoSystemWide(t)
	bin := buildAttachTarget(t)
	var stop atomic.Bool
	defer stop.Store(true)
	go func() {
		for x := 0; !stop.Load(); x++ {
			_ = x * x
		}
	}()

	// 2 workers now, a 3rd after 100 ms, exit after 3 s.
	before := startTarget(t, bin, "2", "100", "3000")
	before.waitWorkers(t, 3)
	s, err := Open(Config{AllProcesses: true, Freq: 99})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after := startTarget(t, bin, "2", "100", "3000")

	perTID := map[uint32]int{}
	newAt := map[int]int{}   // pid: index of its KindNewProcess among the records read
	firstAt := map[int]int{} // pid: index of its first sample
	gone := map[int]bool{}
	selfSamples, n := 0, 0
	pids := []int{before.pid, after.pid}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for !gone[before.pid] || !gone[after.pid] {
		b, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			t.Fatalf("no KindGone for both of %v after 90 s: gone %v", pids, gone)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Records {
			n++
			pid := int(r.PID)
			switch r.Kind {
			case KindSample:
				if pid == os.Getpid() {
					selfSamples++
				}
				if _, ok := firstAt[pid]; !ok {
					firstAt[pid] = n
				}
				perTID[r.TID]++
			case KindNewProcess:
				if _, ok := newAt[pid]; !ok {
					newAt[pid] = n
				}
			case KindGone:
				gone[pid] = true
			}
		}
	}
	for _, tg := range []*target{before, after} {
		<-tg.done
		for name, tid := range tg.waitWorkers(t, 3) {
			if perTID[uint32(tid)] == 0 {
				t.Errorf("pid %d %s (tid %d): no samples", tg.pid, name, tid)
			}
		}
		if na, ok := newAt[tg.pid]; !ok || na > firstAt[tg.pid] {
			t.Errorf("pid %d: KindNewProcess at record %d (seen %v), first sample at %d", tg.pid, na, ok, firstAt[tg.pid])
		}
		for _, th := range s.Threads() {
			if int(th.PID) == tg.pid {
				t.Errorf("pid %d gone, and its thread %d keeps a row", tg.pid, th.TID)
			}
		}
	}
	if selfSamples != 0 {
		t.Errorf("%d samples of cctop's own pid %d", selfSamples, os.Getpid())
	}
	t.Logf("%d records; samples of %d threads; %+v", n, len(perTID), s.Stats())
	s.Close()

	// The same with IncludeSelf: this process's spinning is sampled.
	s2, err := Open(Config{AllProcesses: true, Freq: 99, IncludeSelf: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel2()
	selfSamples = 0
	for selfSamples == 0 {
		b, err := s2.Next(ctx2)
		if errors.Is(err, io.EOF) {
			t.Fatal("no sample of this process in 90 s with IncludeSelf")
		}
		for _, r := range b.Records {
			if r.Kind == KindSample && int(r.PID) == os.Getpid() {
				selfSamples++
			}
		}
	}
}

// TestSystemWideUprobes: counting probes system-wide are opened per CPU for
// every task like any group, through tracefs or the uprobe PMU, a probe-led
// group too (AllTasks changes nothing): the counts and the probe samples
// come from a process that runs the probed code, started after Open.
func TestSystemWideUprobes(t *testing.T) {
	skipIfNoSystemWide(t)
	bin := buildSpinners(t)
	skipIfNoUprobes(t, buildCalls(t))
	for _, pmu := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "uprobe PMU"}[pmu], func(t *testing.T) {
			k := kernelBoundary()
			k.pmuUprobes = pmu
			s, err := openWith(Config{AllProcesses: true, Freq: 99, UserOnly: true, Members: []EventSpec{uprobeSpec(t, bin, "fa")},
				Extra: []Group{{Leader: uprobeSpec(t, bin, "fb"), Period: 1000, AllTasks: true}}}, k)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, want := s.fdsPerThread(), 3*s.CPUs(); got != want || len(s.tidFDs[-1]) != want || s.Followed() {
				t.Errorf("%d events (%d per CPU opened), followed %v; want %d, not followed", len(s.tidFDs[-1]), got, s.Followed(), want)
			}
			cmd := exec.Command(bin, "2", "60")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			var calls, probed uint64
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for calls == 0 || probed == 0 {
				b, err := s.Next(ctx)
				if errors.Is(err, io.EOF) {
					t.Fatalf("in 60 s: %d calls of fa counted, %d samples at fb", calls, probed)
				}
				for _, r := range b.Records {
					if r.Kind != KindSample || int(r.PID) != cmd.Process.Pid {
						continue
					}
					if ref, _ := s.Event(r.ID); ref.Group == 1 {
						probed++
					} else if len(r.Values) == 2 {
						calls += r.Values[1].Value
					}
				}
			}
		})
	}
}

// TestSystemWideReconfigure: a system-wide session reopens its events per
// CPU with a new rate and samples on; off-CPU time asked for then is
// refused, and it samples on as before.
func TestSystemWideReconfigure(t *testing.T) {
	skipIfNoSystemWide(t)
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { busy.Process.Kill(); busy.Wait() }()
	s, err := Open(Config{AllProcesses: true, Freq: 99})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sampled := func(what string) {
		t.Helper()
		for {
			b, err := s.Next(ctx)
			if errors.Is(err, io.EOF) {
				t.Fatalf("%s: no sample of the busy shell %d in 90 s", what, busy.Process.Pid)
			}
			for _, r := range b.Records {
				if r.Kind == KindSample && int(r.PID) == busy.Process.Pid {
					return
				}
			}
		}
	}
	sampled("opened")
	if _, err := s.ReconfigureWith(func(c *Config) { c.Freq = 49 }); err != nil {
		t.Fatal(err)
	}
	if n := len(s.tidFDs[-1]); n != s.CPUs() || len(s.tidFDs) != 1 || s.Config().Freq != 49 {
		t.Errorf("after reopening: %d events on %d CPUs, %d sets, %d Hz", n, s.CPUs(), len(s.tidFDs), s.Config().Freq)
	}
	sampled("reopened at 49 Hz")
	_, err = s.ReconfigureWith(func(c *Config) { c.OffCPU = true })
	if err == nil || !strings.Contains(err.Error(), "off-CPU time is not recorded system-wide") || s.Config().OffCPU {
		t.Errorf("off-CPU asked for: %v, in force %v", err, s.Config().OffCPU)
	}
	sampled("after the refusal")
}

// TestSelects: a selection takes its pids, and processes by name, read
// once: a process not taken is remembered until it executes another
// program or exits, and the memory is bounded.
func TestSelects(t *testing.T) {
	self := os.Getpid()
	comm := readComm(self, self)
	if comm == "" {
		t.Skip("no /proc")
	}
	s := &Session{cfg: Config{AllProcesses: true, Select: &Selection{PIDs: []int{1 << 30}, Names: []string{comm}}}}
	if !s.selects(1<<30) || !s.selects(self) {
		t.Errorf("a selected pid or name not taken")
	}
	other := os.Getppid()
	if readComm(other, other) == comm {
		t.Skip("the parent has the test's name")
	}
	if s.selects(other) || !s.rejected[other] {
		t.Errorf("pid %d (%s) taken, or not remembered as not taken", other, readComm(other, other))
	}
	s.hostRecord(&Record{Kind: KindComm, PID: uint32(other), TID: uint32(other), Misc: miscCommExec})
	if s.rejected[other] {
		t.Error("an exec did not forget that the process was not taken")
	}
	for pid := 1 << 24; pid < 1<<24+maxRejected+10; pid++ {
		s.rejected[pid] = true
	}
	s.selects(other)
	if len(s.rejected) > maxRejected {
		t.Errorf("%d processes remembered, bound %d", len(s.rejected), maxRejected)
	}
	if (&Session{}).selects(other) != true {
		t.Error("no selection: a process not taken")
	}
}
