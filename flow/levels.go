package flow

// The relations between levels of a calling context tree and the
// estimator that uses them are stated and argued in the package's doc
// (doc.go, "Relations between levels"); the once-per-call rule is lemma 4
// of fdom.go.

// Context is one calling context of a profile, as the relations between
// levels see it: a function called from one call site of its parent
// context's function.
type Context struct {
	// Parent is the index of the calling context, -1 for a root.
	Parent int
	// FDOM is the relation of this context's own function (NewFDOM), nil
	// where its code was not decoded or the frame is inlined into another:
	// such a context ties none of its callees.
	FDOM *FDOM
	// Site is the call site of the parent's function this context was
	// called from: one of the CallSites of the CFG the parent's FDOM was
	// built from.
	Site CallSite
	// Direct: Site is a direct call whose target is this context's
	// function, so that each execution of Site is one call of this
	// context. False for an indirect call, a site the parent's code does
	// not hold, and a callee other than the target (a stub's, a tail
	// call's).
	Direct bool
	// Weight is the context's sampled weight: its own samples, or their
	// density weights.
	Weight float64
}

// Levels is what TieLevels made of a profile's contexts, by index.
type Levels struct {
	// Class is each context's class of contexts proven to be called
	// equally often, 0 to Classes-1 in the order of their first member;
	// -1 for a context tied to no other.
	Class   []int
	Classes int
	// Weight is the estimate: a class's mean sampled weight for its
	// members, the context's own weight for the rest.
	Weight []float64
	// Skipped counts the classes left as sampled because a member's
	// weight was not a weight (negative, NaN or infinite): their members
	// are in no class.
	Skipped int
}

// TieLevels closes the entry and sibling rules over the contexts and gives
// each class its members' mean weight (see the estimator above).
func TieLevels(ctx []Context) Levels {
	n := len(ctx)
	uf := newUnionFind(n)
	// sole: the one Direct context of its parent at its call site.
	type key struct {
		parent int
		addr   uint64
	}
	claims := map[key]int{}
	for _, c := range ctx {
		if c.Direct && c.Parent >= 0 {
			claims[key{c.Parent, c.Site.Addr}]++
		}
	}
	kids := map[int][]int{} // the tying children of each parent with an FDOM
	for i, c := range ctx {
		p := c.Parent
		if !c.Direct || p < 0 || p >= n || ctx[p].FDOM == nil || claims[key{p, c.Site.Addr}] != 1 {
			continue
		}
		kids[p] = append(kids[p], i)
		if ctx[p].FDOM.OncePerCall(c.Site.Block) {
			uf.union(i, p)
		}
	}
	for p, ks := range kids {
		f := ctx[p].FDOM
		for a, i := range ks {
			for _, j := range ks[:a] {
				if uf.find(i) == uf.find(j) {
					continue
				}
				si, sj := ctx[i].Site, ctx[j].Site
				if f.SiteDominates(si, sj) && f.SiteDominates(sj, si) {
					uf.union(i, j)
				}
			}
		}
	}

	lv := Levels{Class: make([]int, n), Weight: make([]float64, n)}
	size := make([]int, n)
	sum := make([]float64, n)
	bad := make([]bool, n)
	for i, c := range ctx {
		r := uf.find(i)
		size[r]++
		sum[r] += c.Weight
		bad[r] = bad[r] || !isWeight(c.Weight)
	}
	number := make([]int, n)
	for i := range number {
		number[i] = -1
	}
	for i, c := range ctx {
		lv.Class[i], lv.Weight[i] = -1, c.Weight
		r := uf.find(i)
		switch {
		case size[r] < 2:
		case bad[r]:
			if r == i {
				lv.Skipped++
			}
		default:
			if number[r] < 0 {
				number[r] = lv.Classes
				lv.Classes++
			}
			lv.Class[i], lv.Weight[i] = number[r], sum[r]/float64(size[r])
		}
	}
	return lv
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct{ parent, size []int32 }

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int32, n), size: make([]int32, n)}
	for i := range u.parent {
		u.parent[i], u.size[i] = int32(i), 1
	}
	return u
}

func (u *unionFind) find(i int) int {
	for int(u.parent[i]) != i {
		u.parent[i] = u.parent[u.parent[i]]
		i = int(u.parent[i])
	}
	return i
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = int32(a)
	u.size[a] += u.size[b]
}
