package flow

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// flows gives the call sites of g, in block and address order, the
// sampled outflows given in that order.
func flows(g *CFG, outflow ...float64) []SiteFlow {
	var s []SiteFlow
	for _, b := range g.Blocks {
		for _, cs := range b.Calls {
			s = append(s, SiteFlow{Site: cs})
		}
	}
	if len(s) != len(outflow) {
		panic("one outflow per call site")
	}
	for i := range s {
		s[i].Outflow = outflow[i]
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(a), math.Abs(b)) }

func checkOutflow(t *testing.T, c Correction, want ...float64) {
	t.Helper()
	if c.Skipped != "" {
		t.Fatalf("skipped: %s", c.Skipped)
	}
	for i := range want {
		if !near(c.Outflow[i], want[i]) {
			t.Errorf("outflows %v, want %v", c.Outflow, want)
			return
		}
	}
}

func TestOutflowIssueExample(t *testing.T) {
	// One block calls parse, transform and emit: they run equally often,
	// whatever the timer saw.
	g := mkCFG(1, []int{0})
	b := &g.Blocks[0]
	b.Calls = []CallSite{
		{Addr: 0x1000, Target: 0xa000, Block: 0}, // parse
		{Addr: 0x1010, Target: 0xb000, Block: 0}, // transform
		{Addr: 0x1020, Target: 0xc000, Block: 0}, // emit
	}
	c := FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.1, 0.6, 0.3))
	checkOutflow(t, c, 1.0/3, 1.0/3, 1.0/3)
	for i, want := range []float64{10.0 / 3, 5.0 / 9, 10.0 / 9} {
		if !near(c.Factor[i], want) {
			t.Errorf("factor %d = %v, want %v", i, c.Factor[i], want)
		}
	}
	if len(c.New) != 0 {
		t.Errorf("new edges %v", c.New)
	}

	// The same block in a CFG that could not be followed: nothing proven,
	// nothing moved.
	g.Conservative = true
	checkOutflow(t, FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.1, 0.6, 0.3)), 0.1, 0.6, 0.3)
}

func diamond() *CFG {
	return mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3})
}

func TestOutflowDiamond(t *testing.T) {
	// The arms are alternatives: their ratio is the program's, not bias.
	g := diamond()
	g.Blocks[0].Calls, g.Blocks[3].Calls = nil, nil
	c := FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.7, 0.3))
	checkOutflow(t, c, 0.7, 0.3)
	if c.Factor[0] != 1 || c.Factor[1] != 1 {
		t.Errorf("factors %v", c.Factor)
	}
	if c.Bound[0] || c.Bound[1] {
		t.Errorf("bound %v: FDOM relates neither arm to the other", c.Bound)
	}

	// Entry and join run once per run, as often as both arms together:
	// they rise to the larger arm, the arms keep their ratio, and the
	// total stays 1.
	g = diamond()
	c = FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.1, 0.5, 0.3, 0.1))
	checkOutflow(t, c, 0.5/1.8, 0.5/1.8, 0.3/1.8, 0.5/1.8)
	for i, b := range c.Bound {
		if !b {
			t.Errorf("bound %v: site %d is related to the entry's", c.Bound, i)
		}
	}
}

func TestOutflowLoops(t *testing.T) {
	// while: 0 before the loop, 1 the header, 2 the body, 3 after. The
	// body may run any number of times, none included, so the site before
	// the loop and the site in the body bound each other in neither
	// direction, whichever is higher.
	while := func() *CFG {
		return mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{1, 3})
	}
	g := while()
	g.Blocks[1].Calls, g.Blocks[3].Calls = nil, nil
	for _, o := range [][]float64{{0.3, 0.7}, {0.7, 0.3}} {
		checkOutflow(t, FDOMOutflowCorrection(NewFDOM(g), flows(g, o...)), o...)
	}
	// The header runs at least once more than the body per run, and as
	// often as the site before the loop at least: it rises to the larger.
	g = while()
	g.Blocks[3].Calls = nil
	checkOutflow(t, FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.5, 0.2, 0.3)), 0.5/1.3, 0.5/1.3, 0.3/1.3)

	// do-while: the body runs at least once per run, so it is raised to
	// the site before the loop; never the other way round.
	g = mkCFG(3, []int{2}, [2]int{0, 1}, [2]int{1, 1}, [2]int{1, 2})
	g.Blocks[2].Calls = nil
	checkOutflow(t, FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.5, 0.1)), 0.3, 0.3)
	checkOutflow(t, FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.1, 0.9)), 0.1, 0.9)
}

