package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/symbol"
)

// threadEdges sums one value column of a profile per thread over the
// caller -> callee edges of the leaf frames named callee.
func threadEdges(p *profile.Profile, col int, callee string) map[int64]map[correct.Edge]float64 {
	out := map[int64]map[correct.Edge]float64{}
	for _, s := range p.Sample {
		names := testutil.StackNames(s)
		if len(names) < 2 || names[0] != callee {
			continue
		}
		tid := s.NumLabel["thread_id"][0]
		if out[tid] == nil {
			out[tid] = map[correct.Edge]float64{}
		}
		out[tid][correct.Edge{Caller: names[1], Callee: names[0]}] += float64(s.Value[col])
	}
	return out
}

// TestRecordCallsPerThread is the counters acceptance check: with a uprobe
// counting the leaf, calls/count over caller -> leaf edges matches the true
// call counts of every thread, while samples/count keeps the time bias.
func TestRecordCallsPerThread(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	dir := t.TempDir()
	// 12 rounds: the thread with the slowest leaf gets about 300 samples
	// in phase C; with 6 (about 140) its calls/count overlap came within
	// sampling noise of the 97% bound (95.7-99.4% over ten runs).
	cmd := exec.Command(cctopBin, "record", "--user", "--calls", "uprobe:"+testutil.WorkloadPkg+"densityLeaf", "-o", "c.pb.gz", "--",
		cctopBin, "workload", "density", "-threads", "3", "-size", "2000", "-calls", "5000", "-rounds", "12")
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("record: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "uprobe") {
		t.Errorf("summary does not name the counter source:\n%s", stderr.String())
	}
	// The truth, per thread, from the workload itself.
	truth := map[int64]map[correct.Edge]float64{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		var tid int64
		var caller, callee string
		var n float64
		if k, _ := fmt.Sscanf(sc.Text(), "thread %d calls %s -> %s %g", &tid, &caller, &callee, &n); k == 4 && callee == testutil.WorkloadPkg+"densityLeaf" {
			if truth[tid] == nil {
				truth[tid] = map[correct.Edge]float64{}
			}
			truth[tid][correct.Edge{Caller: caller, Callee: callee}] = n
		}
	}
	if len(truth) != 3 {
		t.Fatalf("workload printed %d threads:\n%s", len(truth), stdout.String())
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "c.pb.gz"))
	calls := threadEdges(p, testutil.ValueIndex(t, p, "calls"), testutil.WorkloadPkg+"densityLeaf")
	samples := threadEdges(p, testutil.ValueIndex(t, p, "samples"), testutil.WorkloadPkg+"densityLeaf")
	c := correct.Edge{Caller: testutil.WorkloadPkg + "densityPhaseC", Callee: testutil.WorkloadPkg + "densityLeaf"}
	d := correct.Edge{Caller: testutil.WorkloadPkg + "densityPhaseD", Callee: testutil.WorkloadPkg + "densityLeaf"}
	for tid, want := range truth {
		got := correct.Overlap(calls[tid], want)
		raw := correct.Overlap(samples[tid], want)
		t.Logf("thread %d: calls/count overlap %.2f%% (C %.0f D %.0f), samples/count overlap %.2f%% (C %.0f D %.0f)",
			tid, got, calls[tid][c], calls[tid][d], raw, samples[tid][c], samples[tid][d])
		if got < 97 {
			t.Errorf("thread %d: calls/count overlaps the true counts by %.2f%%, want >= 97%%", tid, got)
		}
		// Timer samples see phase D's calls as twice as long: the bias the
		// correction removes must be there to begin with.
		if r := samples[tid][d] / samples[tid][c]; r < 1.6 {
			t.Errorf("thread %d: samples D/C = %.2f, want the time bias (about 2)", tid, r)
		}
	}
}

// TestExactMatchesPerfStat: exact mode's total calls equal what perf stat
// counts on the same uprobes.
func TestExactMatchesPerfStat(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	const events = "/sys/kernel/tracing/uprobe_events"
	if _, err := os.Stat(events); err != nil {
		t.Skip("no tracefs uprobe_events")
	}
	funcs := []string{"densityLeaf", "densityPhaseC", "densityPhaseD"}
	args := []string{"workload", "density", "-size", "500", "-calls", "2000", "-rounds", "10"}

	// perf stat on tracefs uprobes at the same offsets.
	// A group of this process's own: another test run on the machine may
	// define its probes at the same time.
	group := fmt.Sprintf("cctoptest%d", os.Getpid())
	var probes []string
	for i, f := range funcs {
		off, err := symbol.FuncOffset(cctopBin, testutil.WorkloadPkg+f)
		if err != nil {
			t.Fatal(err)
		}
		def := fmt.Sprintf("p:%s/f%d %s:%#x\n", group, i, cctopBin, off)
		if err := appendFile(events, def); err != nil {
			t.Skipf("cannot define a tracefs uprobe: %v", err)
		}
		probes = append(probes, fmt.Sprintf("%s:f%d", group, i))
		defer appendFile(events, fmt.Sprintf("-:%s/f%d\n", group, i))
	}
	out, err := exec.Command("perf", append([]string{"stat", "-x,", "-e", strings.Join(probes, ","), cctopBin}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("perf stat: %v\n%s", err, out)
	}
	var perfTotal int64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) > 2 && strings.HasPrefix(f[2], group+":") {
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				t.Fatalf("perf stat line %q", line)
			}
			perfTotal += n
		}
	}

	dir := t.TempDir()
	var names []string
	for _, f := range funcs {
		names = append(names, testutil.WorkloadPkg+f)
	}
	_, stderr, code := testutil.Run(t, cctopBin, dir, append([]string{"record", "--trigger", "exact", "--calls", "uprobe:" + strings.Join(names, ","), "-o", "x.pb.gz", "--", cctopBin}, args...)...)
	if code != 0 {
		t.Fatalf("record exact: %s", stderr)
	}
	prof := testutil.ReadProfile(t, filepath.Join(dir, "x.pb.gz"))
	total := testutil.SumValue(t, prof, "calls")
	// 10 rounds x (2000 + 2000 leaf calls + 2 phase calls)
	// cctop must count exactly, or, where the kernel dropped records (a
	// reader starved by a loaded machine: CI's parallel packages once made
	// it lose 1,420), say so and by how many: the count is then a lower
	// bound short by at most that. perf stat is the witness: once, in a run
	// of the whole suite under -race, it counted 40021 (one extra hit,
	// which probe not known), so it may be off by one.
	want := int64(10 * (4000 + 2))
	var lost int64
	for _, c := range prof.Comments {
		fmt.Sscanf(c, "lost_records=%d", &lost)
	}
	if perfTotal < want || perfTotal > want+1 {
		t.Errorf("perf stat counted %d calls, the workload made %d", perfTotal, want)
	}
	switch {
	case lost == 0 && total != want:
		t.Errorf("exact mode counted %d calls and says none was lost, the workload made %d", total, want)
	case lost > 0 && (total > want || total+lost < want || !strings.Contains(stderr, "lower bound")):
		t.Errorf("exact mode counted %d calls with %d records lost, the workload made %d; summary:\n%s", total, lost, want, stderr)
	case lost > 0:
		t.Logf("%d records lost (the machine is loaded): %d calls counted of %d, a lower bound the profile and summary state", lost, total, want)
	}
}

