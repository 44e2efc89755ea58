package flow

import "sync"

// FDOM is the frequency dominator relation between the basic blocks of
// one function (lee2007, definition 3): x FDOM y when x executes at least
// as many times as y on every run of the function. lee2007 proves its rule
// in a technical report that is not available; the rule here is derived
// and proved below, and is sound rather than complete: every pair it
// claims holds, some pairs that hold are not claimed.
//
// # Model
//
// A block executes when control enters it at its start; it then runs to
// its end and leaves along one of its Succs, or leaves the function if it
// is an Exit block. This assumes that every call returns: a callee that
// throws an exception through the function, or longjmps over it, ends a
// run in the middle of a block, and a run so ended is neither of the kinds
// below. A run of the function is a walk p = p[0] p[1] ... in the CFG with
// p[0] the entry, and #p(v) is the number of times v occurs in it. The run
// is complete if it ends in an Exit block (the function returned), a prefix
// otherwise (the activation is still in flight, as every frame of a
// sampled stack is). A virtual exit X gets an edge from every Exit block,
// so that complete runs are the walks from the entry to X.
//
// x dom y: every walk from the entry to y contains x. x pdom y: every walk
// from y to X contains x. A cycle is a closed walk of at least one edge;
// y is free of x when no cycle through y avoids x, that is when y is on no
// cycle of the graph with x removed.
//
// # Rule
//
// x FDOM y is claimed when x and y are blocks of a CFG that is not
// Conservative, both reachable from the entry, and
//
//	(a) x = y; or
//	(b) x dom y and y is free of x; or
//	(c) x pdom y and y is free of x (complete relation only).
//
// Lemma 1: (b) holds on every run, prefixes included. Let p be a run and
// j a position with p[j] = y, x ≠ y. p[0..j] is a walk from the entry to y,
// so it contains x; let m(j) be the last position before j that holds x.
// If positions j1 < j2 of y had m(j1) = m(j2) = i, nothing in p between i
// and j2 would be x, so p[j1..j2] would be a cycle through y avoiding x,
// which freedom forbids. So m maps the occurrences of y one-to-one into
// those of x, and #p(x) >= #p(y).
//
// Lemma 2: (c) holds on every complete run, and on a prefix it fails by at
// most one. Let p be complete and p[j] = y. p[j..] followed by X is a walk
// from y to X, so it contains x after j; let m(j) be the first such
// position. Two occurrences of y with the same m would again bound a cycle
// through y avoiding x. On a prefix the occurrences of y after the last x
// have no image, and two of them would bound such a cycle, so there is at
// most one: #p(x) >= #p(y) - 1 for each activation still in flight.
//
// (c) is what lee2007 means by "every possible path through the method":
// paths from entry to exit. A profile's counts are sums over activations,
// nearly all of them complete, and the in-flight ones cost at most one
// each (lemma 2). NewPrefixFDOM claims (a) and (b) only, for callers that
// must hold on every prefix.
//
// Lemma 3: the relation is transitive, except through a block that cannot
// reach X. Let x R y and y R z with the three distinct. Freedom composes:
// a cycle through z passes y, so it is a cycle through y and passes x.
// (b)(b): dom is transitive. (c)(c): pdom is transitive. x (b) y (c) z: if
// x does not dom z, some walk w from the entry to z avoids x; every walk u
// from z to X contains y (y pdom z), and w followed by u up to its first y
// is a walk from the entry to y, which contains x, so x lies in u before
// that y: x pdom z, and x (c) z. x (c) y (b) z: if x does not pdom z and z
// reaches X, some walk u from z to X avoids x; any walk w from the entry to
// z passes y (y dom z), and from the last such y, w then u is a walk from y
// to X, which contains x, so x lies in w: x dom z, and x (b) z. If z cannot
// reach X the composition does not hold: z runs only in activations that
// never return (an infinite loop), where y has run and x need not have,
// and no rule above claims it. The outflow correction therefore closes the
// relation between call sites itself rather than relying on lemma 3.
//
// Unreachable blocks: no claims but (a). In the model they never run, so
// every claim on them would hold vacuously; but samples there mean control
// reaches them by a way the CFG does not show (a landing pad, a jump
// table that was not followed), and a vacuous bound on them would be
// wrong. Blocks that cannot reach X get no claim from (c): they are in no
// post-dominator tree, as no complete run contains them, and their runs
// are in flight by nature; (b) still bounds them, soundly on prefixes.
//
// # Once per call
//
// Lemma 4: a reachable block b that post-dominates the entry and is on no
// cycle runs exactly once on every complete run, and at most once on a
// prefix. A complete run is a walk from the entry to X, so it contains b;
// two occurrences of b in one walk would bound a closed walk through b, a
// cycle. So such a block runs once per call of the function (OncePerCall),
// and a call site in it calls as often as the function is called: lee2007's
// theorem 2, INFLOW(m) <= OUTFLOW(cs) for cs FDOM ENTRY, made an equality.
// It is not read off the relation between blocks: Go's stack check makes
// the entry block run again after growing the stack, so the entry itself
// can run more often than the body it leads to. With a virtual block S
// before the entry, run once per call and on no cycle, b is this lemma's
// block exactly when S FDOM b by (b) and b FDOM S by (c). A function of one
// block (no branch, one return) has its every call site once per call.
//
// # Computation
//
// Dominators and post-dominators (toward X, over the reachable blocks) are
// trees of preorder intervals, so dom and pdom are O(1) tests and the
// blocks x dominates are a slice. Freedom is tested on the set S = {y : x
// dom y or x pdom y} minus x, by strongly connected components of the
// subgraph S induces, not of the whole graph minus x: if x dom y, a cycle
// through y that avoids x stays inside the blocks x dominates (a block w
// on it that x did not dominate would be reached by a walk avoiding x,
// and that walk continued around the cycle to y would avoid x too), and
// symmetrically for pdom. So y in S is free of x iff it is on no cycle of
// the subgraph S induces. One row costs O(|S| + edges out of S); NewFDOM
// builds the rows of the blocks that hold call sites, about O(k(V+E)) for
// k such blocks, and answers other rows on demand.
type FDOM struct {
	n      int
	prefix bool
	// only reflexivity: a Conservative CFG, or Succs out of range
	none      bool
	fwd       digraph // the reachable blocks' edges, and Exit blocks' edges to X = n
	dom, pdom domTree
	rows      []bitset // rows[x] != nil: the blocks x FDOMs, built for call-site blocks

	onceInit sync.Once
	once     bitset // the blocks of lemma 4, found on the first OncePerCall
}

