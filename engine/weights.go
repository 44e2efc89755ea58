package engine

import (
	"math"
	"slices"
	"time"

	"github.com/cctop/cctop/hpm"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/sampler"
)

// stream is one sampling stream: a thread on one CPU. cctop's events are
// per (thread, CPU), and a per-CPU event counts only while its thread runs
// on that CPU, so consecutive samples of one stream measure one interval of
// leader and counters, while two samples of a thread on different CPUs
// relate to nothing.
type stream struct {
	tid, cpu uint32
}

// weighing turns each sample's group read into a log entry, and the log into
// the tree's call estimates.
type weighing struct {
	trigger string
	event   func(id uint64) (sampler.EventRef, bool)
	streams map[stream]*streamState
	threads map[uint32]int32 // tid -> dense index
	tids    []uint32         // dense index -> tid
	log     *correct.Log
	// generation of the sampler's event set the streams were measured on
	generation int
	// Hits per counter (member index) since the last reset, and over the
	// whole run before it.
	hits    []uint64
	runHits uint64
	// costs is what one hit of each counter costs the target, in ns
	// (member m's at m-1), and ledger what counting cost it, measured,
	// against its CPU time: the budget's books, kept across resets.
	costs  []float64
	ledger *costLedger
	// members names the function each counter counts (member m counts
	// members[m-1]) under the time trigger, and counted sums their hits
	// over the event sets before this one: the exact calls that anchor the
	// control-flow correction (callCounts).
	members []string
	counted map[string]uint64
	// partial: the counts per function do not cover the calls the log
	// weighs, since the counted functions changed after the first set or
	// another trigger ran.
	partial bool

	// What the counters panel shows; they outlive reset, being
	// measurements of the target rather than of one event set.
	timeline *correct.Timeline
	latency  correct.LatencyHist
	lastAt   map[stream]uint64 // time of a stream's previous probe sample
	// exact is, per node, the calls counted one by one under the exact
	// trigger: the reference the estimates are compared with.
	exact []float64
	// offNS, in wall mode, is each thread's time off the CPU so far: the
	// clock then runs while the thread is blocked, so a sample's interval
	// (delta) spans the waits since the one before, and the latency
	// correction discounts a sample taken after one, as it does samples
	// that wait for a yield point (design §4). nil in the other modes.
	offNS map[uint32]uint64
}

// densityBucket is the width of a bucket of the call-density timeline, and
// densityKeep how many it keeps (two minutes).
const (
	densityBucket = time.Second
	densityKeep   = 120
)

// newWeighing keeps at most logCap samples in its log (0: all).
func newWeighing(trigger string, event func(uint64) (sampler.EventRef, bool), logCap int) *weighing {
	return &weighing{
		trigger:  trigger,
		event:    event,
		streams:  map[stream]*streamState{},
		threads:  map[uint32]int32{},
		log:      correct.NewLog(logCap),
		timeline: correct.NewTimeline(uint64(densityBucket), densityKeep),
		lastAt:   map[stream]uint64{},
		ledger:   newCostLedger(),
	}
}

// reset forgets every stream's base: the event set was replaced and all
// counters restarted from zero.
func (w *weighing) reset(generation int) {
	w.foldCounted()
	if w.trigger != triggerTime {
		w.partial = true
	}
	w.runHits += w.totalHits()
	w.generation = generation
	clear(w.streams)
	clear(w.hits)
	clear(w.lastAt)
}

// streamState is what the weighing keeps of one stream between its
// samples, found with one map lookup a sample.
type streamState struct {
	thread correct.Thread // its intervals
	th     int32          // its thread's dense index
	prev   []uint64       // each member's last count
	// ids and refs are the event ids of its group read by the last
	// sample, in order, and what they are: a stream's group keeps its ids
	// until the event set is replaced (reset), so a sample's values are
	// looked up in the session's table of every event only when they
	// differ.
	ids  []uint64
	refs []sampler.EventRef
	ok   []bool
}

// stream is k's state, made on its first sample.
func (w *weighing) stream(k stream) *streamState {
	st := w.streams[k]
	if st == nil {
		// Events count from zero in a new thread (inherited) and from
		// their opening in a thread that existed: the first sample's
		// interval runs from there.
		st = &streamState{thread: correct.Thread{StartsAtZero: true}, th: w.threadIndex(k.tid)}
		w.streams[k] = st
	}
	return st
}

// ref is what the i-th value of a sample of st, with id, is.
func (w *weighing) ref(st *streamState, i int, id uint64) (sampler.EventRef, bool) {
	if i < len(st.ids) && st.ids[i] == id {
		return st.refs[i], st.ok[i]
	}
	ref, ok := w.event(id)
	if i == len(st.ids) {
		st.ids, st.refs, st.ok = append(st.ids, id), append(st.refs, ref), append(st.ok, ok)
	} else if i < len(st.ids) {
		st.ids[i], st.refs[i], st.ok[i] = id, ref, ok
	}
	return ref, ok
}

// addHits counts d hits of member m.
func (w *weighing) addHits(m int, d uint64) {
	for m >= len(w.hits) {
		w.hits = append(w.hits, 0)
	}
	w.hits[m] += d
}

func (w *weighing) threadIndex(tid uint32) int32 {
	if i, ok := w.threads[tid]; ok {
		return i
	}
	i := int32(len(w.tids))
	w.threads[tid] = i
	w.tids = append(w.tids, tid)
	return i
}