// TestCallsTriggerPeriod: the calls trigger samples every -c calls, not
// every call. The kernel writes a uprobe sample on every hit, whatever the
// period, when PERF_SAMPLE_PERIOD is asked for (perf_swevent_event); so a
// 1000-call trigger sampled, and cost, as much as the exact one.
func TestCallsTriggerPeriod(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	dir := t.TempDir()
	// 10 rounds x 2 phases x 2000 leaf calls.
	const calls, period = 40000, 1000
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--trigger", "calls", "-c", strconv.Itoa(period), "--calls", "uprobe:"+testutil.WorkloadPkg+"densityLeaf", "-o", "x.pb.gz",
		"--", cctopBin, "workload", "density", "-size", "500", "-calls", "2000", "-rounds", "10")
	if code != 0 {
		t.Fatalf("record calls: %s", stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "x.pb.gz"))
	samples, hits := testutil.SumValue(t, p, "samples"), testutil.SumValue(t, p, "calls")
	// Each per-CPU probe event carries fewer than a period of calls
	// over at the end.
	if samples > calls/period || samples < calls/period-int64(2*runtime.NumCPU()) {
		t.Errorf("%d samples of %d calls at a period of %d", samples, calls, period)
	}
	if hits != samples*period {
		t.Errorf("the samples weigh %d calls, want %d per sample", hits, period)
	}
	if p.Period != period || !slices.Contains(p.Comments, fmt.Sprintf("period=%d", period)) {
		t.Errorf("profile period %d, comments %q", p.Period, p.Comments)
	}
	if !strings.Contains(stderr, fmt.Sprintf("every %d calls", period)) {
		t.Errorf("the summary does not give the period:\n%s", stderr)
	}
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestAutoCountersBudget: without a PMU, --calls auto arms uprobes on the
// hottest functions, keeps them when they are cheap enough, and drops them
// when their hits cost more than the budget.
func TestAutoCountersBudget(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	if hpm.ProbeHW(hpm.DetectCPU()) == nil {
		t.Skip("this machine has a hardware call counter: auto uses it")
	}
	dir := t.TempDir()
	// 44 µs per leaf call: a sub-µs probe hit is about 1.5% of it. A fixed
	// amount of work (3 s of CPU), not of time: a CI run beside other
	// packages' tests armed the counter too late in 2 s to count a call.
	_, cheap, code := testutil.Run(t, cctopBin, dir, "record", "-o", "a.pb.gz", "--", cctopBin, "workload", "density", "-size", "20000", "-calls", "50", "-rounds", "400")
	if code != 0 {
		t.Fatalf("record: %s", cheap)
	}
	if !strings.Contains(cheap, "armed on workload.densityLeaf") || strings.Contains(cheap, "not count") {
		t.Errorf("a cheap leaf should stay counted:\n%s", cheap)
	}
	calls := testutil.SumValue(t, testutil.ReadProfile(t, filepath.Join(dir, "a.pb.gz")), "calls")
	if calls == 0 {
		t.Error("calls/count is empty with the counter armed")
	}
	// 1.3 µs per leaf call: counting every call would cost about half. The
	// run is long enough for the counters to be armed and then judged when
	// other tests load the machine (arming alone took 3 s in one CI run;
	// in the -race pass beside the other packages, 6 s ended one before
	// the trial judged the leaf).
	_, costly, code := testutil.Run(t, cctopBin, dir, "record", "-o", "b.pb.gz", "--", cctopBin, "workload", "density", "-size", "600", "-duration", "12s")
	if code != 0 {
		t.Fatalf("record: %s", costly)
	}
	// A trial count finds that out before the probe is placed in every
	// thread: it is never armed.
	if !strings.Contains(costly, "not counting calls to workload.densityLeaf") || strings.Contains(costly, "armed on workload.densityLeaf") {
		t.Errorf("a leaf called every 1.3 µs must not be counted, for its cost:\n%s", costly)
	}
}
