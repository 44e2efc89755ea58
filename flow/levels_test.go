package flow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A program for the tree-level tests: functions 0..m-1, function i calling
// only functions above it (no recursion, so every run ends), run from
// function 0 a few times. Running it gives the true calls of every calling
// context; sampling it, weights biased by each context's time.
type program struct {
	funcs []*CFG
	fdom  []*FDOM // nil: the function's code "could not be read"
	// callee of each call site, by function and site address; -1 for an
	// indirect call, whose callee is drawn from the functions above.
	callee []map[uint64]int
	cost   []float64 // time per block run, per function
	dist   [][]int   // per function and block: blocks to an Exit block
}

// shapeCFG is one function's CFG: random (randomCFG's), or one of the
// shapes the rules are for (a single block of calls; Go's prologue before a
// body of calls; a loop of calls; calls in the arms of a branch).
func shapeCFG(r *rand.Rand) *CFG {
	calls := func(v, k int) []CallSite {
		var cs []CallSite
		for c := range k {
			addr := uint64(0x1000 + 0x40*v + 0x10*c)
			cs = append(cs, CallSite{Addr: addr, Ret: addr + 5, Target: 1, Block: v})
		}
		return cs
	}
	var g *CFG
	switch r.IntN(5) {
	case 0: // one block
		g = mkCFG(1, []int{0})
	case 1: // entry, body; entry, morestack, entry
		g = mkCFG(3, []int{1}, [2]int{0, 1}, [2]int{0, 2}, [2]int{2, 0})
	case 2: // a loop between calls before and after it
		g = mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{1, 3})
	case 3: // two arms that join
		g = mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3})
	default:
		g = randomCFG(r)
		g.Conservative = false
		for v := range g.Blocks {
			for i := range g.Blocks[v].Calls {
				g.Blocks[v].Calls[i].Target = 1
			}
		}
		return g
	}
	for v := range g.Blocks {
		g.Blocks[v].Calls = calls(v, r.IntN(4))
	}
	return g
}

// distToExit is, per block, the fewest blocks from it to an Exit block;
// -1 where none is reachable.
func distToExit(g *CFG) []int {
	n := len(g.Blocks)
	d := make([]int, n)
	for i := range d {
		d[i] = -1
	}
	for changed := true; changed; {
		changed = false
		for v, b := range g.Blocks {
			best := d[v]
			if b.Exit {
				best = 0
			}
			for _, s := range b.Succs {
				if d[s] >= 0 && (best < 0 || d[s]+1 < best) {
					best = d[s] + 1
				}
			}
			if best != d[v] {
				d[v], changed = best, true
			}
		}
	}
	return d
}

func randomProgram(r *rand.Rand) *program {
	m := 2 + r.IntN(4)
	p := &program{}
	for i := range m {
		var g *CFG
		var d []int
		for {
			g = shapeCFG(r)
			d = distToExit(g)
			ok := true
			seen := make([]bool, len(g.Blocks))
			reached(g, seen, nil)
			for v := range g.Blocks {
				ok = ok && (!seen[v] || d[v] >= 0)
			}
			if ok {
				break
			}
		}
		callee := map[uint64]int{}
		for v := range g.Blocks {
			if i == m-1 { // the last function calls nothing
				g.Blocks[v].Calls = nil
			}
			for c := range g.Blocks[v].Calls {
				s := &g.Blocks[v].Calls[c]
				s.Block = v
				to := i + 1 + r.IntN(m-i-1)
				if r.IntN(5) == 0 {
					to, s.Target = -1, 0
				} else {
					s.Target = uint64(0x100000 * (to + 1))
				}
				callee[s.Addr] = to
			}
		}
		f := NewFDOM(g)
		if r.IntN(10) == 0 {
			f = nil
		}
		p.funcs, p.fdom, p.dist = append(p.funcs, g), append(p.fdom, f), append(p.dist, d)
		p.callee = append(p.callee, callee)
		p.cost = append(p.cost, float64(1+r.IntN(20)))
	}
	return p
}

