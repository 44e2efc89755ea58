package flow

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// mkCFG builds a CFG of n blocks with the given edges and Exit blocks, and
// one call site per block (at 0x1000+0x40*block, its direct target
// 0x9000+block), so that NewFDOM builds every row up front.
func mkCFG(n int, exits []int, edges ...[2]int) *CFG {
	g := &CFG{Blocks: make([]Block, n)}
	for v := range g.Blocks {
		b := &g.Blocks[v]
		b.Start, b.End = uint64(0x1000+0x40*v), uint64(0x1040+0x40*v)
		b.Calls = []CallSite{{Addr: b.Start, Ret: b.Start + 5, Target: uint64(0x9000 + v), Block: v}}
	}
	for _, e := range edges {
		g.Blocks[e[0]].Succs = append(g.Blocks[e[0]].Succs, e[1])
	}
	for _, x := range exits {
		g.Blocks[x].Exit = true
	}
	g.Start, g.End = g.Blocks[0].Start, g.Blocks[n-1].End
	return g
}

// relation lists the non-reflexive pairs f claims, as "x>y", in order.
func relation(f *FDOM, n int) string {
	var s []string
	for x := range n {
		for y := range n {
			if x != y && f.Dominates(x, y) {
				s = append(s, fmt.Sprintf("%d>%d", x, y))
			}
		}
	}
	return strings.Join(s, " ")
}

func TestFDOMCases(t *testing.T) {
	for _, c := range []struct {
		name             string
		g                *CFG
		complete, prefix string
	}{
		{
			name:     "chain: each block once, all pairs, prefixes only forward",
			g:        mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}),
			complete: "0>1 0>2 0>3 1>0 1>2 1>3 2>0 2>1 2>3 3>0 3>1 3>2",
			prefix:   "0>1 0>2 0>3 1>2 1>3 2>3",
		},
		{
			name:     "diamond: entry and join bound the arms, arms unrelated",
			g:        mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3}),
			complete: "0>1 0>2 0>3 3>0 3>1 3>2",
			prefix:   "0>1 0>2 0>3",
		},
		{
			// 0 preheader, 1 header, 2 body, 3 after the loop. The body
			// may run any number of times, zero included: neither it nor
			// the preheader bounds the other. The header bounds both.
			name:     "while loop",
			g:        mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{1, 3}),
			complete: "0>3 1>0 1>2 1>3 3>0",
			prefix:   "0>3 1>2 1>3",
		},
		{
			// The body runs at least once on a complete run, so it bounds
			// the preheader, not the other way round.
			name:     "do-while loop",
			g:        mkCFG(3, []int{2}, [2]int{0, 1}, [2]int{1, 1}, [2]int{1, 2}),
			complete: "0>2 1>0 1>2 2>0",
			prefix:   "0>2 1>2",
		},
		{
			// 1 and 2 form a loop entered at both: no header, and nothing
			// bounds either of them but itself.
			name: "irreducible loop",
			g: mkCFG(4, []int{3}, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 2}, [2]int{2, 1},
				[2]int{1, 3}, [2]int{2, 3}),
			complete: "0>3 3>0",
			prefix:   "0>3",
		},
		{
			// 1 loops forever; 3 is unreachable. Complete runs go 0 2, so
			// 2 bounds 0 on them; 1 and 3 are bounded by nothing.
			name:     "infinite loop and unreachable block",
			g:        mkCFG(4, []int{2}, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 1}, [2]int{3, 2}),
			complete: "0>2 2>0",
			prefix:   "0>2",
		},
		{
			// 2 bounds 1 (every 1 is followed by a 2) and 1 bounds 3
			// (every 3 follows a 1), but 2 does not bound 3: 3 leads
			// into a loop that never returns, where 2 has not run.
			name: "composition through a block that cannot return",
			g: mkCFG(5, []int{2}, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 3}, [2]int{3, 4},
				[2]int{4, 4}),
			complete: "0>1 0>2 0>3 1>0 1>2 1>3 2>0 2>1",
			prefix:   "0>1 0>2 0>3 1>2 1>3",
		},
		{
			// 1 may return or go on to 2: it bounds 2, and 2 bounds nothing.
			name:     "exit block with successors",
			g:        mkCFG(3, []int{1, 2}, [2]int{0, 1}, [2]int{1, 2}),
			complete: "0>1 0>2 1>0 1>2",
			prefix:   "0>1 0>2 1>2",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := len(c.g.Blocks)
			if got := relation(NewFDOM(c.g), n); got != c.complete {
				t.Errorf("complete relation\n got %s\nwant %s", got, c.complete)
			}
			if got := relation(NewPrefixFDOM(c.g), n); got != c.prefix {
				t.Errorf("prefix relation\n got %s\nwant %s", got, c.prefix)
			}
			noCalls := *c.g
			noCalls.Blocks = append([]Block(nil), c.g.Blocks...)
			for i := range noCalls.Blocks {
				noCalls.Blocks[i].Calls = nil
			}
			if got := relation(NewFDOM(&noCalls), n); got != c.complete {
				t.Errorf("rows built on demand\n got %s\nwant %s", got, c.complete)
			}
		})
	}
}

