package flow

import (
	"fmt"
	"math"
)

// SiteFlow is one call site of a function in one calling context, and what
// was measured at it. A caller passes each call site once.
type SiteFlow struct {
	// Site is one of the CallSites of the CFG the FDOM was built from,
	// whose block's row NewFDOM built.
	Site CallSite
	// Outflow is the sampled weight of the site's callee edges, summed
	// (lee2007's OUTFLOW). A site with several targets keeps their ratio:
	// the caller scales every edge under it by the same Factor.
	Outflow float64
	// Exact: Count is the site's outflow as a call counter read it, in
	// Outflow's unit. The site is an anchor (see FDOMOutflowCorrection).
	Exact bool
	Count float64
}

// Correction is what FDOMOutflowCorrection made of each input site, by
// index.
type Correction struct {
	Outflow []float64
	// Factor is Outflow over the input Outflow: the caller scales the
	// weight of every sample under the site by it. NaN where the input
	// Outflow was 0, since no sampled weight lies under such a site to be
	// scaled; the flow it gained, if it can carry any, is in New.
	Factor []float64
	// New lists the sites that had no sampled flow, gained some, and have
	// a direct target to carry it: the edges the caller adds to the tree.
	New []NewEdge
	// Bound marks the sites FDOM relates to another site that takes part
	// (one with flow, a count or a direct target), either way round: their
	// outflow is set by the relation, not by their own samples alone.
	Bound []bool
	// Skipped, if not empty, says why nothing was corrected: Outflow is
	// the input, Factor 1 (NaN for a zero input), Bound nil.
	Skipped string
}

// NewEdge is an edge sampling missed and FDOM predicts.
type NewEdge struct {
	Site   int    // index of the site in the input
	Addr   uint64 // the call instruction
	Target uint64 // its direct target
	Weight float64
}

// FDOMOutflowCorrection applies the FDOM OUTFLOW constraint (lee2007,
// theorem 1 and section 3.4) to the call sites of one function in one
// calling context: where a FDOM b, OUTFLOW(a) >= OUTFLOW(b).
//
// A violated pair is set to the larger of its two outflows, to a fixed
// point, and then the sites are rescaled to keep the function's sampled
// total. Raising rather than lowering is lee2007's rule, and it fits
// timer sampling, which under-represents short calls rather than making
// calls up: the lower of a violated pair is the likelier wrong one. A site with a direct target but no samples that FDOMs a site
// with flow is raised like any other, which predicts the edge sampling
// missed; it is reported in New with its rescaled weight. A site with no
// samples and no direct target can carry no flow, so it is left out.
//
// Anchors, sites whose outflow was counted, keep their count and are left
// out of the rescaling: what is kept is the sampled total of the other,
// free, sites. Their counts bound the free sites: one an anchor FDOMs is
// capped at its count before the pair rule runs, and the excess leaves the
// total; one that FDOMs an anchor is floored at its count after the
// rescaling, and the deficit joins the total. So an anchor moves only the
// sites it bounds, and each by what the count proves. Keeping the whole
// function's total instead would make an anchor whose count differs from
// its samples push or pull every other site by its sampling error, sites
// FDOM does not relate to it included; and solving for a scale that keeps
// the free total with the bounds applied would take the flow a floor adds
// from every unrelated site, down to nothing when the counts exceed the
// samples. Counted sites that contradict FDOM between themselves (a call
// that did not return, an exception) mean the relation does not describe
// this function's runs, and nothing is corrected.
//
// The pairs are those of f.SiteDominates between the sites, closed under
// transitivity. Lemma 3 of FDOM says the closure adds only pairs through a
// block that cannot return, which hold within one per activation in
// flight, as rule (c) does; closing the relation makes the bounds monotone
// (a site that FDOMs another has a floor and a cap at least as high), so
// that neither the rescaling nor the floors undo a pair the rule fixed.
func FDOMOutflowCorrection(f *FDOM, sites []SiteFlow) Correction {
	n := len(sites)
	c := Correction{Outflow: make([]float64, n), Factor: make([]float64, n)}
	for i, s := range sites {
		if !isWeight(s.Outflow) || s.Exact && !isWeight(s.Count) {
			return c.skip(sites, fmt.Sprintf("site %d (%#x) has outflow %v, count %v", i, s.Site.Addr, s.Outflow, s.Count))
		}
	}

	v := c.Outflow
	active := make([]bool, n)
	rel := make([]bitset, n)
	for i, s := range sites {
		v[i] = s.Outflow
		if s.Exact {
			v[i] = s.Count
		}
		active[i] = s.Exact || s.Outflow > 0 || s.Site.Target != 0
		rel[i] = newBitset(n)
		for j, t := range sites {
			if i != j && f.SiteDominates(s.Site, t.Site) {
				rel[i].set(j)
			}
		}
	}
	// Warshall, over inactive sites too: a pair through one still holds.
	for k := range n {
		for i := range n {
			if rel[i].has(k) {
				rel[i].or(rel[k])
			}
		}
	}

	// Bounds from the anchors, and the rows of the pair rule.
	lo, hi := make([]float64, n), make([]float64, n)
	var free []int
	rows := make([][]int, n)
	for i, s := range sites {
		hi[i] = math.Inf(1)
		if active[i] && !s.Exact {
			free = append(free, i)
		}
	}
	for i, s := range sites {
		if !active[i] {
			continue
		}
		for j := range n {
			if j == i || !active[j] || !rel[i].has(j) {
				continue
			}
			t := sites[j]
			switch {
			case s.Exact && t.Exact && s.Count < t.Count:
				return c.skip(sites, fmt.Sprintf("counted sites %#x (%v) and %#x (%v) contradict FDOM",
					s.Site.Addr, s.Count, t.Site.Addr, t.Count))
			case s.Exact && !t.Exact:
				hi[j] = min(hi[j], s.Count)
			case !s.Exact && t.Exact:
				lo[i] = max(lo[i], t.Count)
			case !s.Exact:
				rows[i] = append(rows[i], j)
			}
		}
	}
	total := 0.0
	for _, i := range free {
		v[i] = min(v[i], hi[i])
		total += v[i]
	}

	// The pair rule to a fixed point, sites in index order. Only a free
	// site is changed, only raised, and only to a value another site
	// holds; so every value stays one of the n values present before, a
	// site is raised at most n-1 times, and after at most n(n-1) raises a
	// sweep raises nothing and the loop ends. As the pairs are closed
	// under transitivity, the first sweep reaches the fixed point (a site
	// takes the largest value among the sites it FDOMs, and so FDOMs
	// every site that could raise one of those) and the second confirms
	// it. A site takes values of sites it FDOMs, whose caps are at most
	// its own, so the raises stay under the caps.
	for changed := true; changed; {
		changed = false
		for _, i := range free {
			for _, j := range rows[i] {
				if v[i] < v[j] {
					v[i] = v[j]
					changed = true
				}
			}
		}
	}

	raised := 0.0
	for _, i := range free {
		raised += v[i]
	}
	for _, i := range free {
		if raised > 0 {
			v[i] *= total / raised // at most 1: no value rises over its cap
		}
		v[i] = max(v[i], lo[i])
	}

	c.Bound = make([]bool, n)
	for i := range n {
		for j := range n {
			if i != j && active[i] && active[j] && (rel[i].has(j) || rel[j].has(i)) {
				c.Bound[i] = true
			}
		}
	}
	for i, s := range sites {
		c.Factor[i] = v[i] / s.Outflow
		if s.Outflow == 0 {
			c.Factor[i] = math.NaN()
			if v[i] > 0 && s.Site.Target != 0 {
				c.New = append(c.New, NewEdge{Site: i, Addr: s.Site.Addr, Target: s.Site.Target, Weight: v[i]})
			}
		}
	}
	return c
}

