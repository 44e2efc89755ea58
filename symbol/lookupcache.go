package symbol

// Lookup's cache by pid and pc. A sample's user stack is mostly pcs seen
// before in the same process; without the cache each costs a search of
// the process's mappings and a map lookup in the module (a third of
// ingest on 20-frame stacks). Here a slot picked by a hash of the pid and
// pc gives the frames. A Go map was tried first: its hashing and probing,
// 20-40 ns a lookup, took most of the gain back. Answers that hold until
// the resolver's generation moves are cached (not JIT code, not pcs
// outside any file), and all of them go when it does.

// lookupSlots is the size of the cache, direct-mapped: a pc that lands in
// an occupied slot takes it over.
const (
	lookupBits  = 13
	lookupSlots = 1 << lookupBits
)

// maxLookupFrames bounds the frames kept; past it, the cache starts over.
const maxLookupFrames = 1 << 15

// lookupEntry is one cached answer: frames[off:off+n] for pc in pid,
// named by mod, while the resolver's generation is gen (n == 0: an empty
// slot). An entry of an older generation is stale: nothing is cleared
// when the generation moves, which on a host where processes come and go
// is at nearly every batch.
type lookupEntry struct {
	pc  uint64
	gen uint64
	pid uint32
	off uint32
	n   uint32
	mod *module
}

type lookupCache struct {
	slots  *[lookupSlots]lookupEntry
	frames []Frame
}

// slot is the entry for pc in pid.
func (c *lookupCache) slot(pid int, pc uint64) *lookupEntry {
	if c.slots == nil {
		c.slots = new([lookupSlots]lookupEntry)
	}
	return &c.slots[pcSlot(pid, pc, lookupBits)]
}

// pcSlot is the slot of pc in pid in a direct-mapped cache of 1<<bits
// slots (Lookup's and the CFI rules').
func pcSlot(pid int, pc uint64, bits uint) uint64 {
	return ((pc ^ uint64(pid)<<47) * 0x9e3779b97f4a7c15) >> (64 - bits)
}

// hit reports whether e holds pc in pid for generation gen.
func (e *lookupEntry) hit(pid int, pc uint64, gen uint64) bool {
	return e.n > 0 && e.pc == pc && e.pid == uint32(pid) && e.gen == gen
}

// append appends e's frames to dst.
func (c *lookupCache) append(e *lookupEntry, dst []Frame) []Frame {
	return append(dst, c.frames[e.off:e.off+e.n]...)
}

// put fills e with the answer fs for pc in pid in generation gen.
func (c *lookupCache) put(e *lookupEntry, pid int, pc uint64, gen uint64, mod *module, fs []Frame) {
	if len(fs) == 0 {
		return
	}
	if len(c.frames)+len(fs) > maxLookupFrames {
		// Starting over drops the stale entries' frames too.
		clear(c.slots[:])
		clear(c.frames) // the strings they hold
		c.frames = c.frames[:0]
	}
	*e = lookupEntry{pc: pc, gen: gen, pid: uint32(pid), off: uint32(len(c.frames)), n: uint32(len(fs)), mod: mod}
	c.frames = append(c.frames, fs...)
}