func TestFDOMNoRelation(t *testing.T) {
	chain := func() *CFG { return mkCFG(3, []int{2}, [2]int{0, 1}, [2]int{1, 2}) }
	cons := chain()
	cons.Conservative, cons.Why = true, "indirect jump"
	broken := chain()
	broken.Blocks[1].Succs = append(broken.Blocks[1].Succs, 7)
	for name, g := range map[string]*CFG{"conservative": cons, "successor out of range": broken, "empty": {}} {
		f := NewFDOM(g)
		if got := relation(f, len(g.Blocks)); got != "" {
			t.Errorf("%s: claims %s", name, got)
		}
		for x := range g.Blocks {
			if !f.Dominates(x, x) {
				t.Errorf("%s: %d does not FDOM itself", name, x)
			}
		}
	}
	if f := NewFDOM(chain()); f.Dominates(-1, 0) || f.Dominates(0, 3) || f.Dominates(3, 3) {
		t.Error("indices outside the CFG are related")
	}
}

func TestSiteDominates(t *testing.T) {
	g := mkCFG(2, []int{1}, [2]int{0, 1})
	b := &g.Blocks[0]
	b.Calls = append(b.Calls, CallSite{Addr: b.Start + 0x10, Ret: b.Start + 0x15, Block: 0})
	first, second, other := b.Calls[0], b.Calls[1], g.Blocks[1].Calls[0]
	cons := *g
	cons.Conservative = true
	for _, c := range []struct {
		name                     string
		f                        *FDOM
		fwd, back, cross, itself bool
	}{
		{"complete", NewFDOM(g), true, true, true, true},
		{"prefix", NewPrefixFDOM(g), true, false, true, true},
		{"conservative", NewFDOM(&cons), false, false, false, true},
	} {
		if got := c.f.SiteDominates(first, second); got != c.fwd {
			t.Errorf("%s: earlier FDOM later in one block = %v", c.name, got)
		}
		if got := c.f.SiteDominates(second, first); got != c.back {
			t.Errorf("%s: later FDOM earlier in one block = %v", c.name, got)
		}
		if got := c.f.SiteDominates(second, other); got != c.cross {
			t.Errorf("%s: block 0's site FDOM block 1's = %v", c.name, got)
		}
		if got := c.f.SiteDominates(second, second); got != c.itself {
			t.Errorf("%s: a site FDOM itself = %v", c.name, got)
		}
	}
}

