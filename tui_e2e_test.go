package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tmuxSession drives cctop in a real terminal, as a person would.
type tmuxSession struct {
	t    *testing.T
	name string
}

func newTmux(t *testing.T, w, h int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	s := &tmuxSession{t: t, name: fmt.Sprintf("cctop-test-%d", os.Getpid())}
	exec.Command("tmux", "kill-session", "-t", s.name).Run()
	out, err := exec.Command("tmux", "new-session", "-d", "-s", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h),
		command+"; echo CCTOP-EXITED $?; sleep 60").CombinedOutput()
	if err != nil {
		t.Fatalf("tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", s.name).Run() })
	return s
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"send-keys", "-t", s.name}, keys...)...).CombinedOutput(); err != nil {
		s.t.Fatalf("send-keys: %v\n%s", err, out)
	}
}

func (s *tmuxSession) screen() string {
	out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", s.name).Output()
	return string(out)
}

// waitFor polls the screen until re matches, and returns the match.
func (s *tmuxSession) waitFor(re string, timeout time.Duration) []string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for {
		scr := s.screen()
		if m := rx.FindStringSubmatch(scr); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q:\n%s", re, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDemoInTmux drives `cctop demo` in tmux: wait for samples, expand the
// hot path, toggle density and latency and see the overlap and Δ change,
// search for the leaf, switch to bottom-up, export, quit. Then the terminal
// is back, no workload is left, and the export opens in go tool pprof.
func TestDemoInTmux(t *testing.T) {
	skipIfNoPerf(t)
	dir := t.TempDir()
	export := filepath.Join(dir, "demo.pb.gz")
	s := newTmux(t, 120, 40, cctopBin+" demo")
	s.waitFor(`([0-9]{3,}) samples`, 15*time.Second)
	s.keys("e")
	s.waitFor(`workload\.densityLeaf`, 5*time.Second)

	// Compared with the uncorrected samples, the density-weighted profile
	// differs; with both corrections off it is the same profile.
	before := s.waitFor(`overlap ([0-9.]+)%`, 5*time.Second)[1]
	deltaRow := regexp.MustCompile(`([+-][0-9]+\.[0-9])\s+▾? ?workload\.densityPhase[CD]`)
	if before == "100.0" || deltaRow.FindString(s.screen()) == "" {
		// The counters arm after a warm-up: give them a moment.
		time.Sleep(2 * time.Second)
		before = s.waitFor(`overlap ([0-9.]+)%`, time.Second)[1]
	}
	s.keys("d")
	s.waitFor(`density off`, 5*time.Second)
	s.keys("L")
	s.waitFor(`latency off`, 5*time.Second)
	after := s.waitFor(`overlap ([0-9.]+)%`, 5*time.Second)[1]
	if before == after || after != "100.0" {
		t.Errorf("overlap with corrections on %s%%, off %s%%: want a change, to 100.0", before, after)
	}
	s.waitFor(` 0\.0\s+▾? ?workload\.densityPhase[CD]`, 5*time.Second)

	s.keys("/")
	s.keys("densityLeaf", "Enter")
	s.waitFor(`search “densityLeaf”`, 5*time.Second)
	s.keys("i")
	s.waitFor(`view bottom-up`, 5*time.Second)

	s.keys("x")
	s.waitFor(`export to:`, 5*time.Second)
	s.keys("C-u")
	s.keys(export, "Enter")
	s.waitFor(`exported to `+regexp.QuoteMeta(export), 10*time.Second)

	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 10*time.Second)
	scr := s.screen()
	if strings.Contains(scr, "view bottom-up") {
		t.Errorf("the TUI is still on screen after quitting:\n%s", scr)
	}
	if out, _ := exec.Command("pgrep", "-f", cctopBin+" workload density -loop").Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("workload left running: %s", out)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", export).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "densityLeaf") {
		t.Errorf("go tool pprof on the export: %v\n%s", err, out)
	}
}

// TestViewInTmux: `cctop view` opens a profile written by Go's
// runtime/pprof and shows its functions; `--base` adds the comparison.
func TestViewInTmux(t *testing.T) {
	s := newTmux(t, 100, 30, cctopBin+" view cct/testdata/runtime.pb.gz --base cct/testdata/runtime.pb.gz")
	s.waitFor(`vs base file\s+overlap 100\.0%`, 10*time.Second)
	s.keys("t") // flat top functions
	s.waitFor(`busyLoop`, 5*time.Second)
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 5*time.Second)
}

// TestViewBadFiles: a missing, empty, corrupt or non-pprof file gets a
// one-line error and exit status 1.
func TestViewBadFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pb.gz")
	os.WriteFile(empty, nil, 0o644)
	garbage := filepath.Join(dir, "garbage.pb.gz")
	os.WriteFile(garbage, []byte("this is not a profile\n"), 0o644)
	truncated := filepath.Join(dir, "truncated.pb.gz")
	b, _ := os.ReadFile("cct/testdata/runtime.pb.gz")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	for _, c := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.pb.gz"), "no such file"},
		{empty, "not a pprof profile"},
		{garbage, "not a pprof profile"},
		{truncated, "pprof"},
	} {
		_, stderr, code := runCctop(t, dir, "view", c.file)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("view %s: exit %d, stderr %q; want exit 1 and one line with %q", filepath.Base(c.file), code, stderr, c.want)
		}
	}
	if _, stderr, code := runCctop(t, dir, "view"); code != 2 || !strings.Contains(stderr, "one profile file") {
		t.Errorf("view without a file: exit %d %q", code, stderr)
	}
}

// TestDemoHeadless: without a terminal the demo prints the tree.
func TestDemoHeadless(t *testing.T) {
	skipIfNoPerf(t)
	out, stderr, code := runCctop(t, t.TempDir(), "demo", "--headless")
	if code != 0 || !strings.Contains(out, "workload.densityPhaseD") || !strings.Contains(out, "workload.densityLeaf") {
		t.Fatalf("demo --headless: exit %d\n%s\n%s", code, out, stderr)
	}
}
