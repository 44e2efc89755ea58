package flow

import (
	"math/rand/v2"
	"testing"
)

// onceByDefinition decides lemma 4's condition from its definitions, by
// reachability: b reached, on no cycle, and on every walk from the entry
// to an Exit block.
func onceByDefinition(g *CFG) []bool {
	n := len(g.Blocks)
	from := func(v, avoid int) []bool { // reached in one step or more
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
	exits := func(avoid int) bool { // the entry reaches an Exit block avoiding avoid
		if avoid == 0 {
			return false
		}
		if g.Blocks[0].Exit {
			return true
		}
		for u, ok := range from(0, avoid) {
			if ok && u != avoid && g.Blocks[u].Exit {
				return true
			}
		}
		return false
	}
	reach := from(0, -1)
	reach[0] = true
	out := make([]bool, n)
	for b := range n {
		out[b] = !g.Conservative && reach[b] && !from(b, -1)[b] && exits(-1) && !exits(b)
	}
	return out
}

// TestOncePerCall: on random CFGs, OncePerCall is lemma 4's condition,
// and a block it names runs exactly once on every complete run enumerated
// and at most once on every prefix.
func TestOncePerCall(t *testing.T) {
	const maxVisits = 12
	cfgs := 2000
	if testing.Short() {
		cfgs = 200
	}
	r := rand.New(rand.NewPCG(29, 4))
	named, complete := 0, 0
	for i := range cfgs {
		g := randomCFG(r)
		n := len(g.Blocks)
		f, fp := NewFDOM(g), NewPrefixFDOM(g)
		want := onceByDefinition(g)
		var once []int
		for b := range n {
			if got := f.OncePerCall(b); got != want[b] {
				t.Fatalf("CFG %d %+v: OncePerCall(%d) = %v, the definition says %v", i, g.Blocks, b, got, want[b])
			}
			if fp.OncePerCall(b) {
				t.Fatalf("CFG %d: the prefix relation names block %d once per call", i, b)
			}
			if want[b] {
				once = append(once, b)
			}
		}
		if f.OncePerCall(-1) || f.OncePerCall(n) {
			t.Fatal("OncePerCall out of range")
		}
		named += len(once)
		count := make([]int, n)
		var walk func(v, visits int)
		walk = func(v, visits int) {
			count[v]++
			for _, b := range once {
				if count[b] > 1 {
					t.Fatalf("CFG %d %+v: block %d ran twice", i, g.Blocks, b)
				}
				if g.Blocks[v].Exit && count[b] != 1 {
					t.Fatalf("CFG %d %+v: a complete run ending in %d ran block %d %d times", i, g.Blocks, v, b, count[b])
				}
			}
			if g.Blocks[v].Exit {
				complete++
			}
			if visits < maxVisits {
				seen := map[int]bool{}
				for _, s := range g.Blocks[v].Succs {
					if !seen[s] {
						seen[s] = true
						walk(s, visits+1)
					}
				}
			}
			count[v]--
		}
		if len(once) > 0 {
			walk(0, 1)
		}
	}
	t.Logf("%d CFGs: %d blocks once per call, checked on %d complete runs", cfgs, named, complete)
	if named < cfgs/4 || complete == 0 {
		t.Errorf("the random CFGs exercised too little: %d blocks named", named)
	}
}

// Go's prologue: the entry runs again after morestack, the body once.
func TestOncePerCallGoPrologue(t *testing.T) {
	g := mkCFG(4, []int{2}, [2]int{0, 1}, [2]int{0, 3}, [2]int{3, 0}, [2]int{1, 2})
	f := NewFDOM(g)
	for b, want := range []bool{false, true, true, false} {
		if got := f.OncePerCall(b); got != want {
			t.Errorf("block %d: OncePerCall %v, want %v", b, got, want)
		}
	}
	// One block, one return: its call sites run once per call.
	if !NewFDOM(mkCFG(1, []int{0})).OncePerCall(0) {
		t.Error("a function of one block: not once per call")
	}
	// An entry that cannot return has no complete run.
	if NewFDOM(mkCFG(2, nil, [2]int{0, 1}, [2]int{1, 1})).OncePerCall(0) {
		t.Error("a function that never returns: once per call")
	}
}
