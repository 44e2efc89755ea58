package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// uprobeHandlers are kernel functions a sample passes through only because a
// counting probe fired: cctop folds them into [cctop probes].
var uprobeHandlers = []string{
	"asm_exc_int3", "uprobe_notify_resume", "handler_chain", "uprobe_dispatcher",
	"__uprobe_perf_func", "arch_uprobe_skip_sstep", "find_active_uprobe_rcu",
}

// cutFigure finds a "…" that cuts a number: right after a digit, or a
// figure's unit, or before one.
var cutFigure = regexp.MustCompile(`[0-9.%]…|…[0-9]`)

// TestDemoFirstScreenInTmux opens `cctop demo` in an 80×24 terminal, the
// size of a fresh SSH session, and presses no key: the first screen shows
// the hot leaf and both its callers, uncut, and a header with no figure cut.
// Then the flat view (t) ranks no uprobe handler frame.
func TestDemoFirstScreenInTmux(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	s := newTmux(t, 80, 24, cctopBin+" demo")
	start := time.Now()
	names := []string{"workload.densityLeaf", "workload.densityPhaseD", "workload.densityPhaseC"}
	scr := s.waitScreen("the hot leaf and both its callers", 20*time.Second, func(scr string) bool {
		for _, n := range names {
			if !regexp.MustCompile(regexp.QuoteMeta(n) + `($|[^…\w])`).MatchString(scr) {
				return false
			}
		}
		return true
	})
	t.Logf("first screen with the hot path after %v:\n%s", time.Since(start).Round(10*time.Millisecond), scr)
	lines := strings.Split(scr, "\n")
	for i, l := range lines[:min(4, len(lines))] {
		if cutFigure.MatchString(l) {
			t.Errorf("header line %d cuts a figure: %q", i+1, l)
		}
	}
	if !strings.Contains(scr, "›") {
		t.Errorf("the chain to the branch is not one row:\n%s", scr)
	}
	if cur := regexp.MustCompile(`(?m)^.*workload\.densityLeaf.*$`).FindAllString(scr, -1); len(cur) == 0 {
		t.Errorf("no row of the hot leaf:\n%s", scr)
	}

	s.keys("t")
	s.waitFor(`function \(flat`, 5*time.Second)
	time.Sleep(500 * time.Millisecond) // a refresh or two in the flat view
	scr = s.screen()
	for _, h := range uprobeHandlers {
		if strings.Contains(scr, h) {
			t.Errorf("the flat view ranks the probe handler %s:\n%s", h, scr)
		}
	}
	if strings.Contains(scr, "[cctop probes]") {
		t.Errorf("the flat view ranks [cctop probes] by default:\n%s", scr)
	}
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 10*time.Second)
	workloadLeft(t)
}
