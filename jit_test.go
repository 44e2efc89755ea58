package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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

// TestRecordNodeJIT is the acceptance check for JIT perf maps: recording
// node running a hot JavaScript function names that function, and its
// frames carry a good share of the samples.
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
	var named []string
	for _, fn := range p.Function {
		if strings.Contains(fn.Name, "hotLoopFib") {
			named = append(named, fn.Name)
		}
	}
	if len(named) == 0 {
		t.Fatalf("no function named hotLoopFib in the profile:\n%s", stderr)
	}
	var total, hot int64
	for _, s := range p.Sample {
		total += s.Value[0]
		for _, name := range testutil.StackNames(s) {
			if strings.Contains(name, "hotLoopFib") {
				hot += s.Value[0]
				break
			}
		}
	}
	share := float64(hot) / float64(max(total, 1))
	t.Logf("functions %q; %d of %d samples (%.1f%%) have a hotLoopFib frame", named, hot, total, 100*share)
	if share < 0.2 {
		t.Errorf("%.1f%% of samples name hotLoopFib, want >= 20%%", 100*share)
	}
}
