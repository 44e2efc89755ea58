package engine

import (
	"fmt"
	"strings"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/tui"
)

// nextTrigger is the order g cycles through.
var nextTrigger = map[string]string{triggerTime: triggerCalls, triggerCalls: triggerExact, triggerExact: triggerTime}

// cycleTrigger moves the running sampler to the next trigger: time, then a
// sample every callsPeriodDefault calls of the counted functions, then every
// call, then time again. The events are reopened; the profile so far stays,
// and the samples of each trigger are weighed as that trigger says.
func (l *Live) cycleTrigger() {
	from := l.plan.trigger
	to := nextTrigger[from]
	hw := l.plan.source.Kind == "hw"
	probes := l.plan.source.Kind == "uprobe" && len(l.plan.targets) > 0
	if to == triggerExact && !probes {
		to = triggerTime // counting every call needs probes, not a PMU counter
	}
	if to == triggerCalls && !hw && !probes {
		msg := "the calls trigger needs counted functions: none are counted"
		if l.plan.auto {
			msg = "the calls trigger needs counted functions: none are armed yet"
		}
		l.send(tui.StatusMsg{Text: msg})
		return
	}
	if to == from {
		return
	}
	if from == triggerTime {
		l.timeCfg = l.sess.Config()
	}
	targets := l.plan.targets
	old := l.sess.Config()
	change := func(c *sampler.Config) {
		if to == triggerTime {
			keep := *c
			*c = l.timeCfg
			c.PID, c.Argv = keep.PID, keep.Argv
		} else {
			c.RingPages = l.timeCfg.RingPages
		}
		triggerConfig(c, to, l.plan.source, targets, callsPeriodDefault)
	}
	if err := l.reconfigure(change); err != nil {
		l.send(tui.ErrorMsg{Err: fmt.Errorf("switching to the %s trigger: %w", to, err)})
		// Back to where it was, so that something samples.
		if err := l.reconfigure(func(c *sampler.Config) { *c = old }); err != nil {
			l.send(tui.ErrorMsg{Err: err})
		}
		if w := l.b.weights; w != nil {
			w.reset(l.sess.Generation())
		}
		return
	}
	l.plan.trigger = to
	l.lostBase = l.sess.Stats().Lost
	if w := l.b.weights; w != nil {
		w.trigger = to
		w.reset(l.sess.Generation())
	}
	switch to {
	case triggerTime:
		l.send(tui.StatusMsg{Text: "trigger time: " + Describe(l.sess.Config())})
		if from == triggerExact && l.exactCalls() != nil {
			l.setComparison("exact run")
		}
	case triggerCalls:
		l.send(tui.StatusMsg{Text: fmt.Sprintf("trigger calls: a sample every %d calls of %s", callsPeriodDefault, l.countedNames())})
	case triggerExact:
		l.send(tui.StatusMsg{Text: "trigger exact: every call of " + l.countedNames() + " is a sample (costly; g again to go back to time)"})
	}
}

func (l *Live) countedNames() string {
	if l.plan.source.Kind == "hw" {
		return "the program (" + l.plan.source.Events[0].Name + ")"
	}
	n := names(l.plan.targets)
	if len(n) > 3 {
		return fmt.Sprintf("%s and %d more", strings.Join(n[:3], ", "), len(n)-3)
	}
	return strings.Join(n, ", ")
}