// NewFDOM builds the relation on complete runs: rules (a), (b) and (c).
// It is what the outflow correction uses.
func NewFDOM(g *CFG) *FDOM { return newFDOM(g, false) }

// NewPrefixFDOM builds the relation that holds on every prefix of a run
// too, activations in flight included: rules (a) and (b). It claims fewer
// pairs and skips the post-dominator tree.
func NewPrefixFDOM(g *CFG) *FDOM { return newFDOM(g, true) }

func newFDOM(g *CFG, prefix bool) *FDOM {
	n := len(g.Blocks)
	f := &FDOM{n: n, prefix: prefix, none: g.Conservative || n == 0}
	for _, b := range g.Blocks {
		for _, s := range b.Succs {
			if s < 0 || s >= n {
				f.none = true // a broken graph proves nothing
			}
		}
	}
	if f.none {
		return f
	}

	reach := make([]bool, n)
	reached(g, reach, nil)
	// Unreachable blocks keep no edges, so that neither tree nor cycle
	// test can see them.
	edges := 0
	for _, b := range g.Blocks {
		edges += len(b.Succs) + 1
	}
	f.fwd = digraph{off: make([]int32, n+2), adj: make([]int32, 0, edges)}
	for v, b := range g.Blocks {
		f.fwd.off[v+1] = f.fwd.off[v]
		if !reach[v] {
			continue
		}
		for _, s := range b.Succs {
			f.fwd.adj = append(f.fwd.adj, int32(s))
		}
		if b.Exit {
			f.fwd.adj = append(f.fwd.adj, int32(n))
		}
		f.fwd.off[v+1] = int32(len(f.fwd.adj))
	}
	f.fwd.off[n+1] = f.fwd.off[n]
	rev := f.fwd.reverse()
	f.dom = newDomTree(f.fwd, rev, 0)
	if !prefix {
		f.pdom = newDomTree(rev, f.fwd, int32(n))
	}

	f.rows = make([]bitset, n)
	cf := newCycleFinder(f.fwd)
	for v, b := range g.Blocks {
		if len(b.Calls) > 0 && f.rows[v] == nil {
			f.rows[v] = f.row(int32(v), cf)
		}
	}
	return f
}