// randomCFG makes a small CFG with anything in it: loops, irreducible
// loops, unreachable blocks, loops with no way out, Exit blocks with
// successors, repeated successors, blocks with no call site (whose rows
// are built on demand), and now and then a Conservative one.
func randomCFG(r *rand.Rand) *CFG {
	n := 2 + r.IntN(8)
	g := &CFG{Blocks: make([]Block, n)}
	for v := range g.Blocks {
		b := &g.Blocks[v]
		b.Start, b.End = uint64(0x1000+0x40*v), uint64(0x1040+0x40*v)
		k := 0
		switch p := r.IntN(20); {
		case p < 3:
		case p < 12:
			k = 1
		case p < 19:
			k = 2
		default:
			k = 3
		}
		for range k {
			s := r.IntN(n)
			if v+1 < n && r.IntN(2) == 0 { // forward edges make longer runs
				s = v + 1 + r.IntN(n-v-1)
			}
			b.Succs = append(b.Succs, s)
		}
		b.Exit = k == 0 || r.IntN(8) == 0
		for c := range r.IntN(3) {
			addr := b.Start + uint64(0x10*c)
			target := uint64(0)
			if r.IntN(4) > 0 {
				target = uint64(0x9000 + r.IntN(4)*0x100)
			}
			b.Calls = append(b.Calls, CallSite{Addr: addr, Ret: addr + 5, Target: target, Block: v})
		}
	}
	g.Start, g.End = g.Blocks[0].Start, g.Blocks[n-1].End
	if r.IntN(40) == 0 {
		g.Conservative, g.Why = true, "random"
	}
	return g
}

// runs enumerates every run of g from the entry up to maxVisits block
// visits: every prefix, and as complete every one that stands on an Exit
// block. viol[x][y] records a run where x executed fewer times than y;
// ran[y] that y executed on some complete run, ranP on some prefix.
type runs struct {
	complete, prefixes int
	violC, violP       [][]bool
	ran, ranP          []bool
}

func enumerate(g *CFG, maxVisits int) *runs {
	n := len(g.Blocks)
	e := &runs{violC: make([][]bool, n), violP: make([][]bool, n), ran: make([]bool, n), ranP: make([]bool, n)}
	for x := range n {
		e.violC[x], e.violP[x] = make([]bool, n), make([]bool, n)
	}
	succs := make([][]int, n)
	for v, b := range g.Blocks {
		for _, s := range b.Succs {
			dup := false
			for _, t := range succs[v] {
				dup = dup || t == s
			}
			if !dup {
				succs[v] = append(succs[v], s)
			}
		}
	}
	count := make([]int, n)
	var walk func(v, visits int)
	walk = func(v, visits int) {
		count[v]++
		e.prefixes++
		e.ranP[v] = true
		// Only v's count grew: only pairs (x, v) can newly fail.
		for x := range n {
			if count[x] < count[v] {
				e.violP[x][v] = true
			}
		}
		if g.Blocks[v].Exit {
			e.complete++
			for y := range n {
				if count[y] == 0 {
					continue
				}
				e.ran[y] = true
				for x := range n {
					if count[x] < count[y] {
						e.violC[x][y] = true
					}
				}
			}
		}
		if visits < maxVisits {
			for _, s := range succs[v] {
				walk(s, visits+1)
			}
		}
		count[v]--
	}
	walk(0, 1)
	return e
}

// ruleByDefinition decides the rule of fdom.go from its definitions, by
// reachability with one block removed, to check the trees and the
// component test that compute it.
func ruleByDefinition(g *CFG, prefix bool) [][]bool {
	n := len(g.Blocks)
	// from reports the blocks reachable from v in one step or more, never
	// passing through avoid.
	from := func(v, avoid int) []bool {
		seen := make([]bool, n)
		stack := []int{v}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, s := range g.Blocks[u].Succs {
				if s != avoid && !seen[s] {
					seen[s] = true
					stack = append(stack, s)
				}
			}
		}
		return seen
	}
	exits := func(v, avoid int) bool { // v reaches an Exit block avoiding avoid
		if v == avoid {
			return false
		}
		if g.Blocks[v].Exit {
			return true
		}
		for u, ok := range from(v, avoid) {
			if ok && g.Blocks[u].Exit {
				return true
			}
		}
		return false
	}
	reach := from(0, -1)
	reach[0] = true
	rel := make([][]bool, n)
	for x := range n {
		rel[x] = make([]bool, n)
		rel[x][x] = true
		if g.Conservative {
			continue
		}
		for y := range n {
			if x == y || !reach[x] || !reach[y] {
				continue
			}
			dom := x == 0 || y != 0 && !from(0, x)[y]
			pdom := exits(y, -1) && !exits(y, x)
			free := !from(y, x)[y]
			rel[x][y] = free && (dom || pdom && !prefix)
		}
	}
	return rel
}

