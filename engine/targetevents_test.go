package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/sampler"
)

// TestTargetNews: the status line hears of each change once, in the words
// the summary uses for the totals, and nothing when nothing changed.
func TestTargetNews(t *testing.T) {
	running := sampler.TargetState{Processes: 2, Execs: 1, Exec: "spin"}
	stopped := running
	stopped.Stopped, stopped.Stops, stopped.StoppedFor = true, 1, 0
	continued := stopped
	continued.Stopped, continued.StoppedFor = false, 1500*time.Millisecond
	// Stopped, continued and stopped again between two looks.
	again := continued
	again.Stopped, again.Stops = true, 2
	forked := continued
	forked.Processes, forked.Execs, forked.Exec, forked.Missed = 3, 3, "sh", 7
	forkedMore := forked
	forkedMore.Missed = 9

	cases := []struct {
		name     string
		was, now sampler.TargetState
		want     []string
	}{
		{"nothing new", running, running, nil},
		{"first look", sampler.TargetState{}, running, []string{
			"executed spin (samples before and after are kept)",
			"started 2 child processes (sampled with it)"}},
		{"stop", running, stopped, []string{"stopped (SIGSTOP or a debugger): no samples until it continues"}},
		{"still stopped", stopped, stopped, nil},
		{"continued", stopped, continued, []string{"continued after 1.5s stopped"}},
		{"stopped again", continued, again, []string{"stopped (SIGSTOP or a debugger): no samples until it continues"}},
		{"stop missed", running, continued, []string{"was stopped and continued (1.5s stopped in all)"}},
		{"children, execs, missed threads", continued, forked, []string{
			"executed 2 programs, the last sh (samples before and after are kept)",
			"started 1 child process (3 in all, sampled with it)",
			"short-lived threads end before cctop can open events on them: their samples are missing (with uprobe counters threads are followed one by one; --calls none samples every new thread from its start)"}},
		{"more missed threads, said once", forked, forkedMore, nil},
	}
	for _, c := range cases {
		if got := targetNews(c.was, c.now); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	// The summary's totals of the same events.
	if got, want := targetEvents(forkedMore), []string{
		"stopped once (1.5s; no samples while stopped)",
		"started 3 child processes (sampled with it)",
		"executed 3 programs, the last sh (samples before and after are kept)",
	}; !slices.Equal(got, want) {
		t.Errorf("totals %q, want %q", got, want)
	}
	again.StoppedFor = 2 * time.Second
	if got := targetEvents(again)[0]; got != "stopped now (twice, 2s in all; no samples while stopped)" {
		t.Errorf("stopped now: %q", got)
	}
	if n := faultNotes(forkedMore, sampler.Stats{}); len(n) != 1 || !strings.HasPrefix(n[0], "9 short-lived threads ended before cctop could open events on them") {
		t.Errorf("notes %q", n)
	}
}
