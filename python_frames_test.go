package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/cctop/cctop/internal/testutil"
)

// framePythons are the CPythons whose frames cctop reads from memory, as
// installed here: pyenv's 3.9 to 3.13 (a libpython each, no frame
// pointers) and Debian's stripped python3.11 (one executable).
func framePythons() []struct{ name, path string } {
	var out []struct{ name, path string }
	for _, v := range []string{"3.9", "3.10", "3.11", "3.12", "3.13"} {
		if p := pyenvPython(v); p != "" {
			out = append(out, struct{ name, path string }{"pyenv-" + v, p})
		}
	}
	if _, err := os.Stat("/usr/bin/python3.11"); err == nil {
		out = append(out, struct{ name, path string }{"debian-3.11", "/usr/bin/python3.11"})
	}
	return out
}

// startPysplit runs testdata/pysplit.py until killed and returns its pid.
func startPysplit(t *testing.T, python string) int {
	t.Helper()
	cmd := exec.Command(python, "testdata/pysplit.py", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pid int
	line, _ := bufio.NewReader(out).ReadString('\n')
	if _, err := fmt.Sscanf(line, "pysplit pid %d", &pid); err != nil {
		t.Fatalf("pysplit said %q", line)
	}
	return pid
}

// pysplitShares reads a profile of pysplit.py: the share of heavy, medium
// and light among the samples that ran the script's run() or are torn
// (a torn sample is the script's time that no function got), the share of
// those samples whose Python stack is whole (<module> › main › run), and
// the torn share.
func pysplitShares(t *testing.T, p *profile.Profile) (shares map[string]float64, whole, torn float64) {
	t.Helper()
	var total, complete, tornN int64
	by := map[string]int64{}
	for _, s := range p.Sample {
		v := s.Value[0]
		names := testutil.StackNames(s) // innermost first
		var chain []string
		isTorn := false
		for _, n := range names {
			if n == "[python: torn]" {
				isTorn = true
			}
			if strings.HasSuffix(n, " (pysplit.py)") {
				chain = append(chain, strings.TrimSuffix(n, " (pysplit.py)"))
			}
		}
		inRun := false
		for _, c := range chain {
			inRun = inRun || c == "run"
		}
		if !inRun && !isTorn {
			continue
		}
		total += v
		if isTorn {
			tornN += v
			continue
		}
		for _, f := range []string{"heavy", "medium", "light"} {
			for _, c := range chain {
				if c == f {
					by[f] += v
				}
			}
		}
		// Outermost first: <module>, main, run, then the rest.
		if n := len(chain); n >= 3 && chain[n-1] == "<module>" && chain[n-2] == "main" && chain[n-3] == "run" {
			complete += v
		}
	}
	if total == 0 {
		t.Fatal("no sample ran pysplit.py's run()")
	}
	shares = map[string]float64{}
	for f, v := range by {
		shares[f] = 100 * float64(v) / float64(total)
	}
	return shares, 100 * float64(complete) / float64(max(total-tornN, 1)), 100 * float64(tornN) / float64(total)
}

// checkPysplit checks the shares against the script's design, 60/30/10,
// each within 3 points, and that the Python stacks are whole.
func checkPysplit(t *testing.T, p *profile.Profile, stderr string) {
	t.Helper()
	shares, whole, torn := pysplitShares(t, p)
	t.Logf("heavy %.1f%% medium %.1f%% light %.1f%%, %.1f%% whole, %.1f%% torn", shares["heavy"], shares["medium"], shares["light"], whole, torn)
	for f, want := range map[string]float64{"heavy": 60, "medium": 30, "light": 10} {
		if d := shares[f] - want; d > 3 || d < -3 {
			t.Errorf("%s: %.1f%%, the script's design is %.0f%%:\n%s", f, shares[f], want, stderr)
		}
	}
	if whole < 99 {
		t.Errorf("%.1f%% of the merged stacks reach <module> › main › run, want >= 99%%", whole)
	}
	if !regexp.MustCompile(`python frames: CPython 3\.\d+; \d+ of \d+ samples merged`).MatchString(stderr) {
		t.Errorf("the summary does not say what reading Python frames did:\n%s", stderr)
	}
}

// pysplitSeconds is how long TestPythonFrames records each case. Where
// the Python stack changes between reads, as pysplit.py's does every 1 to
// 6 ms, a function's share is as good as the number of reads: at one read
// every 5 ms (what the poller's budget allows on this machine) a share of
// 60% has a standard deviation of 1.2 points over 8 s (3 points is 2.5 of
// them: one run in four of this test would miss somewhere by chance), and
// of 0.87 over 16 s.
const pysplitSeconds = "16"

// TestPythonFrames (issue 31): with every CPython of the machine, attached
// (record -p) to a running script and launched, no flags, the Python
// functions are read from the interpreter and merged into the native
// stacks: each of the script's three functions has its designed share of
// the time within 3 points, under complete Python stacks to <module>.
func TestPythonFrames(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	pys := framePythons()
	if len(pys) == 0 {
		t.Skip("no CPython 3.9-3.13 installed")
	}
	wd, _ := os.Getwd()
	script := filepath.Join(wd, "testdata", "pysplit.py")
	for _, py := range pys {
		t.Run(py.name+"/attach", func(t *testing.T) {
			pid := startPysplit(t, py.path)
			time.Sleep(300 * time.Millisecond) // past the imports
			dir := t.TempDir()
			_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-p", strconv.Itoa(pid), "-d", pysplitSeconds+"s", "-o", "p.pb.gz")
			if code != 0 {
				t.Fatalf("record exit %d:\n%s", code, stderr)
			}
			checkPysplit(t, testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz")), stderr)
		})
		t.Run(py.name+"/launch", func(t *testing.T) {
			dir := t.TempDir()
			_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "60s", "-o", "p.pb.gz", "--", py.path, script, pysplitSeconds)
			if code != 0 {
				t.Fatalf("record exit %d:\n%s", code, stderr)
			}
			checkPysplit(t, testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz")), stderr)
		})
	}
}

// TestPythonFramesAgainstTrampolines (issue 31): CPython 3.12 run with -X
// perf has its Python functions in the native stack itself, exact: the
// functions read from its memory, sample by sample, agree with them, and
// their self shares overlap by at least 95%.
func TestPythonFramesAgainstTrampolines(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	py := pyenvPython("3.12")
	if py == "" {
		t.Skip("python3.12 not installed")
	}
	wd, _ := os.Getwd()
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "60s", "-o", "p.pb.gz", "--", py, "-X", "perf", filepath.Join(wd, "testdata", "pysplit.py"), "4")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	m := regexp.MustCompile(`against the perf trampolines \(exact\): the read named every evaluation's function in ([0-9.]+)% of (\d+) samples, the innermost in ([0-9.]+)%, self shares overlap ([0-9.]+)%`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no comparison with the trampolines in the summary:\n%s", stderr)
	}
	all, _ := strconv.ParseFloat(m[1], 64)
	inner, _ := strconv.ParseFloat(m[3], 64)
	overlap, _ := strconv.ParseFloat(m[4], 64)
	t.Logf("every evaluation %.1f%%, innermost %.1f%%, overlap %.1f%% of %s samples", all, inner, overlap, m[2])
	if overlap < 95 {
		t.Errorf("self shares overlap %.1f%% with the trampolines', want >= 95%%", overlap)
	}
	if inner < 90 {
		t.Errorf("the innermost function read agrees with the trampolines' in %.1f%% of samples, want >= 90%%", inner)
	}
	// The tree takes the trampolines where the read disagrees: exact.
	checkPysplit(t, testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz")), stderr)
}

// TestPythonFramesUnknown (issue 31): a CPython whose layout cctop does not
// know (3.8) keeps its native profile, and one line says why; a program
// that is not Python gets no Python line at all.
func TestPythonFramesUnknown(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	py := pyenvPython("3.8")
	if py == "" {
		t.Skip("python3.8 not installed")
	}
	wd, _ := os.Getwd()
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "60s", "-o", "p.pb.gz", "--", py, filepath.Join(wd, "testdata", "pysplit.py"), "1")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "python frames not read: "); n != 1 || !strings.Contains(stderr, "python 3.8: layout not known") {
		t.Errorf("want one line saying 3.8's layout is not known, got %d:\n%s", n, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz"))
	var eval int64
	for _, s := range p.Sample {
		for _, n := range testutil.StackNames(s) {
			if strings.Contains(n, "(pysplit.py)") || n == "[python: torn]" {
				t.Fatalf("a Python frame in an unread interpreter's profile: %v", testutil.StackNames(s))
			}
			if n == "_PyEval_EvalFrameDefault" {
				eval += s.Value[0]
				break
			}
		}
	}
	if eval == 0 {
		t.Errorf("no native _PyEval_EvalFrameDefault frames left")
	}

	_, stderr, code = testutil.Run(t, cctopBin, dir, "record", "-d", "60s", "-o", "w.pb.gz", "--", cctopBin, "workload", "density", "-duration", "1s")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "python") {
		t.Errorf("a Go program's summary speaks of Python:\n%s", stderr)
	}
}

// TestPythonFramesTopInTmux (issue 31): `cctop top -p PID` on a running
// Python script at 80x24 opens on its hot Python function and its Python
// callers.
func TestPythonFramesTopInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("no %s", debianPython)
	}
	pid := startPysplit(t, debianPython)
	s := newTmux(t, 80, 24, cctopBin+" top -p "+strconv.Itoa(pid))
	s.waitFor(`heavy \(pysplit\.py\)`, 20*time.Second)
	time.Sleep(2 * time.Second)
	scr := s.screen()
	rows := strings.Split(scr, "\n")
	hot := -1
	for i, l := range rows {
		if strings.Contains(l, "heavy (pysplit.py)") {
			hot = i
			break
		}
	}
	switch {
	case hot < 0:
		t.Fatalf("the hot Python function is not on the first screen:\n%s", scr)
	case !strings.Contains(strings.Join(rows[:hot], "\n"), "run (pysplit.py)"):
		t.Errorf("its Python caller run() is not above it:\n%s", scr)
	case hot+1 >= len(rows) || !strings.Contains(rows[hot+1], "spin (pysplit.py)"):
		t.Errorf("what it calls, spin(), is not open under it:\n%s", scr)
	}
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 15*time.Second)
}

