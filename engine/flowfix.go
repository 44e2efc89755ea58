package engine

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/flow"
	"github.com/cctop/cctop/symbol"
)

// Control-flow correction of a profile's call frequencies (lee2007, issue
// 16): the call sites of one function in one calling context that FDOM
// relates bound each other's outflow, the weight of the samples taken in
// the functions they call, and contexts proven to be called equally often
// across the levels of the tree share their samples (issue 29). The
// correction is a weight per context (see pass, in flowpass.go). It reads
// machine code, so it runs off the sampling path: at the end of a
// recording, and for a live profile when a snapshot is published, with each
// function decoded once.

// flowFixer decodes and keeps the CFGs of the functions whose call sites a
// profile holds.
type flowFixer struct {
	files map[string]*symbol.CodeFile // by module path; nil: not readable
	funcs map[flowKey]*flowFunc       // by file (build ID) and function start
	stats flowStats
	// runs is the basic-block profile of the samples' branch stacks, nil
	// where the PMU records none; blocks its counts per function, for
	// one pass.
	runs   blockRuns
	blocks map[*flowFunc][]uint64
}

type flowKey struct {
	module string // the file's build ID, or its path without one
	start  uint64
}

// flowFunc is one decoded function: its CFG, the FDOM of its blocks, and
// its call sites by address for finding a sample's.
type flowFunc struct {
	cfg   *flow.CFG
	fdom  *flow.FDOM
	sites []flow.CallSite // by Addr
}

// flowStats says what the correction could use, for the summary.
type flowStats struct {
	Funcs        int            // functions decoded
	Conservative map[string]int // of them, by why
	Contexts     int            // calling contexts corrected
	Tied         int            // contexts tied across levels (flow.TieLevels)
	Classes      int            // the classes they form
	Predicted    int            // edges predicted where no sample fell
	Anchored     int            // counted functions anchored to their counts
	Dynamic      int            // of the contexts, those set by a block profile
	Decode       time.Duration  // time spent reading and decoding code
}

// String is the summary's line: what was decoded, what could not be
// followed and why, what was corrected.
func (s flowStats) String() string {
	var why []string
	for w, n := range s.Conservative {
		why = append(why, fmt.Sprintf("%d %s", n, w))
	}
	sort.Strings(why)
	out := fmt.Sprintf("%d functions decoded in %s", s.Funcs, s.Decode.Round(time.Millisecond))
	if len(why) > 0 {
		out += " (left as sampled: " + strings.Join(why, ", ") + ")"
	}
	out += fmt.Sprintf("; %d calling contexts corrected", s.Contexts)
	if s.Tied > 0 {
		out += fmt.Sprintf(", %d tied across levels in %d classes", s.Tied, s.Classes)
	}
	if s.Dynamic > 0 {
		out += fmt.Sprintf(" (%d by branch stacks' block profile)", s.Dynamic)
	}
	out += fmt.Sprintf(", %d edges predicted", s.Predicted)
	if s.Anchored > 0 {
		out += fmt.Sprintf(", %d counted functions anchored to their counts", s.Anchored)
	}
	return out
}

func newFlowFixer() *flowFixer {
	return &flowFixer{files: map[string]*symbol.CodeFile{}, funcs: map[flowKey]*flowFunc{},
		stats: flowStats{Conservative: map[string]int{}}}
}

// close closes the module files.
func (x *flowFixer) close() {
	for _, f := range x.files {
		if f != nil {
			f.Close()
		}
	}
}

// funcAt is the decoded function of module holding vaddr, nil where its
// code cannot be read.
func (x *flowFixer) funcAt(module string, vaddr uint64) *flowFunc {
	if !strings.HasPrefix(module, "/") {
		return nil // the kernel, the vdso, anonymous memory: no file
	}
	file, ok := x.files[module]
	if !ok {
		file, _ = symbol.OpenCode(module)
		x.files[module] = file
	}
	if file == nil {
		return nil
	}
	start, ok := file.FuncStart(vaddr)
	if !ok {
		return nil
	}
	// By build ID where the file has one: the same code mapped from
	// another path (a container's root, a copy) is decoded once.
	k := flowKey{module, start}
	if len(file.BuildID) > 0 {
		k.module = "build-id:" + string(file.BuildID)
	}
	if f, ok := x.funcs[k]; ok {
		return f // nil too: its code could not be read
	}
	t0 := time.Now()
	defer func() { x.stats.Decode += time.Since(t0) }()
	fc, ok := file.Func(start)
	if !ok {
		x.funcs[k] = nil
		return nil
	}
	noReturn := func(target uint64) bool { return flow.NoReturnName(file.NameAt(target)) }
	g := flow.Decode(file.Arch, fc.Code, fc.Start, noReturn)
	f := &flowFunc{cfg: g, fdom: flow.NewFDOM(g)}
	for _, b := range g.Blocks {
		f.sites = append(f.sites, b.Calls...)
	}
	sort.Slice(f.sites, func(i, j int) bool { return f.sites[i].Addr < f.sites[j].Addr })
	x.funcs[k] = f
	x.stats.Funcs++
	if g.Conservative {
		why, _, _ := strings.Cut(g.Why, " at 0x")
		x.stats.Conservative[why]++
	}
	return f
}

