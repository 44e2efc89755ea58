package cct

// BottomUp returns the inverted tree: its roots are the functions samples ended in, and the
// children of a node are its callers. Each context's per-thread self metrics are added
// along its reversed path, so in the inverted tree Total of a node counts the samples whose
// stack, read from the leaf, starts with the node's path: the Total of a root is that
// function's self. Self lands on the outermost caller and is rarely what a view wants.
//
// A node's CallSite, Line and Inlined describe the edge from its parent (the callee) to it,
// as in the top-down tree: the address in this caller where the callee was called.
// FuncIDs are the same as in t.
func (t *Tree) BottomUp() *Tree {
	r := t.emptyCopy()
	for id := range t.nodes {
		n := &t.nodes[id]
		if n.firstThread < 0 {
			continue
		}
		inv := NodeID(0)
		if id != 0 {
			inv = r.child(0, n.Func, 0, 0, false)
			for c := NodeID(id); t.nodes[c].Parent > 0; c = t.nodes[c].Parent {
				cn := &t.nodes[c]
				inv = r.child(inv, t.nodes[cn.Parent].Func, cn.CallSite, cn.Line, cn.Inlined)
			}
		}
		for i := n.firstThread; i >= 0; i = t.threads[i].next {
			r.addSelf(inv, t.threads[i].tid, t.threads[i].m)
		}
	}
	return r
}
