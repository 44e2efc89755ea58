package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
)

// TestRecordHost (issue 32): `cctop record` with no target samples every
// process on the host, as perf record -a: two workloads started apart from
// it are in the profile under their own pid and comm labels with their hot
// functions, cctop itself is not, and the summary says it sampled the host.
// `-C` limits the CPUs, and a CPU that is not online is one line and exit 1.
func TestRecordHost(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if ok, why := sampler.SystemWideAllowed(); !ok {
		t.Skipf("system-wide sampling not permitted here: %s", why)
	}
	start := func(args ...string) int {
		w := exec.Command(cctopBin, append([]string{"workload"}, args...)...)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Process.Kill(); w.Wait() })
		return w.Process.Pid
	}
	spin := start("spin", "-threads", "1", "-loop")
	density := start("density", "-duration", "60s")
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "3s", "-o", "h.pb.gz")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "no target: sampling every process on the host") || !strings.Contains(stderr, "the host: ") {
		t.Errorf("the summary does not say the host was sampled:\n%s", stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "h.pb.gz"))
	type key struct {
		pid int64
		fn  string
	}
	by := map[key]int64{}
	comms := map[int64]string{}
	var all int64
	for _, s := range p.Sample {
		pid := int64(-1)
		if v := s.NumLabel["pid"]; len(v) == 1 {
			pid = v[0]
		}
		if c := s.Label["comm"]; len(c) == 1 {
			comms[pid] = c[0]
		}
		all += s.Value[0]
		for _, l := range s.Location {
			for _, ln := range l.Line {
				by[key{pid, ln.Function.Name}] += s.Value[0]
			}
		}
	}
	for _, c := range []struct {
		pid int
		fn  string
	}{{spin, "github.com/cctop/cctop/workload.spinLeaf"}, {density, "github.com/cctop/cctop/workload.densityLeaf"}} {
		if share := 100 * float64(by[key{int64(c.pid), c.fn}]) / float64(max(all, 1)); share < 10 {
			t.Errorf("pid %d: %s has %.1f%% of the host's samples, want >= 10%%:\n%s", c.pid, c.fn, share, stderr)
		}
		if comms[int64(c.pid)] != "cctop" {
			t.Errorf("pid %d: comm label %q, want cctop", c.pid, comms[int64(c.pid)])
		}
	}
	for k := range by {
		if k.pid != int64(spin) && k.pid != int64(density) && strings.Contains(k.fn, "cctop/engine.") {
			t.Errorf("cctop's own frames in the profile (pid %d: %s)", k.pid, k.fn)
			break
		}
	}

	// -C: one CPU of those online, then one that is not.
	_, stderr, code = testutil.Run(t, cctopBin, dir, "record", "-C", "0", "-d", "1s", "-o", "c.pb.gz")
	if code != 0 || !strings.Contains(stderr, "the host (1 CPU)") && !strings.Contains(stderr, "the host: ") {
		t.Errorf("-C 0: exit %d:\n%s", code, stderr)
	}
	_, stderr, code = testutil.Run(t, cctopBin, dir, "record", "-C", "4096", "-d", "1s", "-o", "x.pb.gz")
	if code != 1 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "CPU 4096 is not online") {
		t.Errorf("-C 4096: exit %d, want 1 and one line:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.pb.gz")); err == nil {
		t.Error("a profile was written for a refused CPU list")
	}
}
