package engine

import (
	"cmp"
	"slices"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/flow"
)

// flowPass is one control-flow correction of a tree, per node: its
// corrected weight; whether a relation set it (anchor then leaves it
// alone); and its class of contexts tied across levels (flow.TieLevels),
// -1 for none. And the edges predicted where no sample fell.
type flowPass struct {
	w         []float64
	bound     []bool
	class     []int
	predicted []predictedEdge
}

// flowContext is a calling context whose function's code was decoded and
// followed, with its children grouped by the call site that called them.
type flowContext struct {
	id     cct.NodeID
	f      *flowFunc
	module string
	groups []siteGroup // by site
}

type siteGroup struct {
	site     int // index in f.sites
	children []cct.NodeID
	outflow  float64 // their sampled weight
}

// find is where call site s's group is in c.groups, or would go.
func (c *flowContext) find(s int) (int, bool) {
	return slices.BinarySearchFunc(c.groups, s, func(g siteGroup, s int) int { return cmp.Compare(g.site, s) })
}

// group is the group of call site s, nil for none.
func (c *flowContext) group(s int) *siteGroup {
	if i, ok := c.find(s); ok {
		return &c.groups[i]
	}
	return nil
}

// pass is the control-flow correction of tree t whose nodes weigh self
// (their own samples' weights), in two steps.
//
// A sample is a call of the function it was taken in, made from that
// function's call site in its caller: lee2007's sampled DCG, where a timer
// sample counts for the edge on top of the stack. So the outflow of a call
// site in one calling context is the self weight of the children called
// from it.
//
// First the relations between levels (flow.TieLevels): contexts proven to
// be called equally often, a callee through its caller's once-per-call
// site or siblings through sites FDOM relates both ways, are closed into
// classes, and each class shares its sampled total equally. This is what
// gives a context that only calls on, and so took no sample of its own,
// its calls.
//
// Then lee2007's correction of each context's call sites, as before, with
// the sites whose callee is in a class as anchors at the class's value:
// FDOM's inequalities bound the other sites against them, and those are
// raised, rescaled and predicted as the per-method rule says. Their factor
// scales their children's self weights only: the samples deeper down count
// for their own edges, corrected in their own contexts.
//
// Contexts whose function's code cannot be read or followed keep their
// weight and tie none of their callees, as do call sites in code inlined
// into them.
func (x *flowFixer) pass(t *cct.Tree, self []float64) flowPass {
	n := t.Len()
	weight := func(id cct.NodeID) float64 {
		if int(id) < len(self) {
			return self[id]
		}
		return 0
	}
	ctxs := make([]flow.Context, n)
	var decoded []flowContext
	for id := range cct.NodeID(n) {
		// NoNode, the root's parent, is -1.
		ctxs[id].Parent, ctxs[id].Weight = int(t.Node(id).Parent), weight(id)
	}
	for id := range cct.NodeID(n) {
		node := t.Node(id)
		if node.Parent == cct.NoNode {
			continue
		}
		kids := t.Children(id)
		if len(kids) == 0 {
			continue
		}
		fn := t.Func(node.Func)
		c := flowContext{id: id, module: fn.Module}
		for _, k := range kids {
			kn := t.Node(k)
			if kn.Inlined || kn.CallSite == 0 {
				// Code inlined here makes its calls from this function's
				// code under another node: left as sampled.
				continue
			}
			if c.f == nil {
				if c.f = x.funcAt(fn.Module, kn.CallSite); c.f == nil || c.f.cfg.Conservative {
					break
				}
			}
			s := c.f.site(kn.CallSite)
			if s < 0 {
				continue
			}
			i, ok := c.find(s)
			if !ok {
				c.groups = slices.Insert(c.groups, i, siteGroup{site: s})
			}
			g := &c.groups[i]
			g.children = append(g.children, k)
			g.outflow += weight(k)
		}
		if c.f == nil || c.f.cfg.Conservative {
			continue
		}
		decoded = append(decoded, c)
		// The code is this context's own function's only where the frame
		// is not inlined and the file names the code as the tree does:
		// only then do its blocks say how often it calls per call.
		file := x.files[fn.Module]
		if !node.Inlined && file.NameAt(c.f.cfg.Start) == fn.LinkName() {
			ctxs[id].FDOM = c.f.fdom
		}
		for _, g := range c.groups {
			s := c.f.sites[g.site]
			for _, k := range g.children {
				ctxs[k].Site = s
				ctxs[k].Direct = s.Target != 0 && file.NameAt(s.Target) == t.Func(t.Node(k).Func).LinkName()
			}
		}
	}

	lv := flow.TieLevels(ctxs)
	p := flowPass{w: lv.Weight, bound: make([]bool, n), class: lv.Class}
	for i, k := range lv.Class {
		if k >= 0 {
			p.bound[i] = true
			x.stats.Tied++
		}
	}
	x.stats.Classes += lv.Classes

	for _, c := range decoded {
		x.correctContext(t, &c, self, &p)
	}
	return p
}