func TestOutflowMissingEdge(t *testing.T) {
	// The entry's direct call got no sample, but it runs as often as both
	// arms together: it gets an edge, at least as heavy as the heavier
	// arm. The indirect call beside it has no target to carry flow.
	g := diamond()
	g.Blocks[3].Calls = nil
	g.Blocks[0].Calls = append(g.Blocks[0].Calls, CallSite{Addr: 0x1010, Block: 0})
	c := FDOMOutflowCorrection(NewFDOM(g), flows(g, 0, 0, 0.3, 0.5))
	checkOutflow(t, c, 0.4/1.3, 0, 0.24/1.3, 0.4/1.3)
	if len(c.New) != 1 || c.New[0] != (NewEdge{Site: 0, Addr: 0x1000, Target: 0x9000, Weight: c.Outflow[0]}) {
		t.Errorf("new edges %+v", c.New)
	}
	if !math.IsNaN(c.Factor[0]) || !math.IsNaN(c.Factor[1]) {
		t.Errorf("factors of sites with no samples %v", c.Factor[:2])
	}
}

func TestOutflowAnchors(t *testing.T) {
	// A counted entry caps the arms: the excess of the arm above it
	// leaves the total, the other arm is not touched.
	g := diamond()
	g.Blocks[3].Calls = nil
	s := flows(g, 0.2, 0.6, 0.2)
	s[0].Exact, s[0].Count = true, 0.4
	c := FDOMOutflowCorrection(NewFDOM(g), s)
	checkOutflow(t, c, 0.4, 0.4, 0.2)
	if c.Factor[0] != 2 {
		t.Errorf("anchor's factor %v, want count/sampled = 2", c.Factor[0])
	}

	// A counted join floors the entry (each FDOMs the other) after the
	// rescaling, which the arms alone share.
	g = diamond()
	s = flows(g, 0.2, 0.3, 0.5, 0.5)
	s[3].Exact, s[3].Count = true, 2
	checkOutflow(t, FDOMOutflowCorrection(NewFDOM(g), s), 2, 0.3/1.3, 0.5/1.3, 2)

	// A site with no samples that FDOMs a counted one gets an edge. It
	// was raised to the larger arm first, which the arms paid for in the
	// rescaling, as they would have without the count.
	s = flows(g, 0, 0.3, 0.5, 0.5)
	s[3].Exact, s[3].Count = true, 2
	c = FDOMOutflowCorrection(NewFDOM(g), s)
	checkOutflow(t, c, 2, 0.24/1.3, 0.4/1.3, 2)
	if len(c.New) != 1 || c.New[0].Site != 0 || c.New[0].Weight != 2 {
		t.Errorf("new edges %+v", c.New)
	}

	// Two counts FDOM says must be equal, and are not: the relation does
	// not describe these runs, so nothing moves.
	s = flows(g, 0.2, 0.3, 0.5, 0.5)
	s[0].Exact, s[0].Count = true, 1
	s[3].Exact, s[3].Count = true, 2
	c = FDOMOutflowCorrection(NewFDOM(g), s)
	if !strings.Contains(c.Skipped, "contradict") || c.Outflow[1] != 0.3 || c.Factor[3] != 1 {
		t.Errorf("contradicting anchors: %+v", c)
	}
}

func TestOutflowBadInput(t *testing.T) {
	g := diamond()
	for _, bad := range []float64{math.NaN(), -1, math.Inf(1)} {
		c := FDOMOutflowCorrection(NewFDOM(g), flows(g, 0.1, bad, 0.3, 0.1))
		if c.Skipped == "" || c.Outflow[0] != 0.1 {
			t.Errorf("outflow %v: %+v", bad, c)
		}
	}
	if c := FDOMOutflowCorrection(NewFDOM(g), nil); len(c.Outflow) != 0 || c.Skipped != "" {
		t.Errorf("no sites: %+v", c)
	}
}

func TestOutflowProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	funcs, pairs, raised, predicted, anchored, skipped := 0, 0, 0, 0, 0, 0
	for range 5000 {
		g := randomCFG(r)
		f := NewFDOM(g)
		var s []SiteFlow
		for _, b := range g.Blocks {
			for _, cs := range b.Calls {
				sf := SiteFlow{Site: cs}
				if r.IntN(3) > 0 {
					sf.Outflow = float64(1+r.IntN(1000)) / 100
				}
				if r.IntN(8) == 0 {
					sf.Exact, sf.Count = true, float64(r.IntN(1000))/100
				}
				s = append(s, sf)
			}
		}
		if len(s) == 0 {
			continue
		}
		funcs++
		c := FDOMOutflowCorrection(f, s)
		if c.Skipped != "" {
			if !strings.Contains(c.Skipped, "contradict") {
				t.Fatalf("skipped: %s", c.Skipped)
			}
			skipped++
			continue
		}
		n := len(s)
		active := func(i int) bool { return s[i].Exact || s[i].Outflow > 0 || s[i].Site.Target != 0 }
		before, after, bound := 0.0, 0.0, false
		for i := range n {
			if s[i].Exact {
				anchored++
				if c.Outflow[i] != s[i].Count {
					t.Fatalf("anchor %d moved: %v -> %v", i, s[i].Count, c.Outflow[i])
				}
			} else {
				before += s[i].Outflow
				after += c.Outflow[i]
			}
			if !active(i) && c.Outflow[i] != 0 {
				t.Fatalf("site %d with no samples and no target got %v", i, c.Outflow[i])
			}
			if (s[i].Outflow == 0) != math.IsNaN(c.Factor[i]) ||
				s[i].Outflow > 0 && !near(c.Factor[i], c.Outflow[i]/s[i].Outflow) {
				t.Fatalf("site %d: factor %v for %v -> %v", i, c.Factor[i], s[i].Outflow, c.Outflow[i])
			}
			if s[i].Outflow == 0 && c.Outflow[i] > 0 && s[i].Site.Target != 0 {
				predicted++
			}
			for j := range n {
				if i == j || !active(i) || !active(j) || !f.SiteDominates(s[i].Site, s[j].Site) {
					continue
				}
				pairs++
				if c.Outflow[i] < c.Outflow[j] {
					t.Fatalf("%d FDOM %d but %v < %v after correction (%+v)", i, j, c.Outflow[i], c.Outflow[j], s)
				}
				if s[i].Outflow < s[j].Outflow {
					raised++
				}
				bound = bound || s[i].Exact != s[j].Exact
			}
		}
		if !bound && !near(before, after) {
			t.Fatalf("total %v -> %v with no anchor bounding a sampled site", before, after)
		}
		want := 0
		for i := range n {
			if s[i].Outflow == 0 && c.Outflow[i] > 0 && s[i].Site.Target != 0 {
				want++
			}
		}
		if len(c.New) != want {
			t.Fatalf("%d new edges, %d sites gained flow from nothing", len(c.New), want)
		}
		if bound {
			continue
		}
		// No site was raised further than the largest it FDOMs, through
		// any chain of pairs, before the common rescaling.
		closed := make([][]bool, n)
		for i := range n {
			closed[i] = make([]bool, n)
			for j := range n {
				closed[i][j] = f.SiteDominates(s[i].Site, s[j].Site)
			}
		}
		for k := range n {
			for i := range n {
				for j := range n {
					closed[i][j] = closed[i][j] || closed[i][k] && closed[k][j]
				}
			}
		}
		var raisedTo []float64
		sum := 0.0
		for i := range n {
			m := 0.0
			for j := range n {
				if active(i) && !s[i].Exact && active(j) && !s[j].Exact && closed[i][j] {
					m = max(m, s[j].Outflow)
				}
			}
			raisedTo = append(raisedTo, m)
			sum += m
		}
		for i := range n {
			if !s[i].Exact && sum > 0 && !near(c.Outflow[i], raisedTo[i]*before/sum) {
				t.Fatalf("site %d corrected to %v, the largest it FDOMs rescaled is %v", i, c.Outflow[i], raisedTo[i]*before/sum)
			}
		}
		// Corrected once, nothing is left to correct.
		again := make([]SiteFlow, n)
		for i := range s {
			again[i] = s[i]
			if !s[i].Exact {
				again[i].Outflow = c.Outflow[i]
			}
		}
		for i, o := range FDOMOutflowCorrection(f, again).Outflow {
			if !near(o, c.Outflow[i]) {
				t.Fatalf("a second correction moved site %d: %v -> %v", i, c.Outflow[i], o)
			}
		}
	}
	t.Logf("%d functions (%d skipped for contradicting counts), %d FDOM pairs between sites, %d violated before correction, %d edges predicted, %d anchors",
		funcs, skipped, pairs, raised, predicted, anchored)
	if raised == 0 || predicted == 0 || skipped == 0 {
		t.Error("the random functions exercised too little")
	}
}
