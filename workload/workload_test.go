package workload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const pkgPrefix = "github.com/cctop/cctop/workload."

// nameOf is the test's own FuncForPC lookup, so the names the workloads print
// are checked against the runtime rather than against themselves.
func nameOf(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

type edgeKey struct{ caller, callee string }

type output struct {
	calls map[edgeKey]uint64
	lines map[string][]string // first word -> remaining fields, for non-calls lines
}

func parseOutput(t *testing.T, s string) output {
	t.Helper()
	o := output{calls: map[edgeKey]uint64{}, lines: map[string][]string{}}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if f[0] != "calls" {
			o.lines[strings.Join(f[:len(f)-1], " ")] = f[len(f)-1:]
			continue
		}
		if len(f) != 5 || f[2] != "->" {
			t.Fatalf("malformed calls line %q", sc.Text())
		}
		n, err := strconv.ParseUint(f[4], 10, 64)
		if err != nil {
			t.Fatalf("calls line %q: %v", sc.Text(), err)
		}
		k := edgeKey{f[1], f[3]}
		if _, dup := o.calls[k]; dup {
			t.Fatalf("edge %v printed twice", k)
		}
		o.calls[k] = n
	}
	return o
}

func (o output) count(t *testing.T, caller, callee any) uint64 {
	t.Helper()
	k := edgeKey{nameOf(caller), nameOf(callee)}
	n, ok := o.calls[k]
	if !ok {
		t.Fatalf("no calls line for %s -> %s", k.caller, k.callee)
	}
	return n
}

// value returns the last field of the result line that starts with key.
func (o output) value(t *testing.T, key string) string {
	t.Helper()
	v, ok := o.lines[key]
	if !ok {
		t.Fatalf("no %q line", key)
	}
	return v[0]
}

func runOK(t *testing.T, name string, args ...string) output {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := Run(name, args, &stdout, &stderr); err != nil {
		t.Fatalf("Run(%s %v): %v\nstderr: %s", name, args, err, stderr.String())
	}
	return parseOutput(t, stdout.String())
}

// expected lists, per workload, every edge it must print, as function values.
var expected = map[string][][2]any{
	"density": {
		{densityRounds, densityPhaseC},
		{densityRounds, densityPhaseD},
		{densityPhaseC, densityLeaf},
		{densityPhaseD, densityLeaf},
	},
	"latency": {
		{latencyWorker, latencySiteA},
		{latencyWorker, latencySiteB},
		{latencyWorker, latencyOutside},
		{latencySiteA, latencyLeaf},
		{latencySiteB, latencyLeaf},
	},
	"recursive": {
		{recursiveRounds, recursiveDeep},
		{recursiveDeep, recursiveDeep},
		{recursiveDeep, recursiveBottom},
		{recursiveRounds, recursiveWide},
		{recursiveWide, recursiveWide},
		{recursiveWide, wideLeaf0}, {recursiveWide, wideLeaf1},
		{recursiveWide, wideLeaf2}, {recursiveWide, wideLeaf3},
		{recursiveWide, wideLeaf4}, {recursiveWide, wideLeaf5},
		{recursiveWide, wideLeaf6}, {recursiveWide, wideLeaf7},
	},
	"stages": {
		{stagesRounds, stageRun},
		{stageRun, stageParse},
		{stageRun, stageTransform},
		{stageRun, stageEmit},
	},
	"sharedleaf": {
		{sharedRounds, sharedRun},
		{sharedRun, sharedParse},
		{sharedRun, sharedTransform},
		{sharedRun, sharedEmit},
		{sharedParse, sharedLeaf},
		{sharedTransform, sharedLeaf},
		{sharedEmit, sharedLeaf},
	},
	"threads": {{threadsWorker, threadsWork}},
	"spin":    {{spinCaller, spinLeaf}},
}