// profile runs p and returns its contexts (weights drawn from the time of
// each) and their true calls.
func (p *program) profile(r *rand.Rand) ([]Context, []float64) {
	type key struct {
		parent int
		addr   uint64
		fn     int
	}
	var ctx []Context
	var calls, time []float64
	var fnOf []int
	index := map[key]int{}
	child := func(parent int, s CallSite, fn int) int {
		k := key{parent, s.Addr, fn}
		if i, ok := index[k]; ok {
			return i
		}
		i := len(ctx)
		index[k] = i
		ctx = append(ctx, Context{Parent: parent, Site: s, Direct: s.Target != 0})
		calls, time, fnOf = append(calls, 0), append(time, 0), append(fnOf, fn)
		return i
	}
	var run func(fn, c int)
	run = func(fn, c int) {
		calls[c]++
		g := p.funcs[fn]
		for v, steps := 0, 0; ; steps++ {
			b := g.Blocks[v]
			time[c] += p.cost[fn]
			for _, s := range b.Calls {
				to := p.callee[fn][s.Addr]
				if to < 0 {
					to = fn + 1 + r.IntN(len(p.funcs)-fn-1)
				}
				run(to, child(c, s, to))
			}
			// Wander a few blocks, then head for the nearest exit.
			if b.Exit && (len(b.Succs) == 0 || r.IntN(3) == 0 || steps >= 6) {
				return
			}
			var next []int
			for _, s := range b.Succs {
				if steps < 6 || p.dist[fn][s] >= 0 && p.dist[fn][s] < p.dist[fn][v] {
					next = append(next, s)
				}
			}
			v = next[r.IntN(len(next))]
		}
	}
	root := child(-1, CallSite{}, 0)
	ctx[root].Direct = false
	for range 1 + r.IntN(6) {
		run(0, root)
	}
	for i := range ctx {
		ctx[i].FDOM = p.fdom[fnOf[i]]
		// Timer samples: each context's by its time, with the error of
		// a few samples; some take none.
		w := time[i] * (0.2 + 1.6*r.Float64())
		if r.IntN(4) == 0 {
			w = 0
		}
		ctx[i].Weight = math.Round(w)
	}
	return ctx, calls
}

// overlap is 100 * sum of min over the normalized vectors.
func overlap(a, b []float64) float64 {
	var sa, sb float64
	for i := range a {
		sa, sb = sa+a[i], sb+b[i]
	}
	if sa == 0 || sb == 0 {
		return 0
	}
	o := 0.0
	for i := range a {
		o += min(a[i]/sa, b[i]/sb)
	}
	return 100 * o
}

