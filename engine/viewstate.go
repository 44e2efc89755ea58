package engine

import (
	"cmp"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/tui"
)

// viewState is what the person at the TUI chose to see of a profile: the
// corrections the call estimates are weighed under, the metric, and what
// the profile is compared with. The live and the saved-profile sources
// each keep one, so that a key does the same and says the same on both;
// what differs between them, how calls are weighed and which comparisons
// there are, each says as a viewTarget.
type viewState struct {
	params correct.Params
	metric string // "time" or "calls"
	// metricChosen: the user picked the metric, which then stays.
	metricChosen bool
	comparison   int // index into comparisons
	// flow: the calls shown are corrected by control flow (FDOM).
	flow bool
	// mode is the time shown: ModeCPU, ModeWall or ModeOffCPU. showIdle:
	// the threads that were almost always off the CPU count in the time
	// off it (they are left out by default, as they would drown the
	// threads at work).
	mode     string
	showIdle bool
}

// comparisons are what the shown weights can be compared with, in the
// order c steps through them.
var comparisons = []string{"", "uncorrected samples", "baseline", "base file", "exact run"}

// viewTarget is a profile a viewState shows: the live one or a saved one.
type viewTarget interface {
	// shown is the tree the weights are of.
	shown() *cct.Tree
	// calls is the call estimates per node of shown under p, nil when
	// none were counted.
	calls(p correct.Params) []float64
	// flowCalls is the calls per node of shown under p corrected by
	// control flow (from the samples when no call was counted), nil when
	// there are none (yet).
	flowCalls(p correct.Params) []float64
	// compared is the named comparison on shown's nodes ("baseline",
	// "base file", "exact run"), as calls or as time; ok is false when the
	// target has none such now, and w nil with ok true when it is there
	// but empty yet (no baseline taken).
	compared(name string, calls bool, p correct.Params) (w []float64, ok bool)
	// reweighs says whether the target weighs its samples anew under any
	// alpha; a saved profile holds its estimates at the recorded one.
	reweighs() bool
	// save writes the profile to path with its call estimates under p.
	save(path string, p correct.Params) error
	// send puts m on the TUI's status line.
	send(m tea.Msg)
	// offCPU says whether the profile has time off the CPU, or can get it.
	offCPU() bool
	// switchMode makes the target show mode: a live one records context
	// switches from then on where it did not. An error says why it cannot.
	switchMode(mode string) error
	// coverage is how many of the profile's samples carry a call count;
	// known is false where the profile does not say (no counter, a file
	// from elsewhere).
	coverage() (c correct.Coverage, known bool)
}

func newViewState(p correct.Params, comparison, mode string) viewState {
	v := viewState{params: p, metric: "time", mode: cmp.Or(mode, ModeCPU)}
	v.setComparison(comparison)
	return v
}

// setComparison makes the named comparison current.
func (v *viewState) setComparison(name string) {
	for i, c := range comparisons {
		if c == name {
			v.comparison = i
		}
	}
}

// suggestMetric shows m unless the user chose a metric.
func (v *viewState) suggestMetric(m string) {
	if !v.metricChosen {
		v.metric = m
	}
}

