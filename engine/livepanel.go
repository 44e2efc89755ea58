package engine

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/tui"
)

// counters is the counters panel of a snapshot: the counter and its cost,
// each thread's call density over time, the sampling latency, and where
// truncated stacks stop, by module.
func (l *Live) counters(threads map[uint32]cct.Thread) *tui.Counters {
	cfg := l.sess.Config()
	rate := Describe(cfg)
	if l.plan.trigger != triggerTime {
		rate = fmt.Sprintf("a sample every %d calls", max(samplePeriod(cfg), 1))
	}
	c := &tui.Counters{
		Source: l.plan.describe(),
		Cost:   -1,
		Params: fmt.Sprintf("trigger %s · %s · alpha %g · density %s · latency %s · unwind %s",
			l.plan.trigger, rate, l.params.Alpha, onOff(l.params.Density), onOff(l.params.Latency), l.plan.unwind.short()),
		BucketSeconds: densityBucket.Seconds(),
		DensityUnit:   "calls/ms",
	}
	for _, st := range l.b.unwound.topStops(3) {
		c.Stops = append(c.Stops, tui.StackStop{Module: st.Module, Why: st.Why, Percent: st.Percent})
	}
	c.Memory = l.b.memoryLine()
	if js := l.b.jitRegionLines(threads, 1); len(js) > 0 {
		c.JIT = strings.TrimPrefix(js[0], "JIT code: ")
	}
	if ps := l.b.pyLines(); len(ps) > 0 {
		c.Python = strings.TrimPrefix(strings.Join(ps, "; "), "python frames: ")
	}
	if o := l.b.off; o != nil {
		src, _ := l.sess.OffCPU()
		st := l.sess.Stats()
		c.OffCPU = o.describe(cmp.Or(src, "none now"))
		if st.Lost > 0 {
			c.OffCPU += fmt.Sprintf("; %d records lost, switches among them", st.Lost)
		}
		if st.ProbeMisses > 0 {
			c.OffCPU += fmt.Sprintf("; %d probes missed (the thread ran again)", st.ProbeMisses)
		}
	}
	w := l.b.weights
	if w == nil {
		return c
	}
	c.Hits = w.totalHits()
	switch {
	case l.plan.source.Kind == "hw":
		c.Cost = 0 // the PMU counts for free
	case l.plan.trigger == triggerTime && w.ledger.runCPU > 0 && l.plan.source.Kind == "uprobe":
		c.Cost, _ = w.ledger.window(monoNow())
	}
	for _, d := range w.timeline.Densities(densityKeep, 1e6) {
		c.Density = append(c.Density, tui.ThreadSeries{TID: d.TID, Name: threads[d.TID].Name, Points: d.Points})
	}
	s := w.latency.Summary()
	hist, edges := w.latency.Octaves()
	c.Latency = tui.LatencyStats{N: uint64(s.N), Min: s.Min, Median: s.Median, Mean: s.Mean, Max: s.Max, Hist: hist, Edges: edges}
	return c
}

// threadSelf returns the snapshot's per-thread weights: time from the
// (immutable) cloned tree for any thread; calls, which need the sample log
// the aggregator owns, only for the thread the filter asked for, weighed
// here.
func (l *Live) threadSelf(tree *cct.Tree) func(uint32) []float64 {
	if l.metric == "calls" && l.b.weights != nil {
		sel := l.threadSel
		var got []float64
		if idx, ok := l.b.weights.threads[sel]; ok && sel != 0 {
			w, _ := l.b.weights.log.ReweightThread(l.params, idx, nil)
			got = resized(w, tree.Len())
		} else if sel != 0 {
			got = make([]float64, tree.Len()) // no samples of that thread weighed
		}
		return func(tid uint32) []float64 {
			if tid == sel {
				return got
			}
			return nil
		}
	}
	of := modeTime(l.mode)
	return func(tid uint32) []float64 {
		return tree.SelfOfThreads(of, func(t uint32) bool { return t == tid })
	}
}
