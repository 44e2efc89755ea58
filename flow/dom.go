package flow

// digraph holds a graph's edges in compressed rows: the successors of v are
// adj[off[v]:off[v+1]]. Two slices per graph instead of one per block keep
// the relation cheap to build for the thousands of functions of a profile.
type digraph struct {
	off []int32
	adj []int32
}

func (g digraph) len() int { return len(g.off) - 1 }

func (g digraph) succ(v int32) []int32 { return g.adj[g.off[v]:g.off[v+1]] }

// reverse turns every edge around, by counting sort so that each node's
// predecessors keep the order of their sources.
func (g digraph) reverse() digraph {
	n := g.len()
	r := digraph{off: make([]int32, n+1), adj: make([]int32, len(g.adj))}
	for _, w := range g.adj {
		r.off[w+1]++
	}
	for v := range n {
		r.off[v+1] += r.off[v]
	}
	fill := append([]int32(nil), r.off[:n]...)
	for v := range int32(n) {
		for _, w := range g.succ(v) {
			r.adj[fill[w]] = v
			fill[w]++
		}
	}
	return r
}

// domTree is the dominator tree of the nodes reached from a root, kept as
// preorder intervals: x dominates y iff pre[x] <= pre[y] <= last[x], so
// the nodes x dominates are a contiguous slice of order, which is what the
// FDOM rows are built from.
type domTree struct {
	pre, last []int32 // pre[v] < 0: v is not reached from the root
	order     []int32 // the reached nodes in preorder
}

func (t *domTree) has(v int32) bool { return t.pre[v] >= 0 }

// dominates reports x dominates y, both reached.
func (t *domTree) dominates(x, y int32) bool {
	return t.pre[x] >= 0 && t.pre[y] >= 0 && t.pre[x] <= t.pre[y] && t.pre[y] <= t.last[x]
}

// subtree is every node x dominates, x first.
func (t *domTree) subtree(x int32) []int32 {
	if t.pre[x] < 0 {
		return nil
	}
	return t.order[t.pre[x] : t.last[x]+1]
}

// newDomTree computes dominators from root over succ (pred is its
// reverse) with the iterative algorithm of Cooper, Harvey and Kennedy ("A
// Simple, Fast Dominance Algorithm", 2001). It is chosen over
// Lengauer–Tarjan because function CFGs are small and shallow: the
// iteration converges in two or three passes over the reverse postorder,
// and it needs no forest or semi-dominator bookkeeping. It does not assume
// the graph is reducible; irreducible graphs only cost more passes.
func newDomTree(succ, pred digraph, root int32) domTree {
	n := succ.len()
	po := make([]int32, n) // postorder number, -1 if not reached
	for i := range po {
		po[i] = -1
	}
	rpo := make([]int32, 0, n) // filled in postorder, walked backwards
	type frame struct{ v, i int32 }
	seen := make([]bool, n)
	stack := []frame{{root, 0}}
	seen[root] = true
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if s := succ.succ(f.v); int(f.i) < len(s) {
			w := s[f.i]
			f.i++
			if !seen[w] {
				seen[w] = true
				stack = append(stack, frame{w, 0})
			}
			continue
		}
		po[f.v] = int32(len(rpo))
		rpo = append(rpo, f.v)
		stack = stack[:len(stack)-1]
	}

	idom := make([]int32, n)
	for i := range idom {
		idom[i] = -1
	}
	idom[root] = root
	intersect := func(a, b int32) int32 {
		for a != b {
			for po[a] < po[b] {
				a = idom[a]
			}
			for po[b] < po[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := len(rpo) - 2; i >= 0; i-- { // rpo[len-1] is the root
			v := rpo[i]
			d := int32(-1)
			for _, p := range pred.succ(v) {
				if idom[p] < 0 { // not reached, or not processed yet
					continue
				}
				if d < 0 {
					d = p
				} else {
					d = intersect(p, d)
				}
			}
			if idom[v] != d {
				idom[v] = d
				changed = true
			}
		}
	}

	// Preorder by an explicit stack: a child popped runs its whole
	// subtree before its siblings below it, so subtrees stay contiguous.
	kids := digraph{off: make([]int32, n+1), adj: make([]int32, 0, len(rpo))}
	for _, v := range rpo {
		if v != root {
			kids.off[idom[v]+1]++
		}
	}
	for v := range n {
		kids.off[v+1] += kids.off[v]
	}
	kids.adj = kids.adj[:kids.off[n]]
	fill := append([]int32(nil), kids.off[:n]...)
	for _, v := range rpo {
		if v != root {
			kids.adj[fill[idom[v]]] = v
			fill[idom[v]]++
		}
	}
	t := domTree{pre: po, last: make([]int32, n), order: make([]int32, 0, len(rpo))}
	for i := range t.pre { // po is done with: its array becomes pre
		t.pre[i] = -1
	}
	vs := []int32{root}
	for len(vs) > 0 {
		v := vs[len(vs)-1]
		vs = vs[:len(vs)-1]
		t.pre[v] = int32(len(t.order))
		t.order = append(t.order, v)
		vs = append(vs, kids.succ(v)...)
	}
	size := t.last // reused: subtree sizes, then the last preorder number
	for i := len(t.order) - 1; i >= 0; i-- {
		v := t.order[i]
		size[v]++
		if v != root {
			size[idom[v]] += size[v]
		}
	}
	for _, v := range t.order {
		t.last[v] = t.pre[v] + size[v] - 1
	}
	return t
}
