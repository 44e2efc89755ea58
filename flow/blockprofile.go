package flow

import "sort"

// Range is a run of straight-line code a branch stack proves executed: from
// one taken branch's target to the next taken branch's source, inclusive
// (Start is an instruction's address, End the address of the branch that
// left). No branch was taken in between, so every block that starts in it
// ran once.
type Range struct{ Start, End uint64 }

// BranchRanges are the runs between consecutive entries of one sample's
// branch stack, given newest first as the PMU records it: entry i+1's target
// up to entry i's source. Runs that go backwards (a stack cut by an
// interrupt, entries of another context) are dropped.
func BranchRanges(from, to []uint64, dst []Range) []Range {
	for i := 0; i+1 < len(from) && i+1 < len(to); i++ {
		if start, end := to[i+1], from[i]; start <= end {
			dst = append(dst, Range{start, end})
		}
	}
	return dst
}

// BlockCounts adds to counts (one per block, grown as needed) how many of
// rs cover each block of g: a block ran once for each run that starts at or
// before its first instruction and reaches it. Runs outside g count nowhere.
// This is the basic-block profile DynamicOutflowCorrection weighs call sites
// with (lee2007 §3.5).
func (g *CFG) BlockCounts(rs []Range, counts []uint64) []uint64 {
	for _, r := range rs {
		counts = g.AddRun(r, 1, counts)
	}
	return g.growCounts(counts)
}

// AddRun is BlockCounts of one run seen n times.
func (g *CFG) AddRun(r Range, n uint64, counts []uint64) []uint64 {
	counts = g.growCounts(counts)
	if r.End < g.Start || r.Start >= g.End || r.Start > r.End {
		return counts
	}
	// The first block starting at or after r.Start: blocks are sorted by
	// Start and disjoint.
	i := sort.Search(len(g.Blocks), func(i int) bool { return g.Blocks[i].Start >= r.Start })
	if i > 0 && g.Blocks[i-1].End > r.Start {
		// The run starts inside block i-1: a branch target in the middle
		// of a block is not this CFG's, count nothing.
		return counts
	}
	for ; i < len(g.Blocks) && g.Blocks[i].Start <= r.End; i++ {
		counts[i] += n
	}
	return counts
}

func (g *CFG) growCounts(counts []uint64) []uint64 {
	for len(counts) < len(g.Blocks) {
		counts = append(counts, 0)
	}
	return counts
}
