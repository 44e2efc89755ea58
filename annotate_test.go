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

	"github.com/google/pprof/profile"

	"github.com/cctop/cctop/internal/testutil"
)

// TestLinesAgainstPerf: a C function whose time perf splits over three
// source lines. cctop's profile, read as go tool pprof -list reads it (the
// flat samples of each leaf location's line), must put the same line
// first and each line's share within 3 points of perf's, both recording
// the same seconds of one run. A profile with one address per calling context puts
// all of it on one line.
func TestLinesAgainstPerf(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program with cctop and perf at once (about 5 s)")
	}
	testutil.SkipIfNoPerf(t)
	testutil.SkipIfNoPerfRecord(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "testdata/hotline.c", "-O1", "-g", "-fno-omit-frame-pointer")

	// Both tools sample the same seconds of one run: run one after the
	// other, a change in the machine's load between them moved each line's
	// share by as much as the tolerance.
	prog := exec.Command(bin, "8")
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = prog.Process.Kill(); _ = prog.Wait() }()
	pid := strconv.Itoa(prog.Process.Pid)
	pb := filepath.Join(dir, "cctop.pb.gz")
	data := filepath.Join(dir, "perf.data")
	ourRec := exec.Command(cctopBin, "record", "-d", "4s", "-o", pb, "-p", pid)
	theirRec := exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-o", data, "-p", pid, "--", "sleep", "4")
	var ourOut, theirOut strings.Builder
	ourRec.Stdout, ourRec.Stderr = &ourOut, &ourOut
	theirRec.Stdout, theirRec.Stderr = &theirOut, &theirOut
	if err := ourRec.Start(); err != nil {
		t.Fatal(err)
	}
	if err := theirRec.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ourRec.Wait(); err != nil {
		t.Fatalf("cctop record: %v\n%s", err, ourOut.String())
	}
	if err := theirRec.Wait(); err != nil {
		t.Fatalf("perf record: %v\n%s", err, theirOut.String())
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	ours := map[int]float64{}
	var total float64
	for _, s := range p.Sample {
		leaf := s.Location[0].Line
		if len(leaf) == 0 || leaf[0].Function.Name != "work" {
			continue
		}
		ours[int(leaf[0].Line)] += float64(s.Value[0])
		total += float64(s.Value[0])
	}
	if total < 1000 {
		t.Fatalf("%v samples of work; want some 3000", total)
	}
	for l := range ours {
		ours[l] *= 100 / total
	}

	out, err := exec.Command("perf", "report", "-i", data, "--stdio", "-q", "--no-children", "--sort", "sym,srcline").Output()
	if err != nil {
		t.Fatalf("perf report: %v", err)
	}
	theirs := map[int]float64{}
	var theirTotal float64
	re := regexp.MustCompile(`^\s*([0-9.]+)%\s+\[\.\] work\s+hotline\.c:(\d+)`)
	for _, line := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			n, _ := strconv.Atoi(m[2])
			theirs[n] += v
			theirTotal += v
		}
	}
	if theirTotal < 90 {
		t.Fatalf("perf puts %.1f%% in work by line; its report:\n%s", theirTotal, out)
	}
	for l := range theirs {
		theirs[l] *= 100 / theirTotal
	}
	hottest := func(m map[int]float64) int {
		best := 0
		for l, v := range m {
			if best == 0 || v > m[best] {
				best = l
			}
		}
		return best
	}
	t.Logf("cctop by line %v; perf %v", ours, theirs)
	if h, hp := hottest(ours), hottest(theirs); h != hp {
		t.Errorf("cctop's hottest line is %d, perf's %d", h, hp)
	}
	for l, v := range theirs {
		if v >= 3 && (ours[l] < v-3 || ours[l] > v+3) {
			t.Errorf("line %d: cctop %.1f%%, perf %.1f%%", l, ours[l], v)
		}
	}
}

// TestAnnotateInTmux (issue 33): `cctop top` on hotline.c at 80x24, as a
// user would: search for work, press a, and the hot line (13, the inner
// loop's body) is on the screen with the largest share of the function's
// lines; d shows its instructions, esc goes back to the tree.
func TestAnnotateInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "testdata/hotline.c", "-O1", "-g", "-fno-omit-frame-pointer")
	s := newTmux(t, 80, 24, cctopBin+" top -- "+bin+" 60")
	s.waitFor(`work`, 20*time.Second)
	time.Sleep(2 * time.Second) // some seconds of samples
	annotateFunc(s, "work")
	m := s.waitFor(`(?m)^\s*([0-9.]+)%\s+[0-9.]+%\s+13\s+c = c \* 0\.999999`, 10*time.Second)
	hot, _ := strconv.ParseFloat(m[1], 64)
	scr := s.screen()
	rx := regexp.MustCompile(`(?m)^\s*([0-9.]+)%\s+(?:[0-9.]+%|\.)\s+(\d+)\s`)
	for _, r := range rx.FindAllStringSubmatch(scr, -1) {
		if v, _ := strconv.ParseFloat(r[1], 64); v > hot {
			t.Errorf("line %s has %v%%, more than the hot line's %v%%:\n%s", r[2], v, hot, scr)
		}
	}
	if hot < 30 {
		t.Errorf("the hot line has %v%% of the profile, want most of it:\n%s", hot, scr)
	}
	s.keys("d")
	s.waitFor(`annotate work · disassembly`, 5*time.Second)
	s.waitFor(`hotline\.c:1[234]`, 5*time.Second)
	s.keys("Escape")
	s.waitFor(`total\s+self`, 5*time.Second)
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 15*time.Second)
}

// TestAnnotateJITInTmux (issue 33): in `cctop top` of node, `a` on the hot
// JavaScript function shows its machine code, read from the running
// process (JIT code has no file), with the samples' shares.
func TestAnnotateJITInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "hot.js")
	if err := os.WriteFile(script, []byte(strings.Replace(hotJS, "4000", "60000", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// In dir: node leaves its logs where it runs.
	s := newTmux(t, 120, 40, "cd "+dir+" && "+cctopBin+" top -- "+node+" --perf-basic-prof "+script)
	s.waitFor(`hotLoopFib`, 30*time.Second)
	time.Sleep(2 * time.Second)
	s.keys("/", "hotLoopFib", "Enter")
	time.Sleep(300 * time.Millisecond)
	s.keys("a")
	s.waitFor(`annotate .*hotLoopFib.* · disassembly`, 10*time.Second)
	s.waitFor(`read from the running process`, 10*time.Second)
	m := s.waitFor(`(?m)^\s*([0-9.]+)%\s+[0-9.]+%\s+[0-9a-f]{8,}\s`, 10*time.Second)
	if v, _ := strconv.ParseFloat(m[1], 64); v <= 0 {
		t.Errorf("an instruction row with no share:\n%s", s.screen())
	}
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 15*time.Second)
}