// correctContext applies lee2007's correction to the call sites of one
// context c, the sites whose callees are tied (p.class) anchored at their
// value: the weights of the children of its other sites are scaled in p.w,
// and the edges it predicts are added to p.predicted.
func (x *flowFixer) correctContext(t *cct.Tree, c *flowContext, self []float64, p *flowPass) {
	f := c.f
	// Every call site of the function takes part: those without samples
	// may be predicted.
	sites := make([]flow.SiteFlow, len(f.sites))
	for i, s := range f.sites {
		sites[i].Site = s
	}
	run := false
	for _, g := range c.groups {
		sf := &sites[g.site]
		sf.Outflow = g.outflow
		run = run || g.outflow > 0
		for _, k := range g.children {
			if p.class[k] >= 0 {
				sf.Exact = true
			}
		}
		if sf.Exact {
			// The site's outflow is its callees' values: a class's for
			// those tied, their own for the others (an indirect site's).
			for _, k := range g.children {
				sf.Count += p.w[k]
			}
			run = run || sf.Count > 0
		}
	}
	if !run {
		return
	}
	fn := t.Func(t.Node(c.id).Func)
	corr := flow.Correction{Skipped: "no block profile"}
	if counts := x.blockCounts(fn.Module, f); counts != nil {
		if corr = flow.DynamicOutflowCorrection(f.cfg, sites, counts); corr.Skipped == "" {
			x.stats.Dynamic++
		}
	}
	if corr.Skipped != "" {
		corr = flow.FDOMOutflowCorrection(f.fdom, sites)
	}
	if corr.Skipped != "" {
		return
	}
	x.stats.Contexts++
	for _, g := range c.groups {
		if sites[g.site].Exact {
			continue // p.w holds the class's value
		}
		if fac := corr.Factor[g.site]; fac == fac { // not NaN
			for _, k := range g.children {
				if int(k) < len(self) {
					p.w[k] = self[k] * fac
				}
			}
		}
		if corr.Bound[g.site] {
			for _, k := range g.children {
				p.bound[k] = true
			}
		}
	}
	for _, e := range corr.New {
		if sites[e.Site].Exact {
			continue
		}
		name := ""
		if file := x.files[c.module]; file != nil {
			name = file.NameAt(e.Target)
		}
		if name == "" {
			continue
		}
		pe := predictedEdge{parent: c.id, node: cct.NoNode, site: e.Addr, callee: name, module: c.module, weight: e.Weight}
		if g := c.group(e.Site); g != nil {
			// The callee's context is there, weighing nothing: calls
			// made under it took the samples.
			pe.node = g.children[0]
			for _, k := range g.children {
				if t.Func(t.Node(k).Func).Name == name {
					pe.node = k
					break
				}
			}
		}
		p.predicted = append(p.predicted, pe)
		x.stats.Predicted++
	}
}