// site is the index in f.sites of the call instruction holding pc (a
// return address stepped back into its call), -1 for none.
func (f *flowFunc) site(pc uint64) int {
	i := sort.Search(len(f.sites), func(i int) bool { return f.sites[i].Ret > pc })
	if i < len(f.sites) && f.sites[i].Addr <= pc {
		return i
	}
	return -1
}

// beginPass readies x for one correction of a profile, runs being its
// branch stacks' runs (nil: none): the block counts and what the last pass
// did are forgotten; the decoded functions, and their count, stay.
func (x *flowFixer) beginPass(runs blockRuns) {
	x.runs, x.blocks = runs, nil
	x.stats.Contexts, x.stats.Predicted, x.stats.Anchored, x.stats.Dynamic = 0, 0, 0, 0
	x.stats.Tied, x.stats.Classes = 0, 0
}

// blockCounts is f's basic-block profile from the branch stacks' runs, nil
// without one.
func (x *flowFixer) blockCounts(module string, f *flowFunc) []uint64 {
	if x.runs == nil {
		return nil
	}
	if c, ok := x.blocks[f]; ok {
		return c
	}
	if x.blocks == nil {
		x.blocks = map[*flowFunc][]uint64{}
	}
	c := x.runs.blockCounts(module, f.cfg)
	x.blocks[f] = c
	return c
}

// predictedEdge is a call FDOM says ran although no sample fell under it.
type predictedEdge struct {
	parent cct.NodeID // the calling context
	node   cct.NodeID // the callee's context where the tree has it, else NoNode
	site   uint64     // the call instruction, in the caller's module
	callee string     // the direct target's name
	module string
	weight float64 // in the weights' unit
}

// flowCalls is the control-flow-corrected calls of every context of t
// (pass): from self (what each context weighs: its density-weighted calls,
// or its samples), tied contexts sharing their class's weight and the
// others scaled by their call site's factor; the predicted edges, each
// added to t by add as a context of its own (nodes t did not have are
// appended); and, with counts (the calls a counter read of each counted
// function), every counted function anchored to its count (anchor), and
// the value of its tied contexts carried to the uncounted members of their
// classes (anchorClasses). The result is as long as t then.
func (x *flowFixer) flowCalls(t *cct.Tree, self []float64, counts map[string]float64, add func(predictedEdge) (cct.NodeID, bool)) []float64 {
	p := x.pass(t, self)
	w, fixed := p.w, p.bound
	for _, e := range p.predicted {
		if e.weight <= 0 {
			continue
		}
		id, ok := add(e)
		if !ok {
			continue
		}
		for int(id) >= len(w) {
			w = append(w, 0)
		}
		w[id] += e.weight
		for int(id) >= len(fixed) {
			fixed = append(fixed, false)
		}
		fixed[id] = true
	}
	for len(w) < t.Len() {
		w = append(w, 0)
	}
	if len(counts) > 0 {
		x.stats.Anchored += anchor(t, w, fixed, counts)
		anchorClasses(t, w, p.class, counts)
	}
	return w
}

// anchor makes the corrected calls of each counted function add up to the
// calls its counter read: lee2007's interprocedural correction, which
// scales a method's call sites by its invocation counter. Where the
// contexts' calls fall short of the count, the calls missing are ones that
// took no sample of their own: a timer sample counts for the function on
// top of the stack, so a call that only calls on (a recursion's inner
// levels) leaves its context weighing little or nothing although time was
// spent under it. They go to the function's contexts in proportion to that
// time, the time under each but not in it; contexts whose call site FDOM
// bound to another, or tied across levels (fixed), keep what the relation
// set, unless all of the function's contexts are fixed and weigh nothing.
// Which context made how many of them is not known, only their total is.
// Where the contexts' calls exceed the count, they are scaled down to it.
// Inlined frames are not calls the counter saw. It reports how many
// functions it anchored.
func anchor(t *cct.Tree, w []float64, fixed []bool, counts map[string]float64) int {
	byFunc := map[string][]cct.NodeID{}
	for id := 1; id < t.Len() && id < len(w); id++ {
		node := t.Node(cct.NodeID(id))
		if node.Inlined {
			continue
		}
		name := t.Func(node.Func).Name
		if _, ok := counts[name]; ok {
			byFunc[name] = append(byFunc[name], cct.NodeID(id))
		}
	}
	passing := func(id cct.NodeID) float64 {
		n := t.Node(id)
		if n.Total.Time > 0 {
			return float64(n.Total.Time - n.Self.Time)
		}
		return float64(n.Total.Samples - n.Self.Samples)
	}
	n := 0
	for name, ids := range byFunc {
		c := counts[name]
		if !(c >= 0) || math.IsInf(c, 0) {
			continue
		}
		var have, spread, under float64
		for _, id := range ids {
			have += w[id]
			under += max(passing(id), 0)
			if int(id) >= len(fixed) || !fixed[id] {
				spread += max(passing(id), 0)
			}
		}
		switch {
		case c > have && spread > 0:
			for _, id := range ids {
				if int(id) >= len(fixed) || !fixed[id] {
					w[id] += (c - have) * max(passing(id), 0) / spread
				}
			}
		case have > 0:
			for _, id := range ids {
				w[id] *= c / have
			}
		case under > 0:
			// Nothing weighs anything, and every context is bound (a
			// class of contexts that only call on shares no sample):
			// the relation set nothing, so the count goes by time, as
			// to unbound contexts.
			for _, id := range ids {
				w[id] = c * max(passing(id), 0) / under
			}
		default:
			continue
		}
		n++
	}
	return n
}

