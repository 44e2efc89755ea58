package sampler

// Branch stacks (PERF_SAMPLE_BRANCH_STACK): the last taken branches the CPU
// recorded before a sample (Intel LBR, Arm BRBE, AMD's LbrExtV2), newest
// first. Between one branch's target and the next newer branch's source the
// code ran straight through, so a sample's stack is a piece of the basic
// block profile that control-flow correction weighs call sites with.

// Branch is one taken branch of a sample's branch stack.
type Branch struct {
	From, To uint64
	// Flags is struct perf_branch_entry's bitfield word: mispred:1,
	// predicted:1, in_tx:1, abort:1, cycles:16, type:4, spec:2,
	// new_type:4, priv:3 (linux/perf_event.h, little-endian bit order).
	Flags uint64
}

// Mispred reports whether the branch was mispredicted.
func (b Branch) Mispred() bool { return b.Flags&1 != 0 }

// Cycles is the core cycles since the previous branch, 0 where the PMU
// does not count them.
func (b Branch) Cycles() uint16 { return uint16(b.Flags >> 4) }

// Type is the branch type (PERF_BR_*: 1 cond, 2 uncond, 3 ind, 4 call,
// 5 ind_call, 6 ret, ...), 0 where the PMU does not say.
func (b Branch) Type() uint8 { return uint8(b.Flags>>20) & 0xf }

// Branch sample types (perf_event_attr.branch_sample_type).
const (
	BranchUser    = 1 << 0 // branches to user space
	BranchKernel  = 1 << 1
	BranchAny     = 1 << 3 // every taken branch
	branchHWIndex = 1 << 17
	// branchCounters (Linux 6.8) appends an occurrence counter per entry.
	branchCounters = 1 << 19
)

// branchStack decodes a sample's branch stack: nr, hw_idx when the branch
// sample type asks for it, nr entries, and nr counters with
// PERF_SAMPLE_BRANCH_COUNTERS.
func (d *decoder) branchStack(c *cursor, r *Record) {
	n := c.u64()
	words := uint64(3)
	if d.cur.BranchType&branchCounters != 0 {
		words = 4
	}
	if d.cur.BranchType&branchHWIndex != 0 {
		c.u64()
	}
	if n > uint64(len(c.b))/(8*words) {
		c.bad = true
		return
	}
	d.branches = d.branches[:0]
	for i := uint64(0); i < n; i++ {
		d.branches = append(d.branches, Branch{From: c.u64(), To: c.u64(), Flags: c.u64()})
	}
	if words == 4 {
		c.bytes(int(8 * n))
	}
	r.Branches = d.branches
}