// TestTieLevelsProperty: on random programs run for their true calls and
// sampled by time, every class TieLevels forms holds in the truth (its
// members were called equally often: the rules are proven, not guessed);
// its members get one value and keep their sampled total; contexts in no
// class keep their weights; the rules are applied wherever they hold on
// their own terms; and the overlap with the truth over contexts is never
// lower than the samples'.
func TestTieLevelsProperty(t *testing.T) {
	programs := 3000
	if testing.Short() {
		programs = 300
	}
	r := rand.New(rand.NewPCG(29, 2007))
	var classes, tied, entry, sibling, better, applies int
	var gain float64
	for pi := range programs {
		p := randomProgram(r)
		ctx, truth := p.profile(r)
		lv := TieLevels(ctx)
		fail := func(format string, a ...any) {
			t.Helper()
			t.Fatalf("program %d: "+format, append([]any{pi}, a...)...)
		}
		if len(lv.Class) != len(ctx) || len(lv.Weight) != len(ctx) || lv.Skipped != 0 {
			fail("levels %+v for %d contexts", lv, len(ctx))
		}
		members := make([][]int, lv.Classes)
		raw := make([]float64, len(ctx))
		for i, c := range ctx {
			raw[i] = c.Weight
			k := lv.Class[i]
			if k < -1 || k >= lv.Classes {
				fail("context %d in class %d of %d", i, k, lv.Classes)
			}
			if k < 0 {
				if lv.Weight[i] != c.Weight {
					fail("context %d in no class: weight %v, sampled %v", i, lv.Weight[i], c.Weight)
				}
				continue
			}
			members[k] = append(members[k], i)
		}
		for k, ms := range members {
			if len(ms) < 2 {
				fail("class %d has members %v", k, ms)
			}
			var in, out float64
			for _, i := range ms {
				if truth[i] != truth[ms[0]] {
					fail("class %d: context %d called %v times, context %d %v", k, ms[0], truth[ms[0]], i, truth[i])
				}
				if lv.Weight[i] != lv.Weight[ms[0]] {
					fail("class %d: weights %v and %v", k, lv.Weight[ms[0]], lv.Weight[i])
				}
				in, out = in+ctx[i].Weight, out+lv.Weight[i]
			}
			if math.Abs(in-out) > 1e-9*max(1, in) {
				fail("class %d: sampled total %v, estimated %v", k, in, out)
			}
			classes++
			tied += len(ms)
		}
		// Where a rule's terms hold, its contexts are in one class.
		for i, c := range ctx {
			pa := c.Parent
			if pa < 0 || !c.Direct || ctx[pa].FDOM == nil {
				continue
			}
			if ctx[pa].FDOM.OncePerCall(c.Site.Block) {
				entry++
				if lv.Class[i] < 0 || lv.Class[i] != lv.Class[pa] {
					fail("context %d, called once per call of %d: classes %d and %d", i, pa, lv.Class[i], lv.Class[pa])
				}
			}
			for j := range i {
				d := ctx[j]
				if d.Parent == pa && d.Direct && ctx[pa].FDOM.SiteDominates(c.Site, d.Site) && ctx[pa].FDOM.SiteDominates(d.Site, c.Site) {
					sibling++
					if lv.Class[i] < 0 || lv.Class[i] != lv.Class[j] {
						fail("sibling contexts %d and %d: classes %d and %d", i, j, lv.Class[i], lv.Class[j])
					}
				}
			}
		}
		if lv.Classes == 0 {
			continue
		}
		applies++
		before, after := overlap(raw, truth), overlap(lv.Weight, truth)
		if after < before-1e-9 {
			fail("overlap with the truth %.4f%%, sampled %.4f%%", after, before)
		}
		if after > before+1e-9 {
			better++
		}
		gain += after - before
	}
	t.Logf("%d programs: %d classes of %d contexts (%d entry and %d sibling pairs); %d programs with a class, %d of them closer to the truth, by %.2f points on average",
		programs, classes, tied, entry, sibling, applies, better, gain/float64(max(applies, 1)))
	if entry < programs/2 || sibling < programs/10 || better < applies/2 {
		t.Error("the random programs exercised too little")
	}
}