// anchorClasses carries the counts to the contexts tied to counted ones
// (class, per node, from flow.TieLevels): in a class with members of
// counted functions, already anchored in w, the other members take their
// mean. Those are proven to be called as often, and a count is a
// measurement where the class's value was an estimate from samples.
// Members of counted functions keep their own anchored values: the counts
// take precedence.
func anchorClasses(t *cct.Tree, w []float64, class []int, counts map[string]float64) {
	classes := 0
	for _, k := range class {
		classes = max(classes, k+1)
	}
	if classes == 0 {
		return
	}
	counted := func(id int) bool {
		c, ok := counts[t.Func(t.Node(cct.NodeID(id)).Func).Name]
		return ok && c >= 0 && !math.IsInf(c, 0)
	}
	sum, n := make([]float64, classes), make([]int, classes)
	for id, k := range class {
		if k >= 0 && id < len(w) && counted(id) {
			sum[k] += w[id]
			n[k]++
		}
	}
	for id, k := range class {
		if k >= 0 && n[k] > 0 && id < len(w) && !counted(id) {
			w[id] = sum[k] / float64(n[k])
		}
	}
}

// applyFlow sets the tree's calls_flow (flowCalls) per thread: a context's
// corrected calls split among its threads as its own weight is, and those
// of a context that weighed nothing (a predicted edge, an anchored inner
// level) given to a thread that ran under it. It reports what the
// correction could use.
func (b *builder) applyFlow() flowStats {
	t := b.tree
	useCalls := t.Total().Calls > 0
	base := func(m cct.Metrics) float64 {
		if useCalls {
			return float64(m.Calls)
		}
		return float64(m.Samples)
	}
	n := t.Len()
	self := selfOf(t, func(m cct.Metrics) int64 {
		if useCalls {
			return m.Calls
		}
		return m.Samples
	})
	var counts map[string]float64
	if useCalls && b.weights != nil {
		counts = b.weights.callCounts()
	}
	x := newFlowFixer()
	defer x.close()
	x.beginPass(b.placeBranchRuns())
	w := x.flowCalls(t, self, counts, b.addPredicted)
	for i := 1; i < len(w); i++ {
		id := cct.NodeID(i)
		if w[i] <= 0 {
			continue
		}
		if i < n && self[i] > 0 {
			for _, th := range t.Threads(id) {
				if v := math.Round(base(th.Self) * w[i] / self[i]); v > 0 {
					t.AddSelf(id, th.TID, cct.Metrics{CallsFlow: int64(v)})
				}
			}
			continue
		}
		if v := math.Round(w[i]); v > 0 {
			t.AddSelf(id, sampledThread(t, id), cct.Metrics{CallsFlow: int64(v)})
		}
	}
	return x.stats
}

// addPredicted adds the context of predicted edge e to the builder's tree,
// weighing nothing yet, on a thread that ran its caller, and returns it.
func (b *builder) addPredicted(e predictedEdge) (cct.NodeID, bool) {
	return addPredictedTo(b.tree, e, func() cct.FuncID { return b.intern(symbol.Frame{Func: e.callee, Module: e.module}) },
		func() uint32 { return sampledThread(b.tree, e.parent) })
}

// addPredictedTo adds the context of predicted edge e to t, weighing
// nothing yet, and returns it: the callee's context where t has it, else a
// new one for callee (its FuncID in t) under the caller's, on thread tid.
func addPredictedTo(t *cct.Tree, e predictedEdge, callee func() cct.FuncID, tid func() uint32) (cct.NodeID, bool) {
	if e.node != cct.NoNode {
		return e.node, true
	}
	stack := t.Stack(e.parent)
	if len(stack) == 0 {
		return 0, false
	}
	// The caller's frame calls from the predicted site.
	stack[0].Addr = e.site
	leaf := cct.Frame{Func: callee()}
	return t.Add(append([]cct.Frame{leaf}, stack...), tid(), cct.Metrics{}), true
}

// sampledThread is a thread with samples at or under id, the first found
// breadth first: a predicted edge is labelled with a thread that ran its
// caller there.
func sampledThread(t *cct.Tree, id cct.NodeID) uint32 {
	queue := []cct.NodeID{id}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if th := t.Threads(n); len(th) > 0 {
			return th[0].TID
		}
		queue = append(queue, t.Children(n)...)
	}
	return 0
}
