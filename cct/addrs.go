package cct

import (
	"cmp"
	"iter"
	"slices"
	"unsafe"
)

// Per-address counts: where in its function each context's own samples
// were taken. A context (a node) is a function reached through a chain of
// call sites, so the call-site addresses of the frames above a sample are
// the tree's already (a node's CallSite); the leaf's own pc is not, and
// annotation (per line, per instruction) and a faithful pprof file need
// it. Each per-thread self keeps the samples by leaf address, with the
// address's line, bounded by maxAddrs a tree: past it, samples count
// under the context's first leaf address, and AddrsDropped says how many.
//
// Only samples are counted by address. The other metrics of a context's
// self (time, the call estimates set later by AddSelf) are shared out over
// its addresses in proportion to their samples where they are needed
// (SplitSelf), which is what they are for a sampled clock.

// maxAddrs bounds the (thread self, address) pairs of one tree: some 60
// bytes each, 16 MiB at most.
const maxAddrs = 1 << 18

// addrSelf is one leaf address of one per-thread self.
type addrSelf struct {
	addr    uint64
	line    int32
	next    int32 // the next address of the same thread self, -1 for none
	samples int64
}

type addrKey struct {
	thread int32 // index in Tree.threads
	addr   uint64
}

// AddrCount is the samples a context's own frame had at one address.
type AddrCount struct {
	Addr    uint64 // module-relative pc
	Line    int    // its source line, 0 if not known
	Samples int64
}

// addAddr counts samples of thread self ti at leaf address addr.
func (t *Tree) addAddr(ti int32, addr uint64, line int, samples int64) {
	if samples == 0 {
		return
	}
	if t.addrIndex == nil {
		t.indexAddrs()
	}
	k := addrKey{ti, addr}
	if i, ok := t.addrIndex[k]; ok {
		t.addrs[i].samples += samples
		return
	}
	if len(t.addrs) >= maxAddrs {
		t.addrsDropped += samples
		return
	}
	i := int32(len(t.addrs))
	th := &t.threads[ti]
	t.addrs = append(t.addrs, addrSelf{addr: addr, line: int32(line), next: th.firstAddr, samples: samples})
	th.firstAddr = i
	t.addrIndex[k] = i
}

// indexAddrs builds the index of the addresses (a Clone has none).
func (t *Tree) indexAddrs() {
	t.addrIndex = make(map[addrKey]int32, len(t.addrs))
	for ti := range t.threads {
		for i := t.threads[ti].firstAddr; i >= 0; i = t.addrs[i].next {
			t.addrIndex[addrKey{int32(ti), t.addrs[i].addr}] = i
		}
	}
}

// copyAddrs adds thread self j of o's addresses to thread self ti of t:
// what rebuilding a tree (Fold, Reroot, Relabel, Merge) keeps of them.
func (t *Tree) copyAddrs(ti int32, o *Tree, j int32) {
	for i := o.threads[j].firstAddr; i >= 0; i = o.addrs[i].next {
		a := &o.addrs[i]
		t.addAddr(ti, a.addr, int(a.line), a.samples)
	}
}

// AddrsDropped is the samples counted under their context's first address
// because the tree held maxAddrs addresses already.
func (t *Tree) AddrsDropped() int64 { return t.addrsDropped }

// LeafAddrs is where id's own samples were taken, by address, ascending,
// over the threads keep accepts (nil: all). Samples counted under no
// address (Add's of a tree full of them; metrics without samples) are
// not in it.
func (t *Tree) LeafAddrs(id NodeID, keep func(tid uint32) bool) []AddrCount {
	var out []AddrCount
	for j := t.nodes[id].firstThread; j >= 0; j = t.threads[j].next {
		if keep != nil && !keep(t.threads[j].tid) {
			continue
		}
		out = t.appendAddrs(out, j)
	}
	slices.SortFunc(out, func(a, b AddrCount) int { return cmp.Compare(a.Addr, b.Addr) })
	// One address of several threads is one.
	w := 0
	for i := range out {
		if w > 0 && out[w-1].Addr == out[i].Addr {
			out[w-1].Samples += out[i].Samples
			continue
		}
		out[w] = out[i]
		w++
	}
	return out[:w]
}