func TestFDOMProperty(t *testing.T) {
	const maxVisits, longer = 14, 24
	cfgs := 3000
	if testing.Short() {
		cfgs = 300
	}
	r := rand.New(rand.NewPCG(16, 2007))
	// Over the CFGs that are not Conservative, the pairs x != y whose y
	// ran on some enumerated run: how many the rule claims, how many held
	// on every enumerated run, and how many of those it missed still hold
	// on runs of up to longer visits (the rest were artefacts of the bound).
	type tally struct{ claimed, held, missedLonger int }
	var complete, prefix tally
	var nComplete, nPrefixes, conservative, intransitive int
	for i := range cfgs {
		g := randomCFG(r)
		n := len(g.Blocks)
		e := enumerate(g, maxVisits)
		var eLonger *runs
		nComplete += e.complete
		nPrefixes += e.prefixes
		fc, fp := NewFDOM(g), NewPrefixFDOM(g)
		wantC, wantP := ruleByDefinition(g, false), ruleByDefinition(g, true)
		fail := func(format string, a ...any) {
			t.Helper()
			t.Fatalf("CFG %d %+v: "+format, append([]any{i, g.Blocks}, a...)...)
		}
		if g.Conservative {
			conservative++
		}
		for x := range n {
			for y := range n {
				c, p := fc.Dominates(x, y), fp.Dominates(x, y)
				if c != wantC[x][y] || p != wantP[x][y] {
					fail("%d FDOM %d: complete %v prefix %v, the rule says %v %v",
						x, y, c, p, wantC[x][y], wantP[x][y])
				}
				if c && e.violC[x][y] {
					fail("claims %d FDOM %d, a complete run runs %d fewer times", x, y, x)
				}
				if p && e.violP[x][y] {
					fail("prefix relation claims %d FDOM %d, a run runs %d fewer times", x, y, x)
				}
				if x == y || g.Conservative {
					continue
				}
				for _, s := range []struct {
					t          *tally
					claim, ran bool
					viol       [][]bool
					longer     func() [][]bool
				}{
					{&complete, c, e.ran[y], e.violC, func() [][]bool { return eLonger.violC }},
					{&prefix, p, e.ranP[y], e.violP, func() [][]bool { return eLonger.violP }},
				} {
					if !s.ran {
						continue
					}
					if s.claim {
						s.t.claimed++
					}
					if s.viol[x][y] {
						continue
					}
					s.t.held++
					if !s.claim {
						if eLonger == nil {
							eLonger = enumerate(g, longer)
						}
						if !s.longer()[x][y] {
							s.t.missedLonger++
						}
					}
				}
			}
		}
		// Lemma 3: transitive but for the composition (c) then (b)
		// onto a block that cannot return.
		for x := range n {
			for y := range n {
				for z := range n {
					if fp.Dominates(x, y) && fp.Dominates(y, z) && !fp.Dominates(x, z) {
						fail("prefix relation: %d>%d>%d but not %d>%d", x, y, z, x, z)
					}
					if fc.Dominates(x, y) && fc.Dominates(y, z) && !fc.Dominates(x, z) {
						if fc.pdom.has(int32(z)) || !fp.Dominates(y, z) {
							fail("%d>%d>%d but not %d>%d", x, y, z, x, z)
						}
						intransitive++
					}
				}
			}
		}
	}
	t.Logf("%d CFGs (%d Conservative), %d complete runs and %d prefixes of up to %d blocks enumerated",
		cfgs, conservative, nComplete, nPrefixes, maxVisits)
	t.Logf("complete: claimed %d of %d pairs that held on every enumerated run; of the %d missed, %d still hold on runs of up to %d blocks",
		complete.claimed, complete.held, complete.held-complete.claimed, complete.missedLonger, longer)
	t.Logf("prefix:   claimed %d of %d pairs that held on every enumerated prefix; of the %d missed, %d still hold on prefixes of up to %d blocks",
		prefix.claimed, prefix.held, prefix.held-prefix.claimed, prefix.missedLonger, longer)
	t.Logf("%d intransitive triples, all through a block that cannot return", intransitive)
	if complete.claimed == 0 || prefix.claimed == 0 || intransitive == 0 {
		t.Error("the random CFGs exercised too little")
	}
}
