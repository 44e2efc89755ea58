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

// TestAnnotateMissingInTmux (issue 33): `a` on hotline.c's work in `cctop
// top` at 80x24 where what the view would show is not all there: its
// source file moved away since the build, or its debug info stripped. The
// view says what is missing in one line under its title and opens on
// what it has, the instructions, the hottest in view with most of the
// profile; with the source gone they keep their lines (the hot one, 12
// or 13, the inner loop's), stripped they have none.
func TestAnnotateMissingInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T, dir string) string // the binary
		missing string                                // the line under the title
		lines   bool                                  // the instructions have their lines
	}{
		{"source", func(t *testing.T, dir string) string {
			src := filepath.Join(dir, "src", "hotline.c")
			b, err := os.ReadFile("testdata/hotline.c")
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Dir(src), 0o755)
			if err := os.WriteFile(src, b, 0o644); err != nil {
				t.Fatal(err)
			}
			bin := testutil.Compile(t, dir, "gcc", src, "-O1", "-g", "-fno-omit-frame-pointer")
			os.RemoveAll(filepath.Dir(src))
			return bin
		}, `source file not found`, true},
		{"stripped", func(t *testing.T, dir string) string {
			if _, err := exec.LookPath("strip"); err != nil {
				t.Skip("strip not installed")
			}
			bin := testutil.Compile(t, dir, "gcc", "testdata/hotline.c", "-O1", "-g", "-fno-omit-frame-pointer")
			if out, err := exec.Command("strip", "--strip-debug", bin).CombinedOutput(); err != nil {
				t.Fatalf("strip: %v\n%s", err, out)
			}
			return bin
		}, `no source file|stripped|no line`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := c.prepare(t, t.TempDir())
			s := startTmux(t, "-"+c.name, 80, 24, cctopBin+" top -- "+bin+" 60; echo CCTOP-EXITED $?; sleep 60")
			s.waitFor(`work`, 20*time.Second)
			time.Sleep(2 * time.Second) // some seconds of samples
			annotateFunc(s, "work")
			s.waitFor(`annotate work · disassembly`, 10*time.Second)
			s.waitFor(`(?m)^\s*[0-9.]+%\s+[0-9.]+%\s+[0-9a-f]+ `, 10*time.Second)
			scr := s.screen()
			lines := strings.Split(scr, "\n")
			title := lineWith(lines, "annotate work · disassembly")
			if title < 0 || title+2 >= len(lines) {
				t.Fatalf("no title:\n%s", scr)
			}
			if !regexp.MustCompile(c.missing).MatchString(lines[title+1]) || !strings.Contains(lines[title+2], "flat") {
				t.Errorf("the line under the title is %q, want what is missing (%s), then the column titles:\n%s",
					lines[title+1], c.missing, scr)
			}
			rx := regexp.MustCompile(`(?m)^\s*([0-9.]+)%\s+(?:[0-9.]+%)\s+[0-9a-f]+ [→ ] (.*)$`)
			hot, hotRow := 0.0, ""
			for _, r := range rx.FindAllStringSubmatch(scr, -1) {
				if v, _ := strconv.ParseFloat(r[1], 64); v > hot {
					hot, hotRow = v, r[2]
				}
			}
			if hot < 30 {
				t.Errorf("the hottest instruction on the screen has %v%%, want most of the profile:\n%s", hot, scr)
			}
			fileLine := regexp.MustCompile(`hotline\.c:\d+`)
			if c.lines && !regexp.MustCompile(`hotline\.c:1[23]\s*$`).MatchString(hotRow) {
				t.Errorf("the hottest instruction %q is not of line 12 or 13:\n%s", hotRow, scr)
			}
			if !c.lines && fileLine.MatchString(scr) {
				t.Errorf("instructions of a stripped binary have lines:\n%s", scr)
			}
			s.keys("Escape")
			s.waitFor(`total\s+self`, 5*time.Second)
			s.keys("q")
			s.waitFor(`CCTOP-EXITED 0`, 15*time.Second)
		})
	}
}

// lineWith is the index of the first line containing sub, -1 if none.
func lineWith(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// annotateFunc searches for fn and presses a on the match whose view is
// fn's own. The first match need not be fn: a kernel function with fn in
// its name (task_work_run for work) may come first in the tree, so it
// steps with n, up to a few matches.
func annotateFunc(s *tmuxSession, fn string) {
	s.t.Helper()
	s.keys("/", fn, "Enter")
	title := regexp.MustCompile(`annotate (\S+) ·`)
	for try := 0; try < 6; try++ {
		time.Sleep(300 * time.Millisecond)
		s.keys("a")
		m := s.waitFor(title.String(), 10*time.Second)
		if m[1] == fn {
			return
		}
		s.keys("Escape")
		s.waitFor(`total\s+self`, 5*time.Second)
		s.keys("n")
	}
	s.t.Fatalf("no match of the search for %s annotates %s:\n%s", fn, fn, s.screen())
}
