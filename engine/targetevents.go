package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cctop/cctop/sampler"
)

// What became of the target while it was sampled, in the words of the
// record summary and the TUI's status line.

// exitReport says how the target ended: a launched command's exit status
// or the signal that killed it, or that an attached process is gone. It is
// empty while the target runs.
func exitReport(cfg sampler.Config, sess *sampler.Session) string {
	if !sess.Exited() {
		return ""
	}
	if len(cfg.Argv) == 0 {
		return fmt.Sprintf("process %d exited", sess.PID())
	}
	name := filepath.Base(cfg.Argv[0])
	if sig, ok := sess.ExitSignal(); ok {
		return fmt.Sprintf("%s was killed by %s", name, sampler.SignalName(sig))
	}
	if code, _ := sess.ExitCode(); code >= 0 {
		return fmt.Sprintf("%s exited with status %d", name, code)
	}
	return name + " exited"
}

// targetEvents lists what the target did besides running: stops, child
// processes, programs executed.
func targetEvents(t sampler.TargetState) []string {
	var ev []string
	if t.Stops > 0 {
		d := t.StoppedFor.Round(100 * time.Millisecond).String()
		if t.Stops > 1 {
			d += " in all"
		}
		s := fmt.Sprintf("stopped %s (%s; no samples while stopped)", times(t.Stops), d)
		if t.Stopped {
			s = fmt.Sprintf("stopped now (%s, %s; no samples while stopped)", times(t.Stops), d)
		}
		ev = append(ev, s)
	}
	if t.Processes > 0 {
		ev = append(ev, fmt.Sprintf("started %d child %s (sampled with it)", t.Processes, plural(int(t.Processes), "process", "processes")))
	}
	if t.Execs > 0 {
		s := fmt.Sprintf("executed %s", t.Exec)
		if t.Execs > 1 {
			s = fmt.Sprintf("executed %d programs, the last %s", t.Execs, t.Exec)
		}
		ev = append(ev, s+" (samples before and after are kept)")
	}
	return ev
}

// faultNotes are what the summary should add about samples not taken.
func faultNotes(t sampler.TargetState, st sampler.Stats) []string {
	var notes []string
	if t.Missed > 0 {
		notes = append(notes, fmt.Sprintf("%d short-lived %s ended before cctop could open events on them: their samples are missing (with uprobe counters threads are followed one by one; --calls none samples every new thread from its start)",
			t.Missed, plural(int(t.Missed), "thread", "threads")))
	}
	if st.Corrupt > 0 {
		notes = append(notes, fmt.Sprintf("%d ring reads stopped at a malformed record: the records after it in that read were dropped", st.Corrupt))
	}
	return notes
}

func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// targetSummary is the summary's line about the target: how it ended and
// what it did, "" when there is nothing to say.
func targetSummary(cfg sampler.Config, sess *sampler.Session) string {
	ev := strings.Join(targetEvents(sess.Target()), "; ")
	exit := exitReport(cfg, sess)
	switch {
	case exit != "" && ev != "":
		return exit + "; " + ev
	case exit != "":
		return exit
	case ev != "":
		return "target " + ev
	}
	return ""
}
