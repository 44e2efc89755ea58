package engine

import (
	"sort"

	"github.com/cctop/cctop/flow"
	"github.com/cctop/cctop/sampler"
)

// The basic-block profile of branch stacks (Intel LBR, Arm BRBE), for
// lee2007's DynamicOutflowCorrection. Each sample's stack of taken branches
// proves the straight runs of code between them ran; the sampling path only
// counts those runs by process and address, and the correction, off it,
// places them in the functions' CFGs.

// maxBranchRuns bounds the distinct runs counted between two placings, and
// maxPlacedRuns those placed over a whole profile: hot code repeats a few
// thousand; a cold tail past this many is not worth the memory (a large
// program sampled for hours would otherwise add runs without end).
const (
	maxBranchRuns = 1 << 16
	maxPlacedRuns = 1 << 18
)

// branchRun is a run of straight-line code in one process, as the branch
// stack gives it: runtime addresses.
type branchRun struct {
	pid        uint32
	start, end uint64
}

// branchProfile counts the runs of the samples' branch stacks.
type branchProfile struct {
	runs    map[branchRun]uint64 // not placed yet
	placed  map[string]map[flow.Range]uint64
	nPlaced int       // distinct runs in placed
	sorted  blockRuns // placed, by module and start
	dropped uint64    // runs not kept past maxBranchRuns or maxPlacedRuns
	scratch []flow.Range
	from    []uint64
	to      []uint64
}

// add counts the runs of r's branch stack: user space only, as the
// corrected call sites are.
func (p *branchProfile) add(r *sampler.Record) {
	if len(r.Branches) < 2 {
		return
	}
	p.from, p.to = p.from[:0], p.to[:0]
	for _, b := range r.Branches {
		p.from, p.to = append(p.from, b.From), append(p.to, b.To)
	}
	p.scratch = flow.BranchRanges(p.from, p.to, p.scratch[:0])
	if p.runs == nil {
		p.runs = map[branchRun]uint64{}
	}
	for _, rg := range p.scratch {
		if rg.Start >= 1<<47 || rg.End >= 1<<47 {
			continue // the kernel's half
		}
		k := branchRun{r.PID, rg.Start, rg.End}
		if _, ok := p.runs[k]; !ok && len(p.runs) >= maxBranchRuns {
			p.dropped++
			continue
		}
		p.runs[k]++
	}
}

// moduleRun is a branch run in a module's ELF addresses, and how often it
// was seen.
type moduleRun struct {
	flow.Range
	n uint64
}

// blockRuns are the runs of a profile by module, sorted by start: what
// flowFixer reads the block counts of a function from.
type blockRuns map[string][]moduleRun

// placeBranchRuns moves the runs counted since the last call into the
// profile's placed runs, in module addresses, with the builder's resolver
// (on its goroutine, which owns it), and returns them sorted; nil when the
// samples carried no branch stack. A run whose ends fall in different
// modules is dropped. A correction running on another goroutine reads the
// result: call it while none runs.
func (b *builder) placeBranchRuns() blockRuns {
	p := &b.branches
	if len(p.runs) == 0 {
		return p.sorted
	}
	if p.placed == nil {
		p.placed = map[string]map[flow.Range]uint64{}
	}
	for k, n := range p.runs {
		start := b.res.Lookup(int(k.pid), k.start, b.frames[:0])
		if len(start) == 0 {
			continue
		}
		s := start[len(start)-1]
		end := b.res.Lookup(int(k.pid), k.end, start[len(start):])
		if len(end) == 0 {
			continue
		}
		e := end[len(end)-1]
		if s.Module == "" || s.Module != e.Module || e.Addr < s.Addr {
			continue
		}
		m := p.placed[s.Module]
		if m == nil {
			m = map[flow.Range]uint64{}
			p.placed[s.Module] = m
		}
		r := flow.Range{Start: s.Addr, End: e.Addr}
		if _, ok := m[r]; !ok {
			if p.nPlaced >= maxPlacedRuns {
				p.dropped++
				continue
			}
			p.nPlaced++
		}
		m[r] += n
	}
	clear(p.runs)
	p.sorted = blockRuns{}
	for mod, m := range p.placed {
		rs := make([]moduleRun, 0, len(m))
		for r, n := range m {
			rs = append(rs, moduleRun{r, n})
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
		p.sorted[mod] = rs
	}
	return p.sorted
}

// blockCounts is the basic-block profile of g, a function of module, from
// runs: nil when no run starts in it.
func (r blockRuns) blockCounts(module string, g *flow.CFG) []uint64 {
	rs := r[module]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Start >= g.Start })
	var counts []uint64
	for ; i < len(rs) && rs[i].Start < g.End; i++ {
		counts = g.AddRun(rs[i].Range, rs[i].n, counts)
	}
	return counts
}
