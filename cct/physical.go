package cct

// Physical returns the tree as a profiler that knows nothing of inlining would see it:
// one node per physical frame, a machine-code function that was really on the stack.
// It also returns, for every node of t, the node of the physical tree it was merged
// into, so that per-node weights kept beside t (a view's metric, a comparison mapped
// onto t) can be summed onto the physical tree the same way.
//
// A node with Inlined set was inlined into its parent: its code is part of the parent
// frame's function, at the parent's pc (see Frame and FromProfile, where all but the
// last line of a pprof location are inlined). So the physical frame of a node is its
// nearest ancestor-or-self that is not inlined, and in the physical tree
//
//	P → A (inlined) → B (inlined) → C
//
// becomes P → C: the selfs of A and B (samples whose pc was in their inlined code) are
// P's self, and C hangs under P. C keeps its call site, which is already an address in
// P (inlined frames share the pc of their outer frame); its line becomes A's, the line
// in P's source where the inlined chain starts, which is what P's file and a
// non-inlining symbolizer say about that address. Children that come to share a key
// under the physical frame merge, their metrics and per-thread selfs summed.
//
// An inlined child of the root or of [truncated] has no outer frame to merge into (its
// stack was cut short above it, and [truncated] stands for the missing frames, not for
// a function): it stays a node, still marked inlined, and what was inlined into it
// merges into it.
//
// FuncIDs are the same as in t; t is not changed. The result has no inlined node below
// the root's children, so Physical of a physical tree is the same tree.
func (t *Tree) Physical() (*Tree, []NodeID) {
	r := t.emptyCopy()
	of := make([]NodeID, len(t.nodes))
	// line[id] is, for a node merged into its physical frame, the line in that frame's
	// function where the inlined chain leading to id starts.
	line := make([]int, len(t.nodes))
	merged := make([]bool, len(t.nodes))
	for id := 1; id < len(t.nodes); id++ {
		n := &t.nodes[id]
		p := n.Parent
		site := n.Line
		if merged[p] {
			site = line[p]
		}
		if n.Inlined && p != 0 && t.funcs[t.nodes[p].Func].Name != TruncatedName {
			of[id], merged[id], line[id] = of[p], true, site
			continue
		}
		of[id] = r.child(of[p], n.Func, n.CallSite, site, n.Inlined)
	}
	for id := range t.nodes {
		n := &t.nodes[id]
		if n.hasLeaf {
			leafLine := n.leafLine
			if merged[id] {
				// The pc is in the physical frame, at the line the inlined chain starts.
				leafLine = line[id]
			}
			r.setLeaf(of[id], n.leafAddr, leafLine)
		}
		for i := n.firstThread; i >= 0; i = t.threads[i].next {
			r.addSelf(of[id], t.threads[i].tid, t.threads[i].m)
		}
	}
	return r, of
}

// HasInlined reports whether any context of t is an inlined frame: without one, the
// physical tree is t itself.
func (t *Tree) HasInlined() bool {
	for i := range t.nodes {
		if t.nodes[i].Inlined {
			return true
		}
	}
	return false
}