// appendAddrs appends thread self j's addresses (each once) to out.
func (t *Tree) appendAddrs(out []AddrCount, j int32) []AddrCount {
	for i := t.threads[j].firstAddr; i >= 0; i = t.addrs[i].next {
		a := &t.addrs[i]
		out = append(out, AddrCount{a.addr, int(a.line), a.samples})
	}
	return out
}

// threadAddrs is thread self j's addresses, ascending, with what the self
// has beyond them at the context's first leaf address (leafAddr), so that
// their samples add up to the self's.
func (t *Tree) threadAddrs(id NodeID, j int32) []AddrCount {
	out := t.appendAddrs(nil, j)
	var sum int64
	for _, a := range out {
		sum += a.Samples
	}
	n := &t.nodes[id]
	if rest := t.threads[j].m.Samples - sum; rest > 0 || len(out) == 0 {
		found := false
		for k := range out {
			if out[k].Addr == n.leafAddr {
				out[k].Samples += rest
				found = true
				break
			}
		}
		if !found {
			out = append(out, AddrCount{n.leafAddr, n.leafLine, max(rest, 0)})
		}
	}
	slices.SortFunc(out, func(a, b AddrCount) int { return cmp.Compare(a.Addr, b.Addr) })
	return out
}

// sharedFields are the metrics SplitSelf shares out by samples: all but
// Samples (columns.go's accessors).
var sharedFields = [...]func(*Metrics) *int64{timeField, callsField, adjField, flowField, offCPUField, wallField}

// SplitSelf shares m out over addrs in proportion to their samples: each
// part's Samples is its address's, and each other metric's parts add up to
// m's exactly (the remainders of the division go to the parts with the
// largest ones, ties to the lower address).
func SplitSelf(m Metrics, addrs []AddrCount) []Metrics {
	out := make([]Metrics, len(addrs))
	if len(addrs) == 1 {
		out[0] = m
		return out
	}
	var total int64
	for _, a := range addrs {
		total += a.Samples
	}
	for i, a := range addrs {
		out[i].Samples = a.Samples
	}
	rem := make([]int64, len(addrs))
	order := make([]int, len(addrs))
	for _, f := range sharedFields {
		v := *f(&m)
		if v == 0 {
			continue
		}
		if total == 0 {
			*f(&out[0]) += v
			continue
		}
		var given int64
		for i, a := range addrs {
			// v*a.Samples may overflow for large clocks: divide in
			// two steps.
			q, r := v/total, v%total
			part := q*a.Samples + r*a.Samples/total
			rem[i] = r * a.Samples % total
			*f(&out[i]) += part
			given += part
		}
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(rem[y], rem[x]) })
		for k := 0; given != v && k < len(order); k++ {
			step := int64(1)
			if v < given {
				step = -1
			}
			*f(&out[order[k]]) += step
			given += step
		}
	}
	return out
}

// addrBytes is what the addresses hold.
func (t *Tree) addrBytes() int64 {
	return int64(cap(t.addrs))*int64(unsafe.Sizeof(addrSelf{})) +
		mapBytes(len(t.addrIndex), unsafe.Sizeof(addrKey{})+4)
}

// AddrSelves yields id's per-thread selves shared out by leaf address
// (SplitSelf): the parts of a thread add up to its self. Threads go by
// tid, and the parts at the context's first address go before the others,
// so that a profile written this way and read back has the same first
// address. For writers of one location per address.
func (t *Tree) AddrSelves(id NodeID) iter.Seq2[AddrCount, ThreadSelf] {
	return func(yield func(AddrCount, ThreadSelf) bool) {
		var threads []int32
		for j := t.nodes[id].firstThread; j >= 0; j = t.threads[j].next {
			if !t.threads[j].m.IsZero() {
				threads = append(threads, j)
			}
		}
		slices.SortFunc(threads, func(a, b int32) int { return cmp.Compare(t.threads[a].tid, t.threads[b].tid) })
		type part struct {
			a  AddrCount
			ts ThreadSelf
		}
		var first, rest []part
		for _, j := range threads {
			th := &t.threads[j]
			addrs := t.threadAddrs(id, j)
			for k, m := range SplitSelf(th.m, addrs) {
				p := part{addrs[k], ThreadSelf{th.tid, m}}
				if addrs[k].Addr == t.nodes[id].leafAddr {
					first = append(first, p)
				} else {
					rest = append(rest, p)
				}
			}
		}
		for _, p := range append(first, rest...) {
			if !yield(p.a, p.ts) {
				return
			}
		}
	}
}
