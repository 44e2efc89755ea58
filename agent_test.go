package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/otlp"
)

// received reads what the collector wrote, as `cctop view` reads such a
// file: every record, merged into one set of profiles.
func received(t *testing.T, c *testutil.Collector) (pprofile.Profiles, int) {
	t.Helper()
	n := len(c.Records())
	if n == 0 {
		return pprofile.NewProfiles(), 0
	}
	ps, err := otlp.ReadFile(c.Out)
	if err != nil {
		t.Fatal(err)
	}
	return ps, n
}

// agentCounts are the delivery counts of the agent's last status line.
type agentCounts struct{ windows, sent, retried, dropped, failed int }

// windows counts those with samples: an empty window is not sent (at 19 Hz
// on a loaded machine a 1 s window can be).
var agentLast = regexp.MustCompile(`stopped after (\d+) windows with samples and \d+ without; otlp: sent (\d+), retried (\d+), dropped (\d+), failed (\d+)`)

func lastCounts(t *testing.T, stderr string) agentCounts {
	t.Helper()
	m := agentLast.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no final status line:\n%s", stderr)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	return agentCounts{n(1), n(2), n(3), n(4), n(5)}
}

// TestAgentToCollector: the agent pushes windows of a built-in workload to
// a real OpenTelemetry Collector. What the collector received, per sample
// type, adds up to the local pprof profile the agent wrote in the same run,
// and the workload's hot stack is there by name, in a mapping that names
// its binary with a build ID.
func TestAgentToCollector(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "proto"})
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "agent", "--otlp", col.Addr, "--otlp-insecure", "--window", "1s",
		"-F", "199", "-o", "local.pb.gz", "--service-name", "density-test",
		"--", cctopBin, "workload", "density", "-rounds", "40")
	if code != 0 {
		t.Fatalf("agent exit %d:\n%s", code, stderr)
	}
	c := lastCounts(t, stderr)
	ps, records := received(t, col)
	t.Logf("%d windows, %d records received; %+v", c.windows, records, c)
	if c.sent != c.windows || c.dropped+c.failed != 0 || records != c.windows {
		t.Errorf("%d windows cut, %d sent, %d records received, %d dropped, %d failed", c.windows, c.sent, records, c.dropped, c.failed)
	}
	if c.windows < 2 {
		t.Errorf("only %d windows of 1 s in the run", c.windows)
	}

	// Totals per sample type against the local profile.
	local := testutil.ReadProfile(t, filepath.Join(dir, "local.pb.gz"))
	sums := map[string]int64{}
	dict := ps.Dictionary()
	strs := dict.StringTable()
	for _, rp := range ps.ResourceProfiles().All() {
		attrs := rp.Resource().Attributes()
		if v, ok := attrs.Get("service.name"); !ok || v.Str() != "density-test" {
			t.Errorf("service.name %v", attrs.AsRaw())
		}
		for _, key := range []string{"host.name", "process.pid", "process.executable.name", "process.executable.path"} {
			if _, ok := attrs.Get(key); !ok {
				t.Errorf("resource lacks %s: %v", key, attrs.AsRaw())
			}
		}
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				st := p.SampleType()
				key := strs.At(int(st.TypeStrindex())) + "/" + strs.At(int(st.UnitStrindex()))
				for _, s := range p.Samples().All() {
					for _, v := range s.Values().All() {
						sums[key] += v
					}
				}
			}
		}
	}
	for _, st := range local.SampleType {
		key := st.Type + "/" + st.Unit
		want := testutil.SumValue(t, local, st.Type)
		if sums[key] != want {
			t.Errorf("%s: the collector received %d, the local profile has %d", key, sums[key], want)
		}
	}
	if len(sums) != len(local.SampleType) {
		t.Errorf("sample types received %v, local %d", sums, len(local.SampleType))
	}

	// The hot stack, by name, with its binary's build ID.
	procs, err := otlp.Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	tree, meta := otlp.Merge(procs)
	leaf := "github.com/cctop/cctop/workload.densityLeaf"
	var hot, identified int64
	modules := map[string]cct.Module{}
	for id := 1; id < tree.Len(); id++ {
		n := tree.Node(cct.NodeID(id))
		if f := tree.Func(n.Func); f.Name == leaf {
			hot += n.Self.Samples
			mod := meta.Modules[f.Module]
			modules[f.Module] = mod
			if mod.BuildID != "" || mod.GoBuildID != "" {
				identified += n.Self.Samples
			}
		}
	}
	total := tree.Total().Samples
	t.Logf("%s: %d of %d samples, %d in a module with a build ID: %+v", leaf, hot, total, identified, modules)
	if hot == 0 || float64(hot) < 0.5*float64(total) {
		t.Errorf("%s has %d of %d samples received", leaf, hot, total)
	}
	if identified != hot {
		t.Errorf("%d of the hot leaf's %d samples are in a module without a build ID: %+v", hot-identified, hot, modules)
	}
}