// TestPythonFramesWall (issue 31): with --mode wall, Python threads carry
// the names threading gave them, and a thread that sleeps in time.sleep
// shows the Python function it waits in, as a new user reads it.
func TestPythonFramesWall(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	py := pyenvPython("3.11")
	if py == "" {
		t.Skip("python3.11 not installed")
	}
	wd, _ := os.Getwd()
	dir := t.TempDir()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--mode", "wall", "-d", "60s", "-o", "w.pb.gz", "--", py, filepath.Join(wd, "testdata", "pywait.py"), "4")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "w.pb.gz"))
	wall := testutil.Column(t, p, "wall")
	byThread := map[string]int64{}
	var napping, total int64
	for _, s := range p.Sample {
		v := s.Value[wall]
		total += v
		name := ""
		if n := s.Label["thread_name"]; len(n) > 0 {
			name = n[0]
		}
		byThread[name] += v
		names := testutil.StackNames(s)
		inNap := false
		for i, n := range names {
			// nap's frame with the sleep below it, waiting.
			if n == "nap (pywait.py)" && i > 0 {
				inNap = true
			}
		}
		if name == "napper-1" && inNap {
			napping += v
		}
	}
	t.Logf("wall by thread %v; napper-1 in nap() %d of %d", byThread, napping, byThread["napper-1"])
	for _, n := range []string{"napper-1", "worker-1"} {
		if byThread[n] < total/10 {
			t.Errorf("thread %q has %d of %d ns of wall time: named as threading names it?", n, byThread[n], total)
		}
	}
	if napping*10 < byThread["napper-1"]*9 {
		t.Errorf("napper-1 waits in nap() for %d of its %d ns, want >= 90%%:\n%s", napping, byThread["napper-1"], stderr)
	}
}