func TestNames(t *testing.T) {
	got := Names()
	want := append([]string{"density", "latency", "recursive", "stages", "sharedleaf", "threads", "spin"}, offCPUNames...)
	if !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	got[0] = "changed"
	if Names()[0] != "density" {
		t.Fatal("Names returns the registry's own slice")
	}
	for _, n := range want {
		if _, ok := expected[n]; !ok {
			t.Errorf("workload %s has no expected edges in this test", n)
		}
	}
}

func TestUnknownWorkload(t *testing.T) {
	err := Run("nosuch", nil, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("Run(nosuch) succeeded")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
}

func TestBadFlags(t *testing.T) {
	cases := [][]string{
		{"density", "-nosuchflag"},
		{"density", "-size", "0"},
		{"density", "-calls", "-1"},
		{"density", "-duration", "0"},
		{"density", "-duration", "soon"},
		{"density", "-rounds", "-1"},
		{"density", "extra"},
		{"latency", "-nosuchflag"},
		{"latency", "-threads", "0"},
		{"latency", "-outside", "-1"},
		{"recursive", "-nosuchflag"},
		{"recursive", "-width", "9"},
		{"recursive", "-width", "0"},
		{"recursive", "-depth", "0"},
		{"recursive", "-branch", "0"},
		{"threads", "-nosuchflag"},
		{"threads", "-rate", "0"},
		{"threads", "-rate", "NaN"},
		{"threads", "-life", "0s"},
		{"threads", "-concurrency", "0"},
		{"threads", "-rounds", "3"}, // threads has no rounds
		{"sharedleaf", "-nosuchflag"},
		{"sharedleaf", "-size", "0"},
		{"sharedleaf", "-calls", "0"},
		{"spin", "-nosuchflag"},
		{"spin", "-threads", "0"},
		{"spin", "-busy", "0"},
		{"spin", "-busy", "1.5"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		err := Run(c[0], c[1:], &stdout, &stderr)
		if err == nil {
			t.Errorf("Run(%v) succeeded", c)
			continue
		}
		if stdout.Len() != 0 {
			t.Errorf("Run(%v) wrote results: %q", c, stdout.String())
		}
		if stderr.Len() == 0 {
			t.Errorf("Run(%v) = %v with nothing on stderr", c, err)
		}
	}
	for _, n := range Names() {
		if err := Run(n, []string{"-h"}, io.Discard, io.Discard); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("Run(%s -h) = %v, want flag.ErrHelp", n, err)
		}
	}
}

// TestWorkloadsPrintTheirEdges runs every workload briefly and checks that it
// prints exactly its expected edges, named as the runtime names the package's
// functions, with nonzero counts.
func TestWorkloadsPrintTheirEdges(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			o := runOK(t, name, "-duration", "150ms")
			want := map[edgeKey]bool{}
			for _, e := range expected[name] {
				want[edgeKey{nameOf(e[0]), nameOf(e[1])}] = true
			}
			for k, n := range o.calls {
				if !want[k] {
					t.Errorf("unexpected edge %s -> %s", k.caller, k.callee)
				}
				for _, f := range []string{k.caller, k.callee} {
					if !strings.HasPrefix(f, pkgPrefix) {
						t.Errorf("name %q is not in package %s", f, pkgPrefix)
					}
				}
				if n == 0 {
					t.Errorf("edge %s -> %s has count 0", k.caller, k.callee)
				}
			}
			for k := range want {
				if _, ok := o.calls[k]; !ok {
					t.Errorf("missing edge %s -> %s", k.caller, k.callee)
				}
			}
		})
	}
}

