package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// hotJS spends a few seconds in one recursive function, which V8 compiles
// to optimized code that lives in anonymous memory. With --perf-basic-prof
// node names that code in /tmp/perf-PID.map, and nowhere else.
const hotJS = `function hotLoopFib(n) {
	return n < 2 ? n : hotLoopFib(n - 1) + hotLoopFib(n - 2);
}
console.log("pid " + process.pid);
const end = Date.now() + 4000;
let sum = 0;
while (Date.now() < end) {
	sum += hotLoopFib(22);
}
console.log(sum > 0 ? "done" : "wrong");
`

// TestRecordNodeJIT is the acceptance check for JIT code (issues 30 and
// before): recording node running a hot JavaScript function with
// --perf-basic-prof names that function with most of the self time, and
// the stacks go through V8's JIT code and its builtins (which keep frame
// pointers but no CFI, and set their frames up after some checks) to
// node::Start and _start.
func TestRecordNodeJIT(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "hot.js")
	if err := os.WriteFile(script, []byte(hotJS), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "30s", "-o", "n.pb.gz", "--", node, "--perf-basic-prof", script)
	// node leaves its perf map behind.
	var pid int
	if _, err := fmt.Sscanf(stdout, "pid %d", &pid); err == nil {
		os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid))
	}
	if code != 0 || !strings.Contains(stdout, "done") {
		t.Fatalf("record exit %d, node said %q:\n%s", code, stdout, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "n.pb.gz"))
	var total, hotSelf, hot, rooted, viaJS int64
	for _, s := range p.Sample {
		v := s.Value[0]
		total += v
		names := testutil.StackNames(s)
		if len(names) == 0 {
			continue
		}
		if strings.Contains(names[0], "hotLoopFib") {
			hotSelf += v
		}
		js := false
		for _, name := range names {
			js = js || strings.Contains(name, "hotLoopFib")
		}
		if js {
			hot += v
		}
		if root := names[len(names)-1]; root == "_start" || strings.HasPrefix(root, "node::Start") {
			rooted += v
			if js {
				viaJS += v
			}
		}
	}
	pct := func(n int64) float64 { return 100 * float64(n) / float64(max(total, 1)) }
	t.Logf("%d samples: %.1f%% reach _start or node::Start, hotLoopFib %.1f%% self, %.1f%% total, %.1f%% of samples through it reach the root",
		total, pct(rooted), pct(hotSelf), pct(hot), 100*float64(viaJS)/float64(max(hot, 1)))
	if pct(rooted) < 95 {
		t.Errorf("%.1f%% of stacks reach node's entry, want >= 95%%:\n%s", pct(rooted), stderr)
	}
	if pct(hotSelf) < 90 {
		t.Errorf("hotLoopFib has %.1f%% of self time, want >= 90%%", pct(hotSelf))
	}
}

// TestRecordNodeEvalAttached: attached to node running code given with -e,
// whose top level V8 compiles on the stack (OSR) and calls from its
// builtins without a call of its own, the stacks still reach node's
// entry: V8's optimized code tests its deoptimization mark before it sets
// its frame up, and past that setup its frame pointer is its own.
func TestRecordNodeEvalAttached(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	cmd := exec.Command(node, "--perf-basic-prof", "-e",
		`function f(n){return n<2?n:f(n-1)+f(n-2)}; const e=Date.now()+6000; while(Date.now()<e) f(20);`)
	cmd.Dir = t.TempDir() // node --perf-basic-prof writes isolate-*-v8.log there
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		os.Remove(fmt.Sprintf("/tmp/perf-%d.map", cmd.Process.Pid))
	}()
	time.Sleep(time.Second) // past the warm-up: the optimized code runs
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "2s", "-o", "e.pb.gz", "-p", strconv.Itoa(cmd.Process.Pid))
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "e.pb.gz"))
	var total, rooted int64
	for _, s := range p.Sample {
		total += s.Value[0]
		if names := testutil.StackNames(s); len(names) > 0 {
			if root := names[len(names)-1]; root == "_start" || strings.HasPrefix(root, "node::Start") {
				rooted += s.Value[0]
			}
		}
	}
	share := float64(rooted) / float64(max(total, 1))
	t.Logf("%d samples, %.1f%% reach node's entry", total, 100*share)
	if share < 0.9 {
		t.Errorf("%.1f%% of stacks reach node's entry, want >= 90%%:\n%s", 100*share, stderr)
	}
}
