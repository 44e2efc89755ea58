package tui

import (
	"cmp"
	"slices"

	"github.com/cctop/cctop/cct"
)

// viewKind is what the tree pane shows.
type viewKind int

const (
	topDown  viewKind = iota // callers above callees, from the root
	bottomUp                 // functions samples ended in, their callers below
	flatView                 // one row per function
)

func (v viewKind) String() string {
	return [...]string{"top-down", "bottom-up", "flat"}[v]
}

// group is one row's worth of the profile: a function in one context of the view. With
// call sites merged it stands for several contexts of the tree (every child of the same
// function under the parent row), which is why it holds node lists rather than one node.
// Children are computed when first asked for and kept: a profile's groups are built
// lazily, for what has been expanded or searched, never for the whole tree.
type group struct {
	fn      cct.FuncID
	siteFn  cct.FuncID // the function the call site is in (split only)
	site    uint64     // call site (split only)
	line    int32
	inlined bool
	// procs counts the processes a row merged by name stands for (0: not such a
	// row).
	procs int
	// proc is the process of a flat row of a profile of several (0: none): each
	// function has a row per process it ran in (per comm with byName), as perf
	// report's comm,sym.
	proc   cct.FuncID
	byName bool // proc stands for its comm

	// Top-down: the contexts merged here. Bottom-up: the caller contexts reached, with
	// origins[i] the context whose self weight nodes[i] carries up.
	nodes   []cct.NodeID
	origins []cct.NodeID

	self, total       float64
	cmpSelf, cmpTotal float64

	kids     []*group
	kidsDone bool
}

// hasKids says whether expanding g shows anything: the weight under a group is its total
// minus its self, in both profiles, so no child needs to be built to know. Once the
// children are built, they say.
func (g *group) hasKids() bool {
	if g.kidsDone {
		return len(g.kids) > 0
	}
	return g.total > g.self || g.cmpTotal > g.cmpSelf
}

func (g *group) empty() bool { return g.total == 0 && g.cmpTotal == 0 }

// forest is the lazily built rows of one profile under one view.
type forest struct {
	p     *profile
	kind  viewKind
	split bool
	// rankProbes keeps the [cctop probes] frame among the rows of every
	// view; by default it is left out, its share in the header (issue 29).
	rankProbes bool
	// byName merges the processes at the top of a profile of several by
	// their comm, as perf's --sort comm does.
	byName bool
	roots  []*group
	built  bool
}

func newForest(p *profile, kind viewKind, split bool) *forest {
	return &forest{p: p, kind: kind, split: split}
}

// children returns the children of g in display order; g == nil asks for the roots.
func (f *forest) children(g *group) []*group {
	if g == nil {
		if !f.built {
			f.roots, f.built = f.buildRoots(), true
		}
		return f.roots
	}
	if !g.kidsDone {
		switch f.kind {
		case topDown:
			g.kids = f.topDownKids(g.nodes)
		case bottomUp:
			g.kids = f.bottomUpKids(g)
		}
		g.kidsDone = true
	}
	return g.kids
}

func (f *forest) buildRoots() []*group {
	switch f.kind {
	case bottomUp:
		return f.bottomUpRoots()
	case flatView:
		return f.flatRoots()
	}
	return f.topDownKids([]cct.NodeID{0})
}

// groupKey is what merges contexts into one row: the function, and with split call sites
// also the site and whether the frame was inlined there.
type groupKey struct {
	fn      cct.FuncID
	site    uint64
	inlined bool
}

// grouper collects contexts into groups by key, keeping first-seen order until sorted.
type grouper struct {
	index map[groupKey]*group
	out   []*group
}

func (gr *grouper) get(k groupKey) *group {
	if g, ok := gr.index[k]; ok {
		return g
	}
	if gr.index == nil {
		gr.index = make(map[groupKey]*group)
	}
	g := &group{fn: k.fn, site: k.site, inlined: k.inlined}
	gr.index[k] = g
	gr.out = append(gr.out, g)
	return g
}

// topDownKids groups the children of the contexts in nodes.
func (f *forest) topDownKids(nodes []cct.NodeID) []*group {
	p := f.p
	var gr grouper
	for _, n := range nodes {
		for _, c := range p.children(n) {
			if p.fn[c] == p.probes && !f.rankProbes {
				continue // cctop's cost, not the program's: the header's probe cost
			}
			k := groupKey{fn: p.fn[c]}
			if f.split {
				k.site, k.inlined = p.site[c], p.inlined[c]
			}
			merged := f.byName && n == 0 && p.process[k.fn]
			if merged {
				k.fn = p.byComm[k.fn]
			}
			g := gr.get(k)
			if merged {
				g.procs++
			}
			if len(g.nodes) == 0 {
				g.inlined, g.line, g.siteFn = p.inlined[c], p.line[c], p.fn[n]
			} else if !p.inlined[c] {
				g.inlined = false // merged rows are marked inlined only if every copy is
			}
			g.nodes = append(g.nodes, c)
			g.self += p.self[c]
			g.total += p.total[c]
			if p.cmpSelf != nil {
				g.cmpSelf += p.cmpSelf[c]
				g.cmpTotal += p.cmpTot[c]
			}
		}
	}
	return f.finish(gr.out)
}

