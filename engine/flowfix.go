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
// the functions they call. The correction is a factor per call site, which
// scales those samples (see factors). It reads
// machine code, so it runs off the sampling path: at the end of a
// recording, and for a live profile when a snapshot is published, with each
// function decoded once.

// flowFixer decodes and keeps the CFGs of the functions whose call sites a
// profile holds.
type flowFixer struct {
	files map[string]*symbol.CodeFile // by module path; nil: not readable
	funcs map[flowKey]*flowFunc       // by module and function start
	stats flowStats
}

type flowKey struct {
	module string
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
	Predicted    int            // edges predicted where no sample fell
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
	return out + fmt.Sprintf("; %d calling contexts corrected, %d edges predicted (calls_flow/count)", s.Contexts, s.Predicted)
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
	k := flowKey{module, start}
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

// predictedEdge is a call FDOM says ran although no sample fell under it.
type predictedEdge struct {
	parent cct.NodeID // the calling context
	site   uint64     // the call instruction, in the caller's module
	callee string     // the direct target's name
	module string
	weight float64 // in the weights' unit
}

// factors is the control-flow correction of tree t whose nodes weigh self
// (their own samples' weights): per node, the factor that scales its self
// weight, and the edges predicted where no sample fell.
//
// A sample is a call of the function it was taken in, made from that
// function's call site in its caller: lee2007's sampled DCG, where a timer
// sample counts for the edge on top of the stack. So the outflow of a call
// site in one calling context is the self weight of the children called
// from it, and its factor scales those self weights only: the samples
// deeper down count for their own edges, corrected in their own contexts.
// Contexts whose function's code cannot be read or followed keep factor 1,
// as do call sites in code inlined into them.
func (x *flowFixer) factors(t *cct.Tree, self []float64) ([]float64, []predictedEdge) {
	n := t.Len()
	factor := make([]float64, n)
	for i := range factor {
		factor[i] = 1
	}
	weight := func(id cct.NodeID) float64 {
		if int(id) < len(self) {
			return self[id]
		}
		return 0
	}
	var predicted []predictedEdge
	type group struct {
		site     int
		children []cct.NodeID
		outflow  float64
	}
	var groups []group
	bySite := map[int]int{}
	for id := 0; id < n; id++ {
		nid := cct.NodeID(id)
		node := t.Node(nid)
		kids := t.Children(nid)
		if len(kids) == 0 || node.Parent == cct.NoNode {
			continue
		}
		fn := t.Func(node.Func)
		var f *flowFunc
		sampled := false
		groups = groups[:0]
		clear(bySite)
		for _, k := range kids {
			kn := t.Node(k)
			if kn.Inlined || kn.CallSite == 0 {
				// Code inlined here makes its calls from this function's
				// code under another node: left as sampled.
				continue
			}
			if f == nil {
				if f = x.funcAt(fn.Module, kn.CallSite); f == nil || f.cfg.Conservative {
					break
				}
			}
			s := f.site(kn.CallSite)
			if s < 0 {
				continue
			}
			gi, ok := bySite[s]
			if !ok {
				gi = len(groups)
				bySite[s] = gi
				groups = append(groups, group{site: s})
			}
			groups[gi].children = append(groups[gi].children, k)
			groups[gi].outflow += weight(k)
			sampled = sampled || weight(k) > 0
		}
		if f == nil || f.cfg.Conservative || !sampled {
			continue
		}
		// Every call site of the function takes part: those without
		// samples may be predicted.
		sites := make([]flow.SiteFlow, len(f.sites))
		for i, s := range f.sites {
			sites[i].Site = s
		}
		for _, g := range groups {
			sites[g.site].Outflow = g.outflow
		}
		c := flow.FDOMOutflowCorrection(f.fdom, sites)
		if c.Skipped != "" {
			continue
		}
		x.stats.Contexts++
		for _, g := range groups {
			if fac := c.Factor[g.site]; fac == fac { // not NaN
				for _, k := range g.children {
					factor[k] = fac
				}
			}
		}
		for _, e := range c.New {
			name := ""
			if file := x.files[fn.Module]; file != nil {
				name = file.NameAt(e.Target)
			}
			if name == "" {
				continue
			}
			predicted = append(predicted, predictedEdge{parent: nid, site: e.Addr, callee: name, module: fn.Module, weight: e.Weight})
			x.stats.Predicted++
		}
	}
	return factor, predicted
}

// applyFlow sets the tree's calls_flow: every context's calls (the density
// weights when calls were counted, else its samples) times its factor, per
// thread, and a context for every predicted edge. It reports what the
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
	self := make([]float64, n)
	for i := range self {
		self[i] = base(t.Node(cct.NodeID(i)).Self)
	}
	x := newFlowFixer()
	defer x.close()
	factor, predicted := x.factors(t, self)
	for i := 1; i < n; i++ {
		id := cct.NodeID(i)
		for _, th := range t.Threads(id) {
			if v := math.Round(base(th.Self) * factor[i]); v > 0 {
				t.AddSelf(id, th.TID, cct.Metrics{CallsFlow: int64(v)})
			}
		}
	}
	for _, e := range predicted {
		w := math.Round(e.weight)
		if w <= 0 {
			continue
		}
		stack := t.Stack(e.parent)
		if len(stack) == 0 {
			continue
		}
		// The caller's frame calls from the predicted site.
		stack[0].Addr = e.site
		leaf := cct.Frame{Func: b.intern(symbol.Frame{Func: e.callee, Module: e.module})}
		t.Add(append([]cct.Frame{leaf}, stack...), sampledThread(t, e.parent), cct.Metrics{CallsFlow: int64(w)})
	}
	return x.stats
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