// isWeight: finite and not negative (NaN fails x >= 0).
func isWeight(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

func (c Correction) skip(sites []SiteFlow, why string) Correction {
	for i, s := range sites {
		c.Outflow[i], c.Factor[i] = s.Outflow, 1
		if s.Outflow == 0 {
			c.Factor[i] = math.NaN()
		}
	}
	c.New, c.Bound, c.Skipped = nil, nil, why
	return c
}

// DynamicOutflowCorrection applies the Dynamic OUTFLOW constraint (lee2007,
// theorem 3 and §3.6) to the call sites of one function in one calling
// context: the outflows of two sites are in the ratio of their blocks'
// frequencies in a basic-block profile. blocks is that profile, a count per
// block of the CFG the sites come from (BlockCounts of the branch stacks'
// runs, say); it is the function's over all its contexts, so what it gives
// a context is the ratio between its sites.
//
// Each site whose block the profile saw gets its block's frequency, scaled
// so that those sites keep their sampled total: the profile sets the
// shares, sampling the amount (the paper rescales "to maintain the
// frequencies due to sampling across disparate parts of the DCG"). A site
// in a block the profile did not see keeps its sampled outflow, as does an
// anchor its count; a site with no samples in a block the profile saw,
// and a direct target, is a predicted edge (New). Nothing is corrected when
// the profile saw none of the sites, or the sites it saw have no sampled
// flow to share.
func DynamicOutflowCorrection(g *CFG, sites []SiteFlow, blocks []uint64) Correction {
	n := len(sites)
	c := Correction{Outflow: make([]float64, n), Factor: make([]float64, n), Bound: make([]bool, n)}
	var total, freq float64
	seen := make([]bool, n)
	for i, s := range sites {
		if !isWeight(s.Outflow) || s.Exact && !isWeight(s.Count) {
			return c.skip(sites, fmt.Sprintf("site %d (%#x) has outflow %v, count %v", i, s.Site.Addr, s.Outflow, s.Count))
		}
		b := s.Site.Block
		if s.Exact || b < 0 || b >= len(blocks) || b >= len(g.Blocks) || blocks[b] == 0 {
			continue
		}
		seen[i] = true
		total += s.Outflow
		freq += float64(blocks[b])
	}
	if freq == 0 {
		return c.skip(sites, "the block profile saw none of the call sites")
	}
	if total == 0 {
		return c.skip(sites, "no sampled flow under the call sites the block profile saw")
	}
	for i, s := range sites {
		switch {
		case s.Exact:
			c.Outflow[i] = s.Count
		case seen[i]:
			c.Outflow[i] = total * float64(blocks[s.Site.Block]) / freq
			c.Bound[i] = true
		default:
			c.Outflow[i] = s.Outflow
		}
		c.Factor[i] = c.Outflow[i] / s.Outflow
		if s.Outflow == 0 {
			c.Factor[i] = math.NaN()
			if c.Outflow[i] > 0 && s.Site.Target != 0 && !s.Exact {
				c.New = append(c.New, NewEdge{Site: i, Addr: s.Site.Addr, Target: s.Site.Target, Weight: c.Outflow[i]})
			}
		}
	}
	return c
}
