//go:build linux

package sampler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/symbol"
)

// BenchmarkManyCore measures what counting probes cost in events and time
// against CPUs and threads, with tracefs probes and with uprobe PMU events,
// on this machine's CPUs presented as more (the fake CPU list of
// newFakeCPUs: every event is real, on CPU c mod the real count). Each run
// samples a target of THREADS threads (testdata/spinners.c), arms four
// probes the way automatic counting does (Reconfigure), and closes the
// session. Metrics: events (opened to arm), slow-closes (closes that wait
// for the kernel to unregister a uprobe), arm-ms, release-ms. bench/manycore.sh
// runs it; MANYCORE="cpus:threads ..." picks the sizes. PMU runs whose
// slow closes would take more than about a minute are skipped.
func BenchmarkManyCore(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for uprobes")
	}
	bin := buildSpinners(b)
	var members []EventSpec
	for _, fn := range []string{"fa", "fb", "fc", "fd"} {
		off, err := symbol.FuncOffset(bin, fn)
		if err != nil {
			b.Fatal(err)
		}
		members = append(members, EventSpec{Name: "uprobe:" + fn, UprobePath: bin, UprobeOffset: off})
	}
	sizes := "2:16 16:16 64:16 64:64"
	if s := os.Getenv("MANYCORE"); s != "" {
		sizes = s
	}
	for _, size := range strings.Fields(sizes) {
		c, th, _ := strings.Cut(size, ":")
		ncpu, _ := strconv.Atoi(c)
		nthreads, _ := strconv.Atoi(th)
		for _, design := range []string{"tracefs", "pmu"} {
			for _, mode := range []string{"launch", "attach"} {
				name := fmt.Sprintf("%s/%s/cpus=%d/threads=%d", design, mode, ncpu, nthreads)
				b.Run(name, func(b *testing.B) {
					if design == "pmu" && ncpu*(nthreads+1)*len(members) > 600 {
						b.Skipf("about %d uprobe PMU events at 70-110 ms each to close", ncpu*(nthreads+1)*len(members))
					}
					if design == "tracefs" && !newProbeSet().usable() {
						b.Skip("tracefs not writable")
					}
					for range b.N {
						manyCoreRun(b, bin, members, ncpu, nthreads, mode, design == "pmu")
					}
				})
			}
		}
	}
}

func manyCoreRun(b *testing.B, bin string, members []EventSpec, ncpu, nthreads int, mode string, pmu bool) {
	b.StopTimer()
	fake, k := newFakeCPUs(b, ncpu)
	k.pmuUprobes = pmu
	cfg := Config{UserOnly: true, Stdout: new(nopWriter)}
	var target *exec.Cmd
	if mode == "launch" {
		cfg.Argv = []string{bin, strconv.Itoa(nthreads), "60"}
	} else {
		target = exec.Command(bin, strconv.Itoa(nthreads), "60")
		if err := target.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() { target.Process.Kill(); target.Wait() }()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if ts, _ := listThreads(target.Process.Pid); len(ts) > nthreads {
				break
			}
		}
		cfg.PID = target.Process.Pid
	}
	s, err := openWith(cfg, k)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	s.Run(ctx, func(*Batch) {})
	cancel()
	before := fake.total()
	t0 := time.Now()
	if _, err := s.Reconfigure(members); err != nil {
		// Re-opening every thread's events with the probes does not fit
		// (descriptors): automatic counting declines such a target.
		b.Skipf("arming refused: %v", err)
	}
	arm := time.Since(t0)
	events := fake.total() - before
	slow := s.ProbeEvents()
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	s.Run(ctx, func(*Batch) {})
	cancel()
	// What the user waits for at the end: closing everything, the kernel
	// unregistering the uprobes included (closeSession hands this to a
	// child process; here it is timed whole).
	t0 = time.Now()
	files, probes := s.DetachEvents()
	for _, f := range files {
		f.Close()
	}
	DeleteProbes(probes)
	release := time.Since(t0)
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(slow), "slow-closes")
	b.ReportMetric(float64(arm.Milliseconds()), "arm-ms")
	b.ReportMetric(float64(release.Milliseconds()), "release-ms")
	if mode == "launch" && s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
	}
}

func (f *fakeCPUs) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.opened {
		n += c
	}
	return n
}
