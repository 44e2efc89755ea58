package flow

import (
	"math"
	"slices"
	"testing"
)

// twoArms is a function at 0x100: a test, then one of two arms, then a
// join that calls something and returns.
//
//	0x100 b0: cmp; jne 0x110    -> b1 (fallthrough 0x108), b2 (0x110)
//	0x108 b1: ...; jmp 0x118    -> b3
//	0x110 b2: ...               -> b3
//	0x118 b3: call; ret
func twoArms() *CFG {
	return &CFG{Start: 0x100, End: 0x120, Blocks: []Block{
		{Start: 0x100, End: 0x108, Succs: []int{1, 2}},
		{Start: 0x108, End: 0x110, Succs: []int{3}},
		{Start: 0x110, End: 0x118, Succs: []int{3}},
		{Start: 0x118, End: 0x120, Exit: true, Calls: []CallSite{{Addr: 0x118, Ret: 0x11d, Target: 0x400, Block: 3}}},
	}}
}

// TestBlockCounts: the runs between a sample's taken branches count the
// blocks they cover, once each; a run that starts inside a block, or lies
// outside the function, counts nothing.
func TestBlockCounts(t *testing.T) {
	g := twoArms()
	// A branch stack, newest first: the return (0x11f to 0x60), b1's jump
	// (0x10e to 0x118), and the call that entered the function (0x50 to
	// 0x100). The jne fell through: not a taken branch, not in the stack.
	from := []uint64{0x11f, 0x10e, 0x50}
	to := []uint64{0x60, 0x118, 0x100}
	rs := BranchRanges(from, to, nil)
	if want := []Range{{0x118, 0x11f}, {0x100, 0x10e}}; !slices.Equal(rs, want) {
		t.Fatalf("ranges %x, want %x", rs, want)
	}
	counts := g.BlockCounts(rs, nil)
	if want := []uint64{1, 1, 0, 1}; !slices.Equal(counts, want) {
		t.Errorf("counts %v, want %v (b0, b1 and the join ran; b2 did not)", counts, want)
	}
	// The other arm taken: jne from 0x106 to 0x110, then b2 falls through
	// into b3 and returns.
	rs = BranchRanges([]uint64{0x11f, 0x106, 0x50}, []uint64{0x60, 0x110, 0x100}, rs[:0])
	counts = g.BlockCounts(rs, counts)
	if want := []uint64{2, 1, 1, 2}; !slices.Equal(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
	// Inside a block, backwards, or elsewhere: nothing.
	counts = g.BlockCounts([]Range{{0x104, 0x11f}, {0x900, 0x9ff}}, counts)
	counts = g.BlockCounts(BranchRanges([]uint64{0x100, 0x118}, []uint64{0x60, 0x11f}, nil), counts)
	if want := []uint64{2, 1, 1, 2}; !slices.Equal(counts, want) {
		t.Errorf("counts %v after runs that prove nothing, want %v", counts, want)
	}
}

// TestDynamicOutflow: branch stacks that take b1's arm three times for each
// time b2's is taken set the two arms' call sites 3:1, whatever the timer
// saw (1:1 here), keeping their sampled total; the entry's and the join's
// sites, which ran four times, take the same frequency. A site the profile
// never saw keeps what was sampled, an anchor its count, and a site with no
// samples in a block the profile saw is predicted.
func TestDynamicOutflow(t *testing.T) {
	g := twoArms()
	for i := range 3 {
		b := &g.Blocks[i]
		b.Calls = []CallSite{{Addr: b.Start + 1, Ret: b.Start + 6, Target: uint64(0x200 + i), Block: i}}
	}
	var counts []uint64
	left := BranchRanges([]uint64{0x11f, 0x10e, 0x50}, []uint64{0x60, 0x118, 0x100}, nil)
	right := BranchRanges([]uint64{0x11f, 0x106, 0x50}, []uint64{0x60, 0x110, 0x100}, nil)
	for range 3 {
		counts = g.BlockCounts(left, counts)
	}
	counts = g.BlockCounts(right, counts)
	var sites []SiteFlow
	for _, b := range g.Blocks {
		for _, cs := range b.Calls {
			sites = append(sites, SiteFlow{Site: cs})
		}
	}
	if len(sites) != 4 {
		t.Fatalf("%d call sites, want one per block", len(sites))
	}
	for i, w := range []float64{1, 1, 1, 1} {
		sites[i].Outflow = w
	}
	c := DynamicOutflowCorrection(g, sites, counts)
	checkOutflow(t, c, 4*4.0/12, 3*4.0/12, 1*4.0/12, 4*4.0/12)
	if !c.Bound[1] || !c.Bound[2] {
		t.Errorf("bound %v", c.Bound)
	}

	// The entry's site anchored at 10 calls, the join's not sampled, and
	// the second arm never seen by the profile.
	sites[0].Exact, sites[0].Count = true, 10
	sites[3].Outflow = 0
	c = DynamicOutflowCorrection(g, sites, []uint64{4, 3, 0, 4})
	// b1 and b3 share b1's sampled 1 by 3:4.
	checkOutflow(t, c, 10, 3.0/7, 1, 4.0/7)
	if len(c.New) != 1 || c.New[0].Site != 3 || !near(c.New[0].Weight, 4.0/7) || !math.IsNaN(c.Factor[3]) {
		t.Errorf("new edges %+v, factors %v: want the join's site predicted", c.New, c.Factor)
	}

	// Nothing seen, or nothing sampled where it was seen: skipped.
	if c := DynamicOutflowCorrection(g, sites, []uint64{0, 0, 0, 0}); c.Skipped == "" {
		t.Error("a profile that saw no site corrected something")
	}
	sites[1].Outflow = 0
	if c := DynamicOutflowCorrection(g, sites, []uint64{4, 3, 0, 4}); c.Skipped == "" {
		t.Error("no sampled flow under the seen sites, and something corrected")
	}
}
