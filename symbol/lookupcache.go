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
const lookupSlots = 1 << 13

// maxLookupFrames bounds the frames kept; past it, the cache starts over.
const maxLookupFrames = 1 << 15

// lookupEntry is one cached answer: frames[off:off+n] for pc in pid, named
// by mod (n == 0: an empty slot).
type lookupEntry struct {
	pc  uint64
	pid uint32
	off uint32
	n   uint32
	mod *module
}

type lookupCache struct {
	gen    uint64 // the resolver's generation the entries hold for
	slots  *[lookupSlots]lookupEntry
	frames []Frame
}

// slot is the entry for pc in pid, after emptying the cache if gen moved.
func (c *lookupCache) slot(pid int, pc uint64, gen uint64) *lookupEntry {
	if c.slots == nil || c.gen != gen {
		c.reset(gen)
	}
	return &c.slots[((pc^uint64(pid)<<47)*0x9e3779b97f4a7c15)>>(64-13)]
}

// append appends e's frames to dst.
func (c *lookupCache) append(e *lookupEntry, dst []Frame) []Frame {
	return append(dst, c.frames[e.off:e.off+e.n]...)
}

// put fills e with the answer fs for pc in pid.
func (c *lookupCache) put(e *lookupEntry, pid int, pc uint64, mod *module, fs []Frame) {
	if len(fs) == 0 {
		return
	}
	if len(c.frames)+len(fs) > maxLookupFrames {
		c.reset(c.gen)
		e = &c.slots[((pc^uint64(pid)<<47)*0x9e3779b97f4a7c15)>>(64-13)]
	}
	*e = lookupEntry{pc: pc, pid: uint32(pid), off: uint32(len(c.frames)), n: uint32(len(fs)), mod: mod}
	c.frames = append(c.frames, fs...)
}

// reset empties the cache for generation gen.
func (c *lookupCache) reset(gen uint64) {
	c.gen = gen
	if c.slots == nil {
		c.slots = new([lookupSlots]lookupEntry)
	} else {
		clear(c.slots[:])
	}
	clear(c.frames) // the strings they hold
	c.frames = c.frames[:0]
}