// TestAgentCollectorAway: the collector is killed for 20 s in the middle of
// a run and started again. Every window cut meanwhile is queued and
// delivered once it is back (the queue holds 60), none twice, and the
// agent's counts match what the collector received.
func TestAgentCollectorAway(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if testing.Short() {
		t.Skip("takes 30 s")
	}
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "proto"})
	dir := t.TempDir()
	cmd := exec.Command(cctopBin, "agent", "--otlp", col.Addr, "--otlp-insecure", "--window", "1s", "-d", "30s",
		"--", cctopBin, "workload", "spin", "-loop")
	cmd.Dir = dir
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	col.Kill()
	away := time.Now()
	time.Sleep(20 * time.Second)
	col.Restart()
	t.Logf("collector away %.1f s", time.Since(away).Seconds())
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent: %v\n%s", err, errOut.String())
	}
	c := lastCounts(t, errOut.String())
	_, records := received(t, col)
	t.Logf("%+v; %d records received", c, records)
	if c.dropped != 0 || c.failed != 0 || c.sent != c.windows || records != c.windows {
		t.Errorf("%d windows, %d sent, %d received, %d dropped, %d failed", c.windows, c.sent, records, c.dropped, c.failed)
	}
	if c.retried == 0 {
		t.Errorf("no retries while the collector was away:\n%s", errOut.String())
	}
}

// TestAgentResourceExhausted: a collector that rejects with
// RESOURCE_EXHAUSTED and asks for 3 s between tries gets them: the agent
// retries three rejected pushes no more often than asked (a busy loop
// would retry hundreds of times), and then delivers every window.
func TestAgentResourceExhausted(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "proto", RejectFirst: 3, RejectCode: "resource_exhausted", RetryDelay: 3 * time.Second})
	dir := t.TempDir()
	start := time.Now()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "agent", "--otlp", col.Addr, "--otlp-insecure", "--window", "1s", "-d", "4s",
		"--flush-timeout", "30s", "--", cctopBin, "workload", "spin", "-loop")
	if code != 0 {
		t.Fatalf("agent exit %d:\n%s", code, stderr)
	}
	c := lastCounts(t, stderr)
	_, records := received(t, col)
	t.Logf("%+v; %d records; %.1f s", c, records, time.Since(start).Seconds())
	if c.retried != 3 {
		t.Errorf("%d retries for 3 rejections", c.retried)
	}
	if c.sent != c.windows || records != c.windows || c.dropped+c.failed != 0 {
		t.Errorf("%d windows, %d sent, %d received, %d dropped, %d failed", c.windows, c.sent, records, c.dropped, c.failed)
	}
	// Three waits of at least 3 s each, less the jitter.
	if d := time.Since(start); d < 8*time.Second {
		t.Errorf("three rejections asking for 3 s each were over in %.1f s", d.Seconds())
	}
}

// TestAgentTLS: with the collector's CA the agent delivers over TLS; with
// another CA it stops at once with one line that names the certificate
// problem and the flag, not a retry loop.
func TestAgentTLS(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	cert := testutil.SelfSignedCert(t, dir, "collector", net.IPv4(127, 0, 0, 1))
	other := testutil.SelfSignedCert(t, dir, "other", net.IPv4(127, 0, 0, 1))
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "proto", TLSCert: cert.CertFile, TLSKey: cert.KeyFile})

	_, stderr, code := testutil.Run(t, cctopBin, dir, "agent", "--otlp", col.Addr, "--otlp-ca", other.CertFile, "--window", "1s",
		"--", cctopBin, "workload", "spin", "-loop")
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 1 || len(lines) != 1 || !strings.Contains(stderr, "certificate") || !strings.Contains(stderr, "--otlp-ca") {
		t.Errorf("wrong CA: exit %d, want 1 and one line naming the certificate and --otlp-ca:\n%s", code, stderr)
	}

	_, stderr, code = testutil.Run(t, cctopBin, dir, "agent", "--otlp", col.Addr, "--otlp-ca", cert.CertFile, "--window", "1s", "-d", "3s",
		"--", cctopBin, "workload", "spin", "-loop")
	if code != 0 {
		t.Fatalf("right CA: exit %d:\n%s", code, stderr)
	}
	c := lastCounts(t, stderr)
	if _, records := received(t, col); c.sent == 0 || records != c.sent {
		t.Errorf("over TLS: %d sent, %d received:\n%s", c.sent, records, stderr)
	}
}

