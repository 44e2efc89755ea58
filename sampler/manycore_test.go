//go:build linux

package sampler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeCPUs is a boundary that reports ncpu CPUs, opens each event on a real
// CPU (fake CPU c on real CPU c mod the real count, so that the rings and
// their redirections stay on one CPU) and counts the events by type.
type fakeCPUs struct {
	mu       sync.Mutex
	opened   map[uint32]int // by attr type
	software map[uint64]int // software events by config
	calls    []perfCall     // every event opened, as asked for
}

// perfCall is one perf_event_open that succeeded: the attr, the task and
// the (fake) CPU asked for, and the group leader's descriptor (-1: a leader).
type perfCall struct {
	attr            unix.PerfEventAttr
	pid, cpu, group int
}

func newFakeCPUs(t testing.TB, ncpu int) (*fakeCPUs, boundary) {
	real, err := onlineCPUs()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCPUs{opened: map[uint32]int{}, software: map[uint64]int{}}
	cpus := make([]int, ncpu)
	for i := range cpus {
		cpus[i] = i
	}
	return f, boundary{
		cpus: func() ([]int, error) { return cpus, nil },
		perfOpen: func(a *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error) {
			call := perfCall{attr: *a, pid: pid, cpu: cpu, group: group}
			if cpu >= 0 {
				cpu = real[cpu%len(real)]
			}
			fd, err := unix.PerfEventOpen(a, pid, cpu, group, flags)
			if err == nil {
				f.mu.Lock()
				f.calls = append(f.calls, call)
				f.opened[a.Type]++
				if a.Type == unix.PERF_TYPE_SOFTWARE {
					f.software[a.Config]++
				}
				f.mu.Unlock()
			}
			return fd, err
		},
	}
}

func (f *fakeCPUs) count(typ uint32) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opened[typ]
}

func (f *fakeCPUs) countSoftware(config uint64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.software[config]
}

func buildSpinners(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(t.TempDir(), "spinners")
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", bin, "../testdata/spinners.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func skipIfNoTracefsProbes(t *testing.T) {
	t.Helper()
	if !newProbeSet().usable() {
		t.Skip("uprobes cannot be created in tracefs here")
	}
}

// TestManyCoreProbeEvents: a launched target of 64 threads on 64 CPUs with
// four counting probes opens one event group per CPU (64 clock events, 256
// probe events), whatever its threads: they inherit them. Closing waits for
// the kernel to unregister four uprobes, one per probe, not one per thread,
// CPU and probe (16,384 with per-thread uprobe PMU events). Counts come in
// from every thread.
func TestManyCoreProbeEvents(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildSpinners(t)
	skipIfNoUprobes(t, buildCalls(t))
	skipIfNoTracefsProbes(t)
	const ncpu, nthreads = 64, 64
	fake, k := newFakeCPUs(t, ncpu)
	var members []EventSpec
	for _, fn := range []string{"fa", "fb", "fc", "fd"} {
		members = append(members, uprobeSpec(t, bin, fn))
	}
	s, err := openWith(Config{Argv: []string{bin, fmt.Sprint(nthreads), "2"}, UserOnly: true, Members: members, Stdout: new(nopWriter)}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Followed() {
		t.Error("probe counters switched to following threads one by one")
	}
	if got, want := fake.count(unix.PERF_TYPE_SOFTWARE), ncpu; got != want {
		t.Errorf("clock events: %d, want %d (one per CPU)", got, want)
	}
	if got, want := fake.count(unix.PERF_TYPE_TRACEPOINT), ncpu*len(members); got != want {
		t.Errorf("probe events: %d, want %d (one per CPU and probe)", got, want)
	}
	if got := s.ProbeEvents(); got != len(members) {
		t.Errorf("slow closes: %d, want %d (one per probe)", got, len(members))
	}
	events, slow, inherits := s.ProbeFootprint()
	if events != ncpu || slow != 1 || !inherits {
		t.Errorf("footprint of one more probe: %d events, %d slow closes, inherits %v; want %d, 1, true", events, slow, inherits, ncpu)
	}
	threads, calls := map[uint32]bool{}, uint64(0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Run(ctx, func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind == KindSample && len(r.Values) == len(members)+1 {
				threads[r.TID] = true
				calls += r.Values[1].Value
			}
		}
	})
	if len(threads) < nthreads/2 || calls == 0 {
		t.Errorf("samples with counts from %d threads (%d calls), want most of %d", len(threads), calls, nthreads)
	}
	probes := s.ensureProbes()
	names := probes.detach()
	if len(names) != len(members) {
		t.Errorf("tracefs probes: %v, want %d", names, len(members))
	}
	files, _ := s.DetachEvents()
	for _, f := range files {
		f.Close()
	}
	if err := DeleteProbes(names); err != nil {
		t.Errorf("deleting the probes: %v", err)
	}
	events2, _ := os.ReadFile(filepath.Join(probes.dir, "uprobe_events"))
	if strings.Contains(string(events2), probes.group+"/") {
		t.Errorf("probes left in tracefs:\n%s", events2)
	}
}

// TestManyCoreOffCPU: the context-switches group of Config.OffCPU is opened
// wherever the primary group is: once per CPU on the launched process when
// its threads inherit the events, on every thread and CPU when they are
// followed. Its samples come in from the threads either way.
func TestManyCoreOffCPU(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildSpinners(t)
	const ncpu, nthreads = 64, 8
	for _, follow := range []bool{false, true} {
		t.Run(map[bool]string{false: "inherit", true: "follow"}[follow], func(t *testing.T) {
			fake, k := newFakeCPUs(t, ncpu)
			s, err := openWith(Config{Argv: []string{bin, fmt.Sprint(nthreads), "1"}, OffCPU: true, Follow: follow, Stdout: new(nopWriter)}, k)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if src, why := s.OffCPU(); src != OffCPUSwitchSamples {
				t.Skipf("off-CPU stacks from %q here: %s", src, why)
			}
			threads := map[uint32]bool{}
			if err := s.Run(context.Background(), func(b *Batch) {
				for _, r := range b.Records {
					if r.Kind == KindSample && r.OffCPU {
						threads[r.TID] = true
					}
				}
			}); err != nil {
				t.Fatal(err)
			}
			clocks := fake.countSoftware(unix.PERF_COUNT_SW_CPU_CLOCK)
			switches := fake.countSoftware(unix.PERF_COUNT_SW_CONTEXT_SWITCHES)
			t.Logf("%d clock events, %d context-switches events; switch samples from %d threads; %+v", clocks, switches, len(threads), s.Stats())
			if switches != clocks || switches%ncpu != 0 || (!follow && switches != ncpu) || (follow && switches <= ncpu) {
				t.Errorf("%d context-switches events for %d clock events on %d CPUs", switches, clocks, ncpu)
			}
			if got, want := s.fdsPerThread(), 2*ncpu; got != want {
				t.Errorf("descriptors per thread %d, want %d", got, want)
			}
			if len(threads) < nthreads/2 {
				t.Errorf("switch samples from %d threads, want most of %d", len(threads), nthreads)
			}
		})
	}
}