// act applies the view action a, saying what it did through t. It reports
// false when a is not a view action, or one t cannot take (alpha on a
// saved profile): the source's to carry out or refuse.
func (v *viewState) act(a tui.Action, t viewTarget) bool {
	switch a.Kind {
	case tui.ToggleDensity:
		v.params.Density = !v.params.Density
		t.send(tui.StatusMsg{Text: "density correction " + onOff(v.params.Density)})
	case tui.ToggleLatency:
		v.params.Latency = !v.params.Latency
		t.send(tui.StatusMsg{Text: "latency correction " + onOff(v.params.Latency)})
	case tui.ToggleFlow:
		v.flow = !v.flow
		if !v.flow {
			t.send(tui.StatusMsg{Text: "flow correction off"})
			break
		}
		if !t.reweighs() && t.flowCalls(v.params) == nil {
			v.flow = false
			t.send(tui.StatusMsg{Text: "this profile holds no flow-corrected calls (calls_flow/count, which cctop record writes)"})
			break
		}
		// Flow correction shows in calls: show them.
		v.metric, v.metricChosen = "calls", true
		t.send(tui.StatusMsg{Text: "flow correction on: calls corrected by the control flow of the machine code (FDOM)"})
	case tui.AlphaUp, tui.AlphaDown:
		if !t.reweighs() {
			return false
		}
		v.params.Alpha = stepAlpha(v.params.Alpha, a.Kind == tui.AlphaUp)
	case tui.SetMetric:
		v.metric = "time"
		if a.Value != 0 {
			v.metric = "calls"
			if t.calls(v.params) == nil && !v.flow {
				t.send(tui.StatusMsg{Text: "no calls were counted in this profile: it shows time (w estimates calls from the control flow)"})
			}
		}
		v.metricChosen = true
	case tui.CycleComparison:
		v.nextComparison(t)
	case tui.CycleMode:
		v.nextMode(t)
	case tui.ToggleIdle:
		v.showIdle = !v.showIdle
		if v.showIdle {
			t.send(tui.StatusMsg{Text: "idle threads shown: their time off the CPU counts"})
		} else {
			t.send(tui.StatusMsg{Text: fmt.Sprintf("idle threads hidden: those on the CPU under %d%% of their time", 100/idleOnCPU)})
		}
	default:
		return false
	}
	return true
}

// nextComparison steps to the next comparison t has, saying what it lacks.
func (v *viewState) nextComparison(t viewTarget) {
	for {
		v.comparison = (v.comparison + 1) % len(comparisons)
		name := comparisons[v.comparison]
		if name == "" || name == "uncorrected samples" {
			return
		}
		w, ok := t.compared(name, v.metric == "calls", v.params)
		if !ok {
			continue
		}
		switch {
		case name == "baseline" && w == nil:
			t.send(tui.StatusMsg{Text: "no baseline yet: press b to take one"})
		case name == "exact run" && v.metric != "calls":
			t.send(tui.StatusMsg{Text: "the exact run counts calls: press m to compare calls"})
		}
		return
	}
}

// nextMode steps to the next mode t can show.
func (v *viewState) nextMode(t viewTarget) {
	to := nextMode[v.mode]
	for to != v.mode {
		err := t.switchMode(to)
		if err == nil {
			v.mode = to
			v.metric, v.metricChosen = "time", true
			t.send(tui.StatusMsg{Text: modeWords[to]})
			return
		}
		t.send(tui.StatusMsg{Text: err.Error()})
		to = nextMode[to]
	}
}

// modeWords say what each mode shows.
var modeWords = map[string]string{
	ModeCPU:    "mode cpu: time on the CPU",
	ModeWall:   "mode wall: time on the CPU and off it (blocked, or waiting to run), per thread on one scale",
	ModeOffCPU: "mode offcpu: time off the CPU, by the stack each thread left it with",
}

// export writes t's profile to path, or to a new file named for the time
// when path is "", and says where or what went wrong.
func (v *viewState) export(path string, t viewTarget) {
	if path == "" {
		path = fmt.Sprintf("cctop-%s.pb.gz", time.Now().Format("20060102-150405"))
	}
	if err := t.save(path, v.params); err != nil {
		t.send(tui.ErrorMsg{Err: err})
		return
	}
	t.send(tui.StatusMsg{Text: "exported to " + path})
}

// selfWeights is the self weight per node of t of the metric shown, and
// its name: calls where chosen and counted, time otherwise.
func (v *viewState) selfWeights(t viewTarget) ([]float64, string) {
	if v.metric == "calls" && v.densityWhy(t) == "" {
		if v.flow {
			if w := t.flowCalls(v.params); w != nil {
				return w, "calls"
			}
		}
		if w := t.calls(v.params); w != nil {
			return w, "calls"
		}
	}
	tree := t.shown()
	if v.mode != ModeCPU && !v.showIdle {
		if idle := idleThreads(tree.ThreadTotals()); len(idle) > 0 {
			return tree.SelfOfThreads(modeTime(v.mode), func(tid uint32) bool { return !idle[tid] }), "time"
		}
	}
	return selfOf(tree, modeTime(v.mode)), "time"
}