// TestAgentSIGTERM: SIGTERM ends the agent; what is queued for a collector
// that never answers is given --flush-timeout and no more, then counted as
// unsent, and the local profile is written all the same.
func TestAgentSIGTERM(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	l := hungCollector(t)
	dir := t.TempDir()
	agent := exec.Command(cctopBin, "agent", "--otlp", l.Addr().String(), "--otlp-insecure", "--window", "1s",
		"--flush-timeout", "2s", "-o", "local.pb.gz", "--", cctopBin, "workload", "spin", "-loop")
	agent.Dir = dir
	// A file, not a buffer: the test reads it while the agent writes.
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	agent.Stderr = errFile
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	stderr := func() string { b, _ := os.ReadFile(errFile.Name()); return string(b) }
	// Three windows cut (a window line each), then SIGTERM.
	for deadline := time.Now().Add(60 * time.Second); strings.Count(stderr(), "): 1 processes") < 3; {
		if time.Now().After(deadline) {
			agent.Process.Kill()
			agent.Wait()
			t.Fatalf("no three windows in a minute:\n%s", stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
	agent.Process.Signal(syscall.SIGTERM)
	term := time.Now()
	err = agent.Wait()
	t.Logf("exit %v %.1f s after SIGTERM", err, time.Since(term).Seconds())
	out := stderr()
	if !strings.Contains(out, "left unsent at close") {
		t.Errorf("no count of the windows left unsent:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "local.pb.gz")); err != nil {
		t.Errorf("the local profile was not written: %v\n%s", err, out)
	}
	if ps := testutil.ReadProfile(t, filepath.Join(dir, "local.pb.gz")); len(ps.Sample) == 0 {
		t.Error("the local profile is empty")
	}
}

// TestViewOTLPFile: what a collector's file exporter wrote opens in `cctop
// view`, JSON lines as proto, with the workload's hot path; a base file
// gives the Δ column.
func TestViewOTLPFile(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "json"})
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "agent", "--otlp", col.Addr, "--otlp-insecure", "--window", "1s",
		"-F", "199", "--", cctopBin, "workload", "density", "-rounds", "20")
	if code != 0 {
		t.Fatalf("agent exit %d:\n%s", code, stderr)
	}
	lastCounts(t, stderr)
	s := newTmux(t, 120, 30, cctopBin+" view "+col.Out+" --base "+col.Out)
	s.waitFor(`workload\.densityRounds`, 15*time.Second)
	s.keys("e")
	s.waitFor(`workload\.densityLeaf`, 5*time.Second)
	if scr := s.screen(); !strings.Contains(scr, "Δ") || !strings.Contains(scr, "vs base file") {
		t.Errorf("no Δ column against the base:\n%s", scr)
	}
}

// hungCollector is a listener on loopback that accepts connections and
// never answers: a collector that hangs.
func hungCollector(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				break
			}
			conns = append(conns, c) // held open, never answered
		}
		for _, c := range conns {
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return l
}

// TestAgentAttach: `cctop agent -p PID` profiles a process it did not
// start, which runs on after the agent stops; each window's resource is
// that process, with its executable.
func TestAgentAttach(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "proto"})
	w := exec.Command(cctopBin, "workload", "spin", "-loop")
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Process.Kill(); w.Wait() }()
	_, stderr, code := testutil.Run(t, cctopBin, t.TempDir(), "agent", "-p", strconv.Itoa(w.Process.Pid), "--otlp", col.Addr, "--otlp-insecure",
		"--window", "1s", "-d", "3s", "-F", "99")
	if code != 0 {
		t.Fatalf("agent exit %d:\n%s", code, stderr)
	}
	c := lastCounts(t, stderr)
	ps, records := received(t, col)
	procs, err := otlp.Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.Resource.PID != int64(w.Process.Pid) || p.Resource.ExecutablePath != cctopBin {
			t.Errorf("a resource of pid %d, %q; want %d, %s", p.Resource.PID, p.Resource.ExecutablePath, w.Process.Pid, cctopBin)
		}
	}
	if c.windows < 2 || records != c.windows || len(procs) != c.windows {
		t.Errorf("%+v; %d records, %d resources", c, records, len(procs))
	}
	if err := w.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the attached process did not survive the agent: %v", err)
	}
}