func wall(t *testing.T, o output, phase any) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(o.value(t, "wall "+nameOf(phase)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDensityShape checks the property the workload exists for: equal calls
// on the two edges, twice the time in phase D.
func TestDensityShape(t *testing.T) {
	// The leaf's unloaded cost, from the fastest of many short batches: some
	// batches run undisturbed even on a busy machine.
	const size, calls = 600, 7500
	leafC, leafD := fastestLeaf(size), fastestLeaf(2*size)
	if r := float64(leafD) / float64(leafC); r < 1.8 || r > 2.2 {
		t.Fatalf("densityLeaf(%d) takes %v, densityLeaf(%d) %v: ratio %.3f, want 1.8-2.2", size, leafC, 2*size, leafD, r)
	}

	// A run's wall times are at the mercy of the machine's load: a neighbour
	// that takes the CPU for a few milliseconds skews the ratio either way.
	// So a run whose ratio is off fails the test only if it got the CPU, its
	// phases taking at most 15% longer than their calls cost unloaded; a
	// busy run is retried, and if every run was busy the check is skipped.
	var busy []string
	for range 5 {
		o := runOK(t, "density", "-duration", "200ms")
		c, d := o.count(t, densityPhaseC, densityLeaf), o.count(t, densityPhaseD, densityLeaf)
		rc, rd := o.count(t, densityRounds, densityPhaseC), o.count(t, densityRounds, densityPhaseD)
		rounds, _ := strconv.ParseUint(o.value(t, "rounds"), 10, 64)
		if c != d || c == 0 || rc != rd || rc != rounds || c != rounds*calls {
			t.Fatalf("counts: C %d, D %d, rounds %d/%d/%d, want C = D = rounds*%d", c, d, rc, rd, rounds, calls)
		}
		wallC, wallD := wall(t, o, densityPhaseC), wall(t, o, densityPhaseD)
		ratio := float64(wallD) / float64(wallC)
		stretchC := float64(wallC) / (float64(c) * float64(leafC))
		stretchD := float64(wallD) / (float64(d) * float64(leafD))
		if ratio >= 1.7 && ratio <= 2.3 {
			return
		}
		if stretchC <= 1.15 && stretchD <= 1.15 {
			t.Fatalf("phase D / phase C wall time = %.3f (%v / %v), want 1.7-2.3", ratio, wallD, wallC)
		}
		busy = append(busy, fmt.Sprintf("ratio %.3f, phases took %.2fx and %.2fx their unloaded time", ratio, stretchC, stretchD))
	}
	t.Skipf("machine too busy to compare wall times:\n%s", strings.Join(busy, "\n"))
}

// fastestLeaf returns the least time per densityLeaf(n) call over batches of
// a few calls.
func fastestLeaf(n int) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range 200 {
		t0 := time.Now()
		for range 10 {
			densityLeaf(n)
		}
		if d := time.Since(t0) / 10; d < best {
			best = d
		}
	}
	return best
}

// TestRounds checks exact counts against the closed forms, which also pins
// down what each edge counts.
func TestRounds(t *testing.T) {
	o := runOK(t, "density", "-rounds", "3", "-calls", "100", "-size", "10")
	for _, e := range [][2]any{{densityPhaseC, densityLeaf}, {densityPhaseD, densityLeaf}} {
		if n := o.count(t, e[0], e[1]); n != 300 {
			t.Errorf("density %s -> %s = %d, want 300", nameOf(e[0]), nameOf(e[1]), n)
		}
	}

	o = runOK(t, "latency", "-rounds", "5", "-threads", "3", "-calls", "7", "-size", "10")
	for _, e := range []struct {
		caller, callee any
		want           uint64
	}{
		{latencyWorker, latencySiteA, 15},
		{latencyWorker, latencySiteB, 15},
		{latencyWorker, latencyOutside, 15},
		{latencySiteA, latencyLeaf, 105},
		{latencySiteB, latencyLeaf, 105},
	} {
		if n := o.count(t, e.caller, e.callee); n != e.want {
			t.Errorf("latency %s -> %s = %d, want %d", nameOf(e.caller), nameOf(e.callee), n, e.want)
		}
	}

	// 3 rounds of: a chain of 5 frames, and a tree of 2 levels with branch 2
	// (2 + 4 inner calls, 4 bottom nodes) over 3 leaves.
	o = runOK(t, "recursive", "-rounds", "3", "-depth", "5", "-branch", "2", "-levels", "2", "-width", "3", "-size", "10")
	for _, e := range []struct {
		caller, callee any
		want           uint64
	}{
		{recursiveRounds, recursiveDeep, 3},
		{recursiveDeep, recursiveDeep, 12},
		{recursiveDeep, recursiveBottom, 3},
		{recursiveRounds, recursiveWide, 3},
		{recursiveWide, recursiveWide, 18},
		{recursiveWide, wideLeaf0, 12},
		{recursiveWide, wideLeaf1, 12},
		{recursiveWide, wideLeaf2, 12},
	} {
		if n := o.count(t, e.caller, e.callee); n != e.want {
			t.Errorf("recursive %s -> %s = %d, want %d", nameOf(e.caller), nameOf(e.callee), n, e.want)
		}
	}
	if len(o.calls) != 8 {
		t.Errorf("recursive -width 3 printed %d edges, want 8", len(o.calls))
	}

	// Every edge of sharedleaf runs once per sharedRun call.
	o = runOK(t, "sharedleaf", "-rounds", "4", "-calls", "25", "-size", "10")
	for _, e := range expected["sharedleaf"] {
		if n := o.count(t, e[0], e[1]); n != 100 {
			t.Errorf("sharedleaf %s -> %s = %d, want 100", nameOf(e[0]), nameOf(e[1]), n)
		}
	}
}

func TestLatencyEdgesEqual(t *testing.T) {
	o := runOK(t, "latency", "-duration", "150ms")
	a, b := o.count(t, latencySiteA, latencyLeaf), o.count(t, latencySiteB, latencyLeaf)
	if a != b || a == 0 {
		t.Fatalf("site A %d calls, site B %d, want equal and > 0", a, b)
	}
	if acq := o.count(t, latencyWorker, latencySiteA); a != acq*50 {
		t.Fatalf("site A %d calls in %d acquisitions, want 50 each", a, acq)
	}
}

// TestLoopEndsOnCancel runs each workload with -loop and ends it the way a
// signal would, through the context.
func TestLoopEndsOnCancel(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			var stdout bytes.Buffer
			done := make(chan error, 1)
			go func() { done <- run(ctx, name, []string{"-loop", "-duration", "1ns"}, &stdout, io.Discard) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("-loop run did not end after its context was cancelled")
			}
			o := parseOutput(t, stdout.String())
			if len(o.calls) != len(expected[name]) {
				t.Fatalf("printed %d edges, want %d:\n%s", len(o.calls), len(expected[name]), stdout.String())
			}
		})
	}
}

