package cct

// Merge adds o's contexts, with their per-thread self metrics, into t. o's functions are
// re-interned into t, so the trees need not share FuncIDs. o is not changed.
func (t *Tree) Merge(o *Tree) {
	if o == t {
		o = t.Clone()
	}
	t.absorb(o, t.internAll(o), nil, false)
}

// MergeShape adds o's contexts into t without their metrics: a context only o has is in t,
// with nothing in it. A diff against a base shows what the base had and t lacks so.
func (t *Tree) MergeShape(o *Tree) {
	t.absorb(o, t.internAll(o), nil, true)
}

// internAll interns o's functions into t: the map from o's FuncIDs to t's.
func (t *Tree) internAll(o *Tree) []FuncID {
	funcMap := make([]FuncID, len(o.funcs))
	for i := 1; i < len(o.funcs); i++ {
		funcMap[i] = t.Intern(o.funcs[i])
	}
	return funcMap
}

// FilterThreads returns a new tree with only the samples of the threads keep accepts.
// Contexts left without samples are dropped. FuncIDs stay the same as in t.
func (t *Tree) FilterThreads(keep func(tid uint32) bool) *Tree {
	r := t.emptyCopy()
	funcMap := make([]FuncID, len(t.funcs))
	for i := range funcMap {
		funcMap[i] = FuncID(i)
	}
	r.absorb(t, funcMap, keep, false)
	return r
}

// emptyCopy is a tree with t's functions (same IDs) and no samples.
func (t *Tree) emptyCopy() *Tree {
	r := New()
	for _, f := range t.funcs[1:] {
		r.Intern(f)
	}
	return r
}

// absorb adds into t every per-thread self of o accepted by keep (nil: all), mapping o's
// functions through funcMap. Totals are rebuilt from the selfs rather than copied, so that
// filtering stays consistent; nodes are created only for contexts that receive samples.
// With shape, the contexts are made and nothing is added to them.
func (t *Tree) absorb(o *Tree, funcMap []FuncID, keep func(uint32) bool, shape bool) {
	nodeMap := make([]NodeID, len(o.nodes))
	for i := range nodeMap {
		nodeMap[i] = NoNode
	}
	nodeMap[0] = 0
	var pending []NodeID
	mapNode := func(id NodeID) NodeID {
		pending = pending[:0]
		x := id
		for nodeMap[x] == NoNode {
			pending = append(pending, x)
			x = o.nodes[x].Parent
		}
		for i := len(pending) - 1; i >= 0; i-- {
			on := &o.nodes[pending[i]]
			nodeMap[pending[i]] = t.child(nodeMap[on.Parent], funcMap[on.Func], on.CallSite, on.Line, on.Inlined)
		}
		return nodeMap[id]
	}
	for id := range o.nodes {
		on := &o.nodes[id]
		for i := on.firstThread; i >= 0; i = o.threads[i].next {
			ts := &o.threads[i]
			if keep != nil && !keep(ts.tid) {
				continue
			}
			tn := mapNode(NodeID(id))
			if shape {
				continue
			}
			if on.hasLeaf {
				t.setLeaf(tn, on.leafAddr, on.leafLine)
			}
			t.copyAddrs(t.addSelf(tn, ts.tid, ts.m), o, i)
		}
	}
}