// TestAgentAll: `cctop agent --all` profiles every process on the host, one
// OTLP resource per process: two workloads started apart from it are there
// under their own PIDs with their executable and hot function, their stacks
// unwound from the stack copies down to the goroutine's root (names only:
// the agent reads no DWARF, and leaves a Go binary's .debug_frame to the
// pclntab), and the agent itself is not.
func TestAgentAll(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if os.Geteuid() != 0 {
		t.Skip("--all needs root here (perf_event_paranoid > 0)")
	}
	col := testutil.StartCollector(t, testutil.CollectorOptions{Format: "proto"})
	var workers []*exec.Cmd
	for range 2 {
		w := exec.Command(cctopBin, "workload", "spin", "-loop")
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, w)
	}
	defer func() {
		for _, w := range workers {
			w.Process.Kill()
			w.Wait()
		}
	}()
	dir := t.TempDir()
	agent := exec.Command(cctopBin, "agent", "--all", "--otlp", col.Addr, "--otlp-insecure", "--window", "1s", "-d", "4s", "-F", "99",
		"-o", "local.pb.gz")
	agent.Dir = dir
	var errOut strings.Builder
	agent.Stderr = &errOut
	if err := agent.Run(); err != nil {
		t.Fatalf("agent: %v\n%s", err, errOut.String())
	}
	c := lastCounts(t, errOut.String())
	ps, _ := received(t, col)
	procs, err := otlp.Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[int64]int64{}
	spinning := map[int64]int64{}
	for _, p := range procs {
		samples[p.Resource.PID] += p.Tree.Total().Samples
		if p.Resource.ExecutableName == "cctop" {
			spinning[p.Resource.PID] += p.Tree.SamplesOf("github.com/cctop/cctop/workload.spinLeaf")
		}
	}
	t.Logf("%+v; %d resources from %d processes", c, len(procs), len(samples))
	for _, w := range workers {
		pid := int64(w.Process.Pid)
		if samples[pid] == 0 || spinning[pid] < samples[pid]/2 {
			t.Errorf("workload %d: %d samples, %d in spinLeaf", pid, samples[pid], spinning[pid])
		}
	}
	if n := samples[int64(agent.Process.Pid)]; n != 0 {
		t.Errorf("the agent profiled itself: %d samples", n)
	}
	if c.sent != c.windows || c.dropped+c.failed != 0 {
		t.Errorf("%+v", c)
	}

	// The same run's local profile: the stacks, whole.
	p := testutil.ReadProfile(t, filepath.Join(dir, "local.pb.gz"))
	si := -1
	for i, st := range p.SampleType {
		if st.Type == "samples" {
			si = i
		}
	}
	if si < 0 {
		t.Fatalf("no samples type: %v", p.SampleType)
	}
	var leaf, rooted, own int64
	for _, s := range p.Sample {
		var names []string
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				names = append(names, ln.Function.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		n := s.Value[si]
		if pid := s.NumLabel["pid"]; len(pid) == 1 && pid[0] == int64(agent.Process.Pid) {
			own += n
		}
		if names[0] != "github.com/cctop/cctop/workload.spinLeaf" {
			continue
		}
		leaf += n
		if names[len(names)-1] == "runtime.goexit" {
			rooted += n
		}
	}
	t.Logf("spinLeaf %d samples, %d rooted at runtime.goexit; %d of the agent's own pid", leaf, rooted, own)
	// The workers share the host with whatever else runs (CI runs other
	// packages' tests beside this one: 55 spinLeaf samples once, where an
	// idle machine gives 780): enough samples to judge the stacks by,
	// not a rate.
	if leaf < 30 || rooted < leaf*95/100 {
		t.Errorf("%d of %d spinLeaf stacks reach runtime.goexit", rooted, leaf)
	}
	if own > 0 {
		t.Errorf("the local profile has %d samples of the agent's own pid", own)
	}
}

// TestTopOTLPHungCollector: top --otlp in front of a "collector" that
// accepts connections and never answers. The UI comes up and runs while
// the check of the collector hangs (the header says so), q quits at once
// and cctop ends within the push's deadline (10 s), saying the profile was
// not delivered.
func TestTopOTLPHungCollector(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	l := hungCollector(t)
	s := newTmuxShell(t, "", 160, 30)
	s.run(cctopBin + " top --otlp " + l.Addr().String() + " --otlp-insecure -- " + cctopBin + " workload spin -loop")
	s.waitFor(`otlp 127\.0\.0\.1:\d+: push at quit, checking the collector`, 15*time.Second)
	s.waitFor(`workload\.spin`, 15*time.Second)
	quit := time.Now()
	s.keys("q")
	code := s.exitCode(60 * time.Second)
	t.Logf("exit %d %.1f s after q", code, time.Since(quit).Seconds())
	if code != 1 {
		t.Errorf("exit status %d, want 1 (not delivered)", code)
	}
	if scr := s.capture("-S", "-"); !strings.Contains(scr, "left unsent at close") {
		t.Errorf("no word of the push's failure:\n%s", scr)
	}
}