// row is the set of blocks x FDOMs.
func (f *FDOM) row(x int32, cf *cycleFinder) bitset {
	r := newBitset(f.n)
	r.set(int(x))
	if !f.dom.has(x) {
		return r
	}
	cf.reset()
	for _, v := range f.dom.subtree(x)[1:] {
		if int(v) != f.n {
			cf.add(v)
		}
	}
	if !f.prefix {
		for _, v := range f.pdom.subtree(x) {
			if v != x {
				cf.add(v)
			}
		}
	}
	cf.run()
	for _, v := range cf.set {
		if !cf.onCycle(v) {
			r.set(int(v))
		}
	}
	return r
}

// Dominates reports x FDOM y for block indices x and y. It is O(1) when x
// holds a call site; for another x it builds x's row, O(V+E), each time.
// Safe for concurrent use.
func (f *FDOM) Dominates(x, y int) bool {
	if x < 0 || y < 0 || x >= f.n || y >= f.n {
		return false
	}
	if x == y {
		return true
	}
	if f.none {
		return false
	}
	if r := f.rows[x]; r != nil {
		return r.has(y)
	}
	return f.row(int32(x), newCycleFinder(f.fwd)).has(y)
}

// SiteDominates reports a FDOM b for two call sites of the function. Call
// sites of one block run equally often on complete runs, since the block
// runs to its end once entered (every call returns); on prefixes only the
// earlier bounds the later, as the earlier one's call may be in flight. In
// a Conservative CFG a site dominates only itself: its blocks may be
// entered in the middle by jumps that were not followed.
func (f *FDOM) SiteDominates(a, b CallSite) bool {
	switch {
	case a.Block != b.Block:
		return f.Dominates(a.Block, b.Block)
	case a.Addr == b.Addr:
		return true
	case f.none || a.Block < 0 || a.Block >= f.n:
		return false
	case f.prefix:
		return a.Addr < b.Addr
	}
	return true
}

// OncePerCall reports that block b runs exactly once on every complete run
// of the function (lemma 4), at most once on a run in flight: a call site
// in it calls exactly as often as its calling context is called, less one
// per activation still in flight. Never for the prefix relation, which has
// no post-dominators, nor where the relation is only reflexive. Safe for
// concurrent use.
func (f *FDOM) OncePerCall(b int) bool {
	if b < 0 || b >= f.n || f.none || f.prefix {
		return false
	}
	f.onceInit.Do(f.findOnce)
	return f.once.has(b)
}

// findOnce sets once: the reachable blocks on no cycle of the reachable
// graph that post-dominate the entry. None where the entry cannot return.
func (f *FDOM) findOnce() {
	f.once = newBitset(f.n)
	if !f.pdom.has(0) {
		return
	}
	cf := newCycleFinder(f.fwd)
	cf.reset()
	for v := range int32(f.n) {
		if f.dom.has(v) {
			cf.add(v)
		}
	}
	cf.run()
	for _, v := range cf.set {
		if !cf.onCycle(v) && f.pdom.dominates(v, 0) {
			f.once.set(int(v))
		}
	}
}
