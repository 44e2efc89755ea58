package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// TestTopWallInTmux: `cctop top --mode wall` on the sleep workload, in tmux
// at 100x30, as a person would run it: the header says the mode and the
// on-CPU share, the sleep shows as its call path with its reason; W steps
// to offcpu, to cpu and back to wall (recording switches again), H shows
// the idle threads, and q restores the terminal.
func TestTopWallInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	s := newTmuxShell(t, "", 100, 30)
	s.run(cctopBin + " top --mode wall --calls none -- " + cctopBin + " workload sleep -loop")
	// The sleep thread is on the CPU about 30% of the time, and the idle
	// threads (the Go runtime's) are hidden by default, out of the share.
	// The first second is start-up: the share settles as the loop runs.
	share := -1.0
	scr := s.waitScreen("the wall header, the sleep's wait and an on-CPU share near 30%", 30*time.Second, func(scr string) bool {
		if !regexp.MustCompile(`mode wall`).MatchString(scr) || !regexp.MustCompile(`idle hidden \d`).MatchString(scr) ||
			!regexp.MustCompile(`\[off-cpu: (clock_)?nanosleep\]|workload\.sleepNap`).MatchString(scr) {
			return false
		}
		m := regexp.MustCompile(`on-CPU (\d+\.\d)%`).FindStringSubmatch(scr)
		if m == nil {
			return false
		}
		share, _ = strconv.ParseFloat(m[1], 64)
		return share >= 24 && share <= 40
	})
	t.Logf("on-CPU share %.1f%%:\n%s", share, scr)
	// The header says what the keys did; the status line may have moved
	// on (the switch rate's notes) by the time the screen is read.
	header := func(what, re string, absent ...string) {
		t.Helper()
		rx := regexp.MustCompile(re)
		s.waitScreen(what, 10*time.Second, func(scr string) bool {
			for _, a := range absent {
				if strings.Contains(scr, a) {
					return false
				}
			}
			return rx.MatchString(scr)
		})
	}
	s.keys("H")
	header("the idle threads shown", `mode wall  on-CPU \d`, "idle hidden")
	s.keys("W")
	header("mode offcpu", `mode offcpu`)
	s.keys("W")
	header("mode cpu", `mode cpu`)
	// Back to wall from cpu: switches are recorded again, by reopened
	// events.
	s.keys("W")
	header("mode wall again", `mode wall  on-CPU \d`)
	s.keys("q")
	if code := s.exitCode(30 * time.Second); code != 0 {
		t.Errorf("exit status %d after q", code)
	}
	s.checkRestored("mode cpu")
	workloadLeft(t)
}
