package engine

import "github.com/cctop/cctop/symbol"

// The builder's cache of symbolized user pcs. A sample's user stack is
// mostly pcs seen before in the same process; the resolver answers each
// with a search of the process's mappings and a map lookup in the module
// (a third of ingest on 20-frame stacks). Here a slot picked by a hash of
// the pid and pc gives the frames. Answers are cached
// only where the resolver says they hold until its generation changes
// (symbol.Resolver.LookupStable), and all of them go when it does.

// pcEntry is one cached answer: the frames pcFrames[off:off+n] for pc in
// pid (n == 0: an empty slot).
type pcEntry struct {
	pc  uint64
	pid uint32
	off uint32
	n   uint32
}

// pcSlots is the size of the cache, direct-mapped: a pc's slot is fixed by
// its hash, and a pc that lands in an occupied slot takes it over. A Go map
// took 20-40 ns a lookup here, its hashing and probing more than the rest.
const pcSlots = 1 << 13

// maxPCFrames bounds the frames kept; past it, the cache starts over.
const maxPCFrames = 1 << 15

type pcCache struct {
	gen    uint64 // the resolver's generation the entries hold for
	slots  *[pcSlots]pcEntry
	frames []symbol.Frame
}

// slot is pc's place in the cache.
func slot(pid int, pc uint64) uint64 {
	return ((pc ^ uint64(pid)<<47) * 0x9e3779b97f4a7c15) >> (64 - 13)
}

// lookup appends the frames of pc in pid's address space to dst, as
// symbol.Resolver.Lookup does.
func (b *builder) lookup(pid int, pc uint64, dst []symbol.Frame) []symbol.Frame {
	c := &b.symbols
	if g := b.res.Generation(); g != c.gen || c.slots == nil {
		c.reset(g)
	}
	e := &c.slots[slot(pid, pc)]
	if e.n > 0 && e.pc == pc && e.pid == uint32(pid) {
		return append(dst, c.frames[e.off:e.off+e.n]...)
	}
	n := len(dst)
	dst, stable := b.res.LookupStable(pid, pc, dst)
	if !stable || len(dst) == n {
		return dst
	}
	if g := b.res.Generation(); g != c.gen {
		// The lookup itself moved it (a module dropped over budget).
		c.reset(g)
		return dst
	}
	if len(c.frames)+len(dst)-n > maxPCFrames {
		c.reset(c.gen)
		e = &c.slots[slot(pid, pc)]
	}
	*e = pcEntry{pc: pc, pid: uint32(pid), off: uint32(len(c.frames)), n: uint32(len(dst) - n)}
	c.frames = append(c.frames, dst[n:]...)
	return dst
}

// reset empties the cache for generation g.
func (c *pcCache) reset(g uint64) {
	c.gen = g
	if c.slots == nil {
		c.slots = new([pcSlots]pcEntry)
	} else {
		clear(c.slots[:])
	}
	clear(c.frames) // the strings they hold
	c.frames = c.frames[:0]
}