// The shape of issue 29: run's one block calls parse, transform and emit,
// each of whose one block calls the same leaf, with the leaf's time 1:6:3
// under them. The calls are equal, and the whole chain, run included, is
// one class sharing the samples equally. Called from a loop, run is not
// tied to its caller.
func TestTieLevelsSharedLeaf(t *testing.T) {
	one := func(calls int) *FDOM { // a single block with calls
		g := mkCFG(1, []int{0})
		g.Blocks[0].Calls = nil
		for c := range calls {
			a := uint64(0x1000 + 0x10*c)
			g.Blocks[0].Calls = append(g.Blocks[0].Calls, CallSite{Addr: a, Ret: a + 5, Target: uint64(0x9000 + c), Block: 0})
		}
		return NewFDOM(g)
	}
	loop := NewFDOM(mkCFG(3, []int{2}, [2]int{0, 1}, [2]int{1, 1}, [2]int{1, 2}))
	leaf, stage, run := one(0), one(1), one(3)
	site := func(g *FDOM, c int) CallSite {
		return CallSite{Addr: uint64(0x1000 + 0x10*c), Ret: uint64(0x1005 + 0x10*c), Block: 0, Target: uint64(0x9000 + c)}
	}
	loopSite := CallSite{Addr: 0x1040, Ret: 0x1045, Target: 0x9000, Block: 1}
	ctx := []Context{
		{Parent: -1, FDOM: loop, Weight: 5},                                     // 0 rounds
		{Parent: 0, FDOM: run, Site: loopSite, Direct: true},                    // 1 run
		{Parent: 1, FDOM: stage, Site: site(run, 0), Direct: true},              // 2 parse
		{Parent: 1, FDOM: stage, Site: site(run, 1), Direct: true},              // 3 transform
		{Parent: 1, FDOM: stage, Site: site(run, 2), Direct: true},              // 4 emit
		{Parent: 2, FDOM: leaf, Site: site(stage, 0), Direct: true, Weight: 10}, // 5 leaf
		{Parent: 3, FDOM: leaf, Site: site(stage, 0), Direct: true, Weight: 60},
		{Parent: 4, FDOM: leaf, Site: site(stage, 0), Direct: true, Weight: 30},
	}
	lv := TieLevels(ctx)
	want := []float64{5, 100.0 / 7, 100.0 / 7, 100.0 / 7, 100.0 / 7, 100.0 / 7, 100.0 / 7, 100.0 / 7}
	for i, w := range want {
		if math.Abs(lv.Weight[i]-w) > 1e-12 || (lv.Class[i] < 0) != (i == 0) {
			t.Errorf("context %d: weight %v class %d, want %v", i, lv.Weight[i], lv.Class[i], w)
		}
	}
	if lv.Classes != 1 {
		t.Errorf("%d classes, want 1", lv.Classes)
	}

	// Called in a loop of run's, the stages are siblings of one block:
	// still one class with their leaves, run (weighing nothing) apart.
	ctx[1].FDOM = loop
	for i := 2; i <= 4; i++ {
		ctx[i].Site.Block = 1
	}
	lv = TieLevels(ctx)
	for i := range ctx {
		w, tied := ctx[i].Weight, i >= 2
		if tied {
			w = 100.0 / 6
		}
		if math.Abs(lv.Weight[i]-w) > 1e-12 || (lv.Class[i] >= 0) != tied {
			t.Errorf("stages in a loop: context %d: weight %v class %d, want %v", i, lv.Weight[i], lv.Class[i], w)
		}
	}
}

// What ties nothing: an indirect call, a callee that is not the site's
// target, a parent whose code was not read, a site two contexts claim; and
// a class with a weight that is not one is left as sampled.
func TestTieLevelsDropped(t *testing.T) {
	g := mkCFG(1, []int{0})
	g.Blocks[0].Calls = []CallSite{{Addr: 0x1000, Ret: 0x1005, Target: 0x9000}, {Addr: 0x1010, Ret: 0x1015, Target: 0x9100}}
	f := NewFDOM(g)
	s0, s1 := g.Blocks[0].Calls[0], g.Blocks[0].Calls[1]
	base := func() []Context {
		return []Context{
			{Parent: -1, FDOM: f, Weight: 1},
			{Parent: 0, Site: s0, Direct: true, Weight: 3},
			{Parent: 0, Site: s1, Direct: true, Weight: 8},
		}
	}
	if lv := TieLevels(base()); lv.Classes != 1 || lv.Weight[0] != 4 || lv.Weight[2] != 4 {
		t.Fatalf("the tied case: %+v", lv)
	}
	for name, mod := range map[string]func(c []Context){
		"indirect":      func(c []Context) { c[1].Direct, c[2].Direct = false, false },
		"not decoded":   func(c []Context) { c[0].FDOM = nil; c[2].Direct = false },
		"claimed twice": func(c []Context) { c[2].Site = s0 },
	} {
		c := base()
		mod(c)
		lv := TieLevels(c)
		for i := range c {
			if lv.Class[i] >= 0 || lv.Weight[i] != c[i].Weight {
				t.Errorf("%s: context %d in class %d weighs %v (sampled %v)", name, i, lv.Class[i], lv.Weight[i], c[i].Weight)
			}
		}
	}
	c := base()
	c[2].Weight = math.NaN()
	if lv := TieLevels(c); lv.Classes != 0 || lv.Skipped != 1 || lv.Weight[0] != 1 || lv.Weight[1] != 3 {
		t.Errorf("a NaN weight: %+v", lv)
	}
}