// bottomUpRoots groups every context with a self weight by its function: the roots of
// the inverted tree are where samples ended.
func (f *forest) bottomUpRoots() []*group {
	p := f.p
	byFn := make([]*group, len(p.names))
	var out []*group
	for id := 1; id < len(p.fn); id++ {
		w, cw := p.self[id], at(p.cmpSelf, id)
		if (w == 0 && cw == 0) || (p.fn[id] == p.probes && !f.rankProbes) {
			continue
		}
		g := byFn[p.fn[id]]
		if g == nil {
			g = &group{fn: p.fn[id], inlined: true}
			byFn[p.fn[id]] = g
			out = append(out, g)
		}
		g.inlined = g.inlined && p.inlined[id]
		g.nodes = append(g.nodes, cct.NodeID(id))
		g.origins = append(g.origins, cct.NodeID(id))
		g.total += w
		g.cmpTotal += cw
		if p.parent[id] == 0 {
			g.self += w
			g.cmpSelf += cw
		}
	}
	return f.finish(out)
}

// bottomUpKids steps every (origin, context) pair of g one caller up and groups the
// callers. A pair whose context is a child of the root has no caller: its weight is the
// row's self.
func (f *forest) bottomUpKids(g *group) []*group {
	p := f.p
	var gr grouper
	for i, c := range g.nodes {
		par := p.parent[c]
		if par <= 0 {
			continue
		}
		// The caller row is marked inlined if its own frame was inlined into its caller
		// (the row below), as in the top-down view; its call site is where it called
		// the row above.
		k := groupKey{fn: p.fn[par]}
		if f.split {
			k.site, k.inlined = p.site[c], p.inlined[par]
		}
		o := g.origins[i]
		w, cw := p.self[o], at(p.cmpSelf, int(o))
		kid := gr.get(k)
		if len(kid.nodes) == 0 {
			kid.inlined, kid.line, kid.siteFn = p.inlined[par], p.line[c], p.fn[par]
		} else if !p.inlined[par] {
			kid.inlined = false
		}
		kid.nodes = append(kid.nodes, par)
		kid.origins = append(kid.origins, o)
		kid.total += w
		kid.cmpTotal += cw
		if p.parent[par] == 0 {
			kid.self += w
			kid.cmpSelf += cw
		}
	}
	return f.finish(gr.out)
}

// flatRoots sums every function over its contexts. A function's total counts each
// sample once even under recursion: only the outermost frame of a function on a path
// adds its context's total.
func (f *forest) flatRoots() []*group {
	p := f.p
	byFn := make([]*group, len(p.names))
	type fnProc struct{ fn, proc cct.FuncID }
	var byProc map[fnProc]*group // a profile of several processes
	if p.procOf != nil {
		byProc = map[fnProc]*group{}
	}
	onPath := make([]int32, len(p.names))
	var out []*group
	stack := []cct.NodeID{0}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id < 0 {
			onPath[p.fn[^id]]--
			continue
		}
		if id != 0 && (p.fn[id] != p.probes || f.rankProbes) && (byProc == nil || !p.process[p.fn[id]]) {
			fn := p.fn[id]
			var g *group
			if byProc != nil {
				// The process is the row's label, not a row: its time is its
				// functions'.
				k := fnProc{fn, p.procOf[id]}
				if f.byName {
					k.proc = p.byComm[k.proc]
				}
				if g = byProc[k]; g == nil {
					g = &group{fn: fn, proc: k.proc, byName: f.byName}
					byProc[k] = g
					out = append(out, g)
				}
			} else if g = byFn[fn]; g == nil {
				g = &group{fn: fn}
				byFn[fn] = g
				out = append(out, g)
			}
			g.self += p.self[id]
			g.cmpSelf += at(p.cmpSelf, int(id))
			if onPath[fn] == 0 {
				g.total += p.total[id]
				g.cmpTotal += at(p.cmpTot, int(id))
			}
			onPath[fn]++
			stack = append(stack, ^id)
		}
		stack = append(stack, p.children(id)...)
	}
	// Flat rows do not expand.
	for _, g := range out {
		g.kidsDone = true
	}
	out = f.finish(out)
	slices.SortStableFunc(out, func(a, b *group) int { return cmp.Compare(b.self, a.self) })
	return out
}

// finish drops groups with no weight in either profile and sorts the rest: heaviest
// total first, then the comparison's, then name and call site so that ties are stable
// across refreshes.
func (f *forest) finish(gs []*group) []*group {
	gs = slices.DeleteFunc(gs, (*group).empty)
	names := f.p.names
	slices.SortFunc(gs, func(a, b *group) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		if c := cmp.Compare(b.cmpTotal, a.cmpTotal); c != 0 {
			return c
		}
		if c := cmp.Compare(names[a.fn], names[b.fn]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.site, b.site); c != 0 {
			return c
		}
		if a.inlined != b.inlined {
			if a.inlined {
				return 1
			}
			return -1
		}
		return 0
	})
	return gs
}

// key is g's fold key: the function's full name (stable across snapshots, unlike ids)
// and, with split call sites, the site.
func (f *forest) key(g *group) foldKey {
	k := foldKey{name: f.p.names[g.fn]}
	if g.proc != 0 {
		k.name += " · " + f.p.names[g.proc] // a flat row a process
	}
	if f.split {
		k.site, k.inlined = g.site, g.inlined
	}
	return k
}
