package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// debianPython is the distro's own interpreter: stripped, no frame
// pointers, its hot C functions called thousands of times a millisecond.
const debianPython = "/usr/bin/python3"

// cctopFrame matches what of cctop's own cost could show as the program's:
// the folded probe handling, or the kernel's trap and uprobe code.
var cctopFrame = regexp.MustCompile(`\[cctop probes\]|exc_int3|exc_debug|handle_swbp|uprobe_notify|\[uprobes\]`)

// TestPythonTopInTmux (issue 29): `cctop top` on a CPU-bound script of
// Debian's python3, at 80x24, as a new user runs it. On every screen from
// the first rows to several seconds in, no row is cctop's own cost, and
// the header says what density does: on, with the share of the samples
// that carry a count (at least half: the coverage rule), or not applied,
// with why.
func TestPythonTopInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("no %s", debianPython)
	}
	s := newTmux(t, 80, 24, cctopBin+" top -- "+debianPython+" testdata/jsondumps.py 100000")
	s.waitFor(`json|python3`, 20*time.Second)
	density := regexp.MustCompile(`density (on|no counts: [^\n]*(samples counted|sample carries|counted a call|arm after a warm-up)[^\n]*)`)
	counted := regexp.MustCompile(`counted ([0-9.]+)%`)
	start := time.Now()
	for _, at := range []time.Duration{0, time.Second, 3 * time.Second, 8 * time.Second} {
		time.Sleep(time.Until(start.Add(at)))
		scr := s.screen()
		lines := strings.Split(scr, "\n")
		if len(lines) < 6 {
			t.Fatalf("at %v: no rows:\n%s", at, scr)
		}
		for _, l := range lines[4:] {
			if cctopFrame.MatchString(l) {
				t.Errorf("at %v: a row of cctop's own cost: %q\n%s", at, l, scr)
			}
		}
		m := density.FindStringSubmatch(scr)
		if m == nil {
			t.Errorf("at %v: the header does not say what density does:\n%s", at, scr)
			continue
		}
		if m[1] != "on" {
			continue
		}
		c := counted.FindStringSubmatch(scr)
		if c == nil {
			t.Errorf("at %v: density on, but not over what share of the samples:\n%s", at, scr)
		} else if share, _ := strconv.ParseFloat(c[1], 64); share < 50 {
			t.Errorf("at %v: density on over %s%% of the samples, under the rule's 50%%:\n%s", at, c[1], scr)
		}
	}
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 15*time.Second)
}

// TestPythonRecordBudget (issue 29): default `cctop record` on Debian's
// python3 keeps the promise it states: the summary's measured counting
// cost, over the run and in its worst 2 s, within --budget's 5%, and no
// figure of cctop's own cost among the ranked functions.
func TestPythonRecordBudget(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("no %s", debianPython)
	}
	out := filepath.Join(t.TempDir(), "py.pb.gz")
	b, err := exec.Command(cctopBin, "record", "-o", out, "--", debianPython, "testdata/jsondumps.py", "120").CombinedOutput()
	if err != nil {
		t.Fatalf("record: %v\n%s", err, b)
	}
	summary := string(b)
	cost := regexp.MustCompile(`counting cost ([0-9.]+)% of the target's CPU time over the run, ([0-9.]+)% in its worst 2s \(budget 5%`).FindStringSubmatch(summary)
	if cost == nil {
		if strings.Contains(summary, "uprobes on") && !strings.Contains(summary, "counting cost") && strings.Contains(summary, "armed on") {
			t.Fatalf("probes armed, no cost stated:\n%s", summary)
		}
		t.Logf("nothing counted, nothing spent:\n%s", summary)
		return
	}
	for _, f := range cost[1:] {
		if v, _ := strconv.ParseFloat(f, 64); v > 5 {
			t.Errorf("counting cost %s%%, over the 5%% budget:\n%s", f, summary)
		}
	}
	for _, l := range strings.Split(summary, "\n") {
		if strings.HasPrefix(l, "  ") && cctopFrame.MatchString(l) {
			t.Errorf("cctop's own cost ranked: %q", l)
		}
	}
}
