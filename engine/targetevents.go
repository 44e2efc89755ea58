package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cctop/cctop/sampler"
)

// What became of the target while it was sampled, worded once for the
// record summary, which says the totals, and the TUI's status line, which
// says what changed since it last looked. Children, execs and missed
// threads read the same in both; a stop is news as it begins and ends.

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

// targetEvents lists what the target did besides running, in all: stops,
// child processes, programs executed. The record summary says these.
func targetEvents(t sampler.TargetState) []string {
	var ev []string
	if t.Stops > 0 {
		ev = append(ev, stopsPhrase(t))
	}
	if t.Processes > 0 {
		ev = append(ev, childrenPhrase(t.Processes, t.Processes))
	}
	if t.Execs > 0 {
		ev = append(ev, execPhrase(t.Execs, t.Exec))
	}
	return ev
}

// targetNews lists what the target did between two looks at it, was and
// now, in the same words as targetEvents where the event is the same. The
// TUI's status line says these as they happen.
func targetNews(was, now sampler.TargetState) []string {
	var ev []string
	if s := stopNews(was, now); s != "" {
		ev = append(ev, s)
	}
	if now.Execs > was.Execs {
		ev = append(ev, execPhrase(now.Execs-was.Execs, now.Exec))
	}
	if now.Processes > was.Processes {
		ev = append(ev, childrenPhrase(now.Processes-was.Processes, now.Processes))
	}
	// Once: such threads keep coming, and each would push the rest off
	// the status line.
	if now.Missed > 0 && was.Missed == 0 {
		ev = append(ev, missedPhrase(0))
	}
	return ev
}

// stopsPhrase is how often and how long t was stopped in all.
func stopsPhrase(t sampler.TargetState) string {
	d := stoppedFor(t.StoppedFor)
	if t.Stops > 1 {
		d += " in all"
	}
	if t.Stopped {
		return fmt.Sprintf("stopped now (%s, %s; no samples while stopped)", times(t.Stops), d)
	}
	return fmt.Sprintf("stopped %s (%s; no samples while stopped)", times(t.Stops), d)
}

// stopNews is a stop that began or ended between was and now, "" when
// none did.
func stopNews(was, now sampler.TargetState) string {
	switch {
	case now.Stopped && (!was.Stopped || now.Stops != was.Stops):
		return "stopped (SIGSTOP or a debugger): no samples until it continues"
	case !now.Stopped && now.Stops > was.Stops:
		// Stopped and continued between two looks.
		return fmt.Sprintf("was stopped and continued (%s stopped in all)", stoppedFor(now.StoppedFor))
	case was.Stopped && !now.Stopped:
		return fmt.Sprintf("continued after %s stopped", stoppedFor(now.StoppedFor-was.StoppedFor))
	}
	return ""
}

func stoppedFor(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// childrenPhrase is n child processes started, of all so far.
func childrenPhrase(n, all uint64) string {
	s := fmt.Sprintf("started %d child %s (", n, plural(int(n), "process", "processes"))
	if all != n {
		s += fmt.Sprintf("%d in all, ", all)
	}
	return s + "sampled with it)"
}

// execPhrase is n programs executed, the last one last.
func execPhrase(n uint64, last string) string {
	s := "executed " + last
	if n > 1 {
		s = fmt.Sprintf("executed %d programs, the last %s", n, last)
	}
	return s + " (samples before and after are kept)"
}

// missedPhrase is n threads that ended before cctop could open events on
// them, or with n 0, that such threads come and go.
func missedPhrase(n uint64) string {
	s := "short-lived threads end before cctop can open events on them: their samples are missing"
	if n > 0 {
		s = fmt.Sprintf("%d short-lived %s ended before cctop could open events on them: their samples are missing", n, plural(int(n), "thread", "threads"))
	}
	return s + " (with uprobe counters threads are followed one by one; --calls none samples every new thread from its start)"
}

// faultNotes are what the summary should add about samples not taken.
func faultNotes(t sampler.TargetState, st sampler.Stats) []string {
	var notes []string
	if t.Missed > 0 {
		notes = append(notes, missedPhrase(t.Missed))
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
	if cfg.AllProcesses {
		n := int(sess.Target().Processes)
		if cfg.Select != nil {
			return fmt.Sprintf("%d %s sampled", n, plural(n, "process", "processes"))
		}
		return fmt.Sprintf("the host: %d %s sampled", n, plural(n, "process", "processes"))
	}
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