// add logs the sample r that landed in node.
func (w *weighing) add(r *sampler.Record, node cct.NodeID) {
	k := stream{r.TID, r.CPU}
	switch w.trigger {
	case triggerCalls, triggerExact:
		// The sample sits on a call event and stands for the Period calls
		// since the previous one: unbiased by construction.
		w.log.Append(correct.Entry{Node: int32(node), Thread: w.threadIndex(r.TID), Calls: float32(r.Period), Lambda: 0, Latency: -1})
		w.addHits(0, r.Period)
		if prev, ok := w.lastAt[k]; ok && r.Time > prev {
			// Over wall time between the stream's samples: the clock is
			// not sampled under this trigger.
			w.timeline.Add(r.TID, r.Time, float64(r.Period), float64(r.Time-prev))
		}
		w.lastAt[k] = r.Time
		if w.trigger == triggerExact && node >= 0 {
			for int(node) >= len(w.exact) {
				w.exact = append(w.exact, 0)
			}
			w.exact[node] += float64(r.Period)
		}
		return
	}
	rd := correct.Reading{Time: r.Time, Period: r.Period}
	st := w.stream(k)
	prev := st.prev
	for i, v := range r.Values {
		ref, ok := w.ref(st, i, v.ID)
		if !ok || ref.Group != 0 {
			continue
		}
		if ref.Member == 0 {
			rd.Leader = v.Value
			continue
		}
		rd.Calls += v.Value
		rd.HasCalls = true
		for len(prev) <= ref.Member {
			prev = append(prev, 0)
		}
		if v.Value >= prev[ref.Member] {
			d := v.Value - prev[ref.Member]
			w.addHits(ref.Member, d)
			if c := ref.Member - 1; c < len(w.costs) {
				w.ledger.addCost(r.Time, float64(d)*w.costs[c])
			}
		}
		prev[ref.Member] = v.Value
	}
	st.prev = prev
	if w.offNS != nil && rd.Leader > 0 {
		rd.Leader += w.offNS[r.TID]
	}
	// Enabled/Running stay 0: for a per-CPU event they also run while the
	// thread is on another CPU, which is not multiplexing, and scaling by
	// them would count those calls twice. Counters that fit the PMU are
	// not multiplexed.
	iv := st.thread.Next(rd)
	w.log.Append(correct.EntryOf(int32(node), st.th, iv))
	if iv.HasDelta {
		w.latency.Add(iv.Latency)
	}
	// Density per CPU time the thread actually ran: the leader's delta
	// where it was measured, the nominal period otherwise.
	over := iv.Lambda
	if iv.HasDelta && iv.Delta > 0 {
		over = iv.Delta
	}
	w.timeline.Add(r.TID, r.Time, iv.Calls, over)
	if w.offNS != nil {
		// In wall mode the leader's delta holds the time off the CPU.
		over = iv.Lambda
	}
	w.ledger.addCPU(r.Time, over)
}

// apply sets the tree's call estimates from the log: Calls under the
// density weight, CallsAdj under density and latency with alpha.
func (w *weighing) apply(t *cct.Tree, alpha float64) {
	t.ClearCalls()
	dens := correct.Params{Density: true}
	both := correct.Params{Density: true, Latency: true, Alpha: alpha}
	type key struct {
		node   int32
		thread int32
	}
	sums := map[key][2]float64{}
	for i := 0; i < w.log.Len(); i++ {
		e := w.log.At(i)
		if e.Node < 0 {
			continue
		}
		k := key{e.Node, e.Thread}
		s := sums[k]
		s[0] += correct.Weight(dens, float64(e.Calls), float64(e.Lambda), float64(e.Latency))
		s[1] += correct.Weight(both, float64(e.Calls), float64(e.Lambda), float64(e.Latency))
		sums[k] = s
	}
	for k, s := range sums {
		t.AddSelf(cct.NodeID(k.node), w.tids[k.thread], cct.Metrics{Calls: int64(math.Round(s[0])), CallsAdj: int64(math.Round(s[1]))})
	}
}

func (w *weighing) totalHits() uint64 {
	var n uint64
	for _, h := range w.hits {
		n += h
	}
	return n
}

// foldCounted adds the hits of the counters in force to counted, by function.
func (w *weighing) foldCounted() {
	for m, h := range w.hits {
		if m >= 1 && m <= len(w.members) && h > 0 {
			if w.counted == nil {
				w.counted = map[string]uint64{}
			}
			w.counted[w.members[m-1]] += h
		}
	}
}

// setMembers names the functions the counters now in force count, in
// member order, with what a hit of each costs; call it after reset when the
// event set changed.
func (w *weighing) setMembers(targets []hpm.Target, cost func(hpm.Target) time.Duration) {
	var m []string
	w.costs = w.costs[:0]
	for _, t := range targets {
		m = append(m, t.Func)
		w.costs = append(w.costs, float64(cost(t)))
	}
	if len(w.members) > 0 && !slices.Equal(m, w.members) {
		// A function counted for part of the run only would be anchored
		// to the calls of that part.
		w.partial = true
	}
	w.members = m
}

// callCounts is how many calls of each counted function the counters read
// over the run: nil when none were counted one by one per function (the
// calls and exact triggers count them all as one).
func (w *weighing) callCounts() map[string]float64 {
	if w.partial || w.log.Dropped() > 0 || w.trigger != triggerTime {
		// The counts and the weights the log keeps would not cover the
		// same calls.
		return nil
	}
	out := map[string]float64{}
	for f, n := range w.counted {
		out[f] += float64(n)
	}
	for m, h := range w.hits {
		if m >= 1 && m <= len(w.members) {
			out[w.members[m-1]] += float64(h)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