// TestDefaultRounds: a workload with a default number of rounds runs that
// many unless -rounds, -duration or -loop says otherwise, and a bad
// -duration is still refused.
func TestDefaultRounds(t *testing.T) {
	for _, c := range []struct {
		args   []string
		rounds int
	}{
		{nil, 7},
		{[]string{"-rounds", "3"}, 3},
		{[]string{"-rounds", "0"}, 0},
		{[]string{"-duration", "1s"}, 0},
		{[]string{"-duration", "1s", "-rounds", "5"}, 5},
		{[]string{"-loop"}, 0},
	} {
		fs, tm := newFlagSet("test", io.Discard, time.Second, "rounds")
		tm.defaultRounds = 7
		if err := parse(fs, tm, c.args); err != nil {
			t.Fatalf("parse(%q): %v", c.args, err)
		}
		if tm.rounds != c.rounds {
			t.Errorf("parse(%q): rounds %d, want %d", c.args, tm.rounds, c.rounds)
		}
	}
	for _, args := range [][]string{{"-duration", "0"}, {"-duration", "-1s"}, {"-rounds", "-1"}} {
		fs, tm := newFlagSet("test", io.Discard, time.Second, "rounds")
		tm.defaultRounds = 7
		if err := parse(fs, tm, args); err == nil {
			t.Errorf("parse(%q) succeeded", args)
		}
	}
}
