package engine

import (
	"maps"
	"sync/atomic"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/tui"
)

// Control-flow correction of the live profile. Decoding the functions of a
// large binary takes a second or more the first time, and even with every
// CFG cached a pass over the tree is not free: so it never runs on the
// goroutine that reads batches and publishes snapshots. A job corrects a
// copy of the tree on a goroutine of its own, at most once per
// flowInterval; the snapshots in between show the last result, with the
// contexts that appeared since at their uncorrected weight.

// flowInterval is how often a live profile is corrected anew while flow
// correction is shown.
const flowInterval = time.Second

// liveFlow is the live profile's flow correction: the job in flight and
// the last result, in the live tree's node ids.
type liveFlow struct {
	x       *flowFixer // the jobs' CFG cache: one job at a time uses it
	running bool
	done    chan flowJob // the finished job, capacity 1
	ready   atomic.Bool  // a job finished: the next tick publishes
	wake    func()       // brings the next tick now (the session's Wake)
	started time.Time
	// fromSamples: the last job corrected samples, no call being counted:
	// its calls are relative frequencies.
	fromSamples bool

	// The last result applied to the live tree.
	tree  *cct.Tree // the tree it is of, and its reshaped count then (folds, JIT renames)
	folds int
	w     []float64              // per node of tree, up to the tree's length then
	extra map[cct.NodeID]float64 // the contexts it added to the tree
	stats flowStats
}

// flowJob is one correction of a copy of the live tree.
type flowJob struct {
	tree  *cct.Tree // the live tree it copied, its folds and length then
	folds int
	n     int
	w     []float64       // per node of the copy
	added []predictedEdge // the contexts the copy gained, at w[addedAt[i]]
	at    []cct.NodeID
	stats flowStats
}

func newLiveFlow() *liveFlow {
	return &liveFlow{x: newFlowFixer(), done: make(chan flowJob, 1)}
}

// close ends with the job in flight, if any, and the files it reads.
func (f *liveFlow) close() {
	if f.running {
		<-f.done
		f.running = false
	}
	f.x.close()
}

// start corrects a copy of the live tree with base (per node: what each
// context weighs) and the counted functions' calls, on a goroutine, unless
// a job runs or the last one started less than flowInterval ago.
func (f *liveFlow) start(b *builder, base []float64, counts map[string]float64, fromSamples bool) {
	if f.running || time.Since(f.started) < flowInterval {
		return
	}
	f.fromSamples = fromSamples
	f.running, f.started = true, time.Now()
	// While no job runs: the runs are the jobs' to read.
	f.x.beginPass(b.placeBranchRuns())
	job := flowJob{tree: b.tree, folds: b.reshaped, n: b.tree.Len()}
	c := b.tree.Clone()
	base = append([]float64(nil), base...)
	go func() {
		added := func(e predictedEdge) (cct.NodeID, bool) {
			id, ok := addPredictedTo(c, e, func() cct.FuncID { return c.Intern(cct.Func{Name: e.callee, Module: e.module}) },
				func() uint32 { return 0 })
			if ok && int(id) >= job.n {
				job.added, job.at = append(job.added, e), append(job.at, id)
			}
			return id, ok
		}
		job.w = f.x.flowCalls(c, base, counts, added)
		job.stats = f.x.stats
		job.stats.Conservative = maps.Clone(f.x.stats.Conservative)
		f.done <- job
		f.ready.Store(true)
		if f.wake != nil {
			f.wake()
		}
	}()
}

// collect applies a finished job to the live tree of b: the contexts its
// copy gained are added, and its weights kept in the live tree's ids. A job
// of a tree since replaced, folded or renamed (builder.reshaped) is dropped.
func (f *liveFlow) collect(b *builder) {
	if !f.running {
		return
	}
	var job flowJob
	select {
	case job = <-f.done:
	default:
		return
	}
	f.running = false
	f.ready.Store(false)
	if job.tree != b.tree || job.folds != b.reshaped {
		return
	}
	extra := map[cct.NodeID]float64{}
	for i, e := range job.added {
		if id, ok := b.addPredicted(e); ok {
			extra[id] += job.w[job.at[i]]
		}
	}
	f.tree, f.folds, f.w, f.extra, f.stats = b.tree, b.reshaped, job.w[:job.n], extra, job.stats
}

// weights is the corrected calls per node of b's tree: the last result,
// and base where it has none (contexts newer than it), nil when there is
// no result for this tree yet.
func (f *liveFlow) weights(b *builder, base []float64) []float64 {
	if f.tree != b.tree || f.folds != b.reshaped || f.w == nil {
		return nil
	}
	out := make([]float64, b.tree.Len())
	copy(out, base)
	copy(out, f.w)
	for id, v := range f.extra {
		if int(id) < len(out) {
			out[id] = v
		}
	}
	return out
}

// collectFlow takes a finished correction into the live tree, and says
// what the first one could use.
func (l *Live) collectFlow() {
	first := l.flow.tree == nil
	l.flow.collect(l.b)
	if first && l.flow.tree != nil {
		text := "flow correction: " + l.flow.stats.String()
		if l.flow.fromSamples {
			text += "; no call counted: the calls are the samples' relative frequencies"
		}
		l.send(tui.StatusMsg{Text: text})
	}
}