// modeHeader is the header's mode, the on-CPU share of the threads shown
// and how many idle threads are hidden, for a profile with time off the
// CPU.
func (v *viewState) modeHeader(h *tui.Header, t viewTarget) {
	h.Mode, h.OnCPU, h.IdleHidden = "", -1, 0
	if !t.offCPU() {
		return
	}
	h.Mode = v.mode
	totals := t.shown().ThreadTotals()
	idle := map[uint32]bool{}
	if v.mode != ModeCPU && !v.showIdle {
		idle = idleThreads(totals)
		h.IdleHidden = len(idle)
	}
	var on, off int64
	for tid, m := range totals {
		if !idle[tid] {
			on, off = on+m.Time, off+m.OffCPU
		}
	}
	// The share is of time only where the samples' time is a clock's, as
	// it is where wall time adds up.
	if tot := t.shown().Total(); on+off > 0 && tot.Wall == tot.Time+tot.OffCPU {
		h.OnCPU = 100 * float64(on) / float64(on+off)
	}
}

// densityWhy says why the density weights cannot stand for t's profile
// though density is on (the coverage rule, correct.Coverage), "" where
// they can or are not asked for.
func (v *viewState) densityWhy(t viewTarget) string {
	if !v.params.Density {
		return ""
	}
	if c, known := t.coverage(); known {
		return c.Why()
	}
	return ""
}

// compareWeights is the current comparison on t's nodes, nil for none.
func (v *viewState) compareWeights(t viewTarget, calls bool) []float64 {
	switch name := comparisons[v.comparison]; name {
	case "":
		return nil
	case "uncorrected samples":
		if !calls {
			// Time against samples measures no correction: an overlap
			// near 100% would read as one that changed nothing.
			return nil
		}
		return withoutProbes(t.shown(), selfOf(t.shown(), func(m cct.Metrics) int64 { return m.Samples }))
	default:
		w, _ := t.compared(name, calls, v.params)
		return w
	}
}

// show sets what of s comes from the view: the weights of the shown
// metric and of the comparison, their overlap, and the header's words for
// the choices.
func (v *viewState) show(s *tui.Snapshot, t viewTarget) {
	self, metric := v.selfWeights(t)
	cmp := v.compareWeights(t, metric == "calls")
	overlap := -1.0
	if cmp != nil && hasWeight(self) && hasWeight(cmp) {
		overlap = correct.OverlapSlices(self, cmp)
	} else {
		// Nothing to compare yet (no call counted before the counters
		// are armed): an overlap of 0 and deltas of -100 would mislead.
		cmp = nil
	}
	s.Self, s.Compare, s.Metric = self, cmp, metric
	h := &s.Header
	h.Density, h.Latency, h.Alpha, h.Flow = v.params.Density, v.params.Latency, v.params.Alpha, v.flow
	h.DensityWhy, h.Counted = v.densityWhy(t), 0
	if c, known := t.coverage(); known && c.Samples > 0 {
		h.Counted = 100 * c.Share()
	}
	h.Comparison, h.Overlap = comparisons[v.comparison], overlap
	v.modeHeader(h, t)
}

// withoutProbes is w with the [cctop probes] contexts' weight 0: they weigh
// nothing in the calls (weighing.add), and the samples they are compared
// with leave them out too, so that the overlap measures the correction,
// not cctop's own cost.
func withoutProbes(t *cct.Tree, w []float64) []float64 {
	for i := range w {
		if w[i] != 0 && t.Func(t.Node(cct.NodeID(i)).Func).Name == cct.ProbesName {
			w[i] = 0
		}
	}
	return w
}

// selfOf is one self metric of every node of t.
func selfOf(t *cct.Tree, metric func(cct.Metrics) int64) []float64 {
	w := make([]float64, t.Len())
	for i := range w {
		w[i] = float64(metric(t.Node(cct.NodeID(i)).Self))
	}
	return w
}

func hasWeight(w []float64) bool {
	for _, x := range w {
		if x > 0 {
			return true
		}
	}
	return false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// stepAlpha moves alpha along 0, 0.01, 0.1, 1, 10, ... 10000.
func stepAlpha(a float64, up bool) float64 {
	steps := []float64{0, 0.01, 0.1, 1, 10, 100, 1000, 10000}
	i := 0
	for i < len(steps)-1 && steps[i] < a {
		i++
	}
	if up && i < len(steps)-1 {
		i++
	} else if !up && i > 0 {
		i--
	}
	return steps[i]
}
