package flow

import (
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
