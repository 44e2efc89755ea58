package symbol

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// A Resolver that profiles every process of a host for days sees modules
// come and go without end. With a budget it keeps what its modules hold
// (estimated as it is loaded, mem.go) near that many bytes: when a call
// leaves the total over the budget, the least recently used modules are
// evicted, those no live process maps first, until the total is an eighth
// under it, so that a trim, which walks every mapping, is rare.
//
// Eviction happens only at the end of a call (Lookup, UnwindUser), when
// nothing holds a module, and never takes the modules that call used: a
// working set larger than the budget then costs reloads (MemStats.Reloads),
// not wrong names. An evicted module leaves the cache's indexes and keeps
// only its segments, build id and base name; a mapping that still points
// to it loads the file again on its next use (attach), through the same
// path as the first load, so the frames are the same.

// SetBudget bounds the bytes the resolver's modules hold; 0 or less means
// no bound, the default, which keeps every module loaded for the life of
// the resolver. Modules used by the current call are kept even over the
// budget, so the total can exceed it by what one call's modules hold.
func (r *Resolver) SetBudget(bytes int64) {
	c := &r.mods
	if bytes <= 0 {
		bytes = math.MaxInt64
	}
	c.budget, c.limit = bytes, bytes
	r.gen++
	c.addrCap = maxCachedAddrs
	if bytes != math.MaxInt64 {
		c.addrCap = int(min(int64(maxCachedAddrs), max(bytes/8/(addrEntry+sizeFrame), 1024)))
	}
	c.clock++ // no call is under way: every module may go
	if c.bytes > c.limit {
		r.trim()
	}
}

// MemStats is what the resolver holds, for status lines and diagnostics.
type MemStats struct {
	Modules   int   // modules loaded (vdso images included), evicted ones not
	Bytes     int64 // what they hold, estimated as each part is loaded (mem.go)
	Budget    int64 // the bound set with SetBudget; 0 for none
	Evictions uint64
	// Reloads counts modules loaded again for a mapping whose module had
	// been evicted: many of them say the budget is below the working set.
	Reloads   uint64
	Processes int   // processes whose mappings are kept
	Kernel    int64 // the kernel's symbol table, outside the budget
	// DebugRests and DebugWakes count debug info let go while unused and
	// read again when a lookup needed more of it (RestDebugInfo).
	DebugRests, DebugWakes uint64
}

// MemStats reports the resolver's memory. Like every method, it must be
// called from the goroutine that owns the resolver.
func (r *Resolver) MemStats() MemStats {
	c := &r.mods
	s := MemStats{
		Modules:   len(c.byFile) + len(c.vdso),
		Bytes:     c.bytes,
		Evictions: c.evictions,
		Reloads:   c.reloads,
		Processes: len(r.procs),

		DebugRests: c.rests,
		DebugWakes: c.wakes,
	}
	if c.budget != math.MaxInt64 {
		s.Budget = c.budget
	}
	if r.kernel != nil {
		s.Kernel = r.kernel.size
	}
	return s
}

// attach returns the module behind m, loading it on first use and again
// when the one m held was evicted, and marks it used by this call.
func (r *Resolver) attach(pid int, m *mapping) *module {
	mod := m.mod
	if !m.loaded || (mod != nil && mod.dropped) {
		var pending bool
		if mod, pending = r.moduleFor(pid, &m.Mapping, m.loaded); pending {
			return nil // loading: this answer goes without it
		}
		m.mod, m.loaded = mod, true
	}
	if mod != nil {
		mod.used = r.mods.clock
	}
	return mod
}

// maxAddrs is the bound on the module's address and rule caches.
func (a *acct) maxAddrs() int {
	if a.cache != nil {
		return a.cache.addrCap
	}
	return maxCachedAddrs
}

// trim evicts modules until the total is an eighth under the budget:
// first those no process maps, then those mapped, least recently used
// first, never one the current call used. Called when the total passed
// the limit.
func (r *Resolver) trim() {
	r.gen++
	c := &r.mods
	r.markLive()
	cands := make([]*module, 0, len(c.byFile))
	for _, mod := range c.byFile {
		if mod.used != c.clock {
			cands = append(cands, mod)
		}
	}
	slices.SortFunc(cands, func(a, b *module) int {
		if la, lb := a.live == c.epoch, b.live == c.epoch; la != lb {
			if la {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.used, b.used)
	})
	low := c.budget - c.budget/8
	for _, mod := range cands {
		if c.bytes <= low {
			break
		}
		c.evict(mod)
	}
	c.limit = c.budget
	if c.bytes > c.budget {
		// Only this call's modules are left over the budget. Trimming
		// again at every call until another module is used would walk
		// every mapping each time: wait for the total to grow by an
		// eighth of the budget, or for the next load.
		c.limit = c.bytes + c.budget/8
	}
}

// markLive stamps every cached module that a live process maps with a new
// epoch: through the mapping's module once looked up, else through the
// indexes a lookup would use.
func (r *Resolver) markLive() {
	c := &r.mods
	c.epoch++
	for _, p := range r.procs {
		for i := range p.maps {
			m := &p.maps[i]
			mod := m.mod
			if !m.loaded {
				mod = c.cached(&m.Mapping)
			}
			if mod != nil && !mod.dropped {
				mod.live = c.epoch
			}
		}
	}
}

// cached is the module a lookup in m would find without loading, or nil.
func (c *moduleCache) cached(m *Mapping) *module {
	if !strings.HasPrefix(m.Path, "/") {
		return nil
	}
	if len(m.BuildID) > 0 {
		if mod := c.byBuild[string(m.BuildID)]; mod != nil {
			return mod
		}
	}
	return c.byFile[fileKey{m.Path, m.Major, m.Minor, m.Inode}]
}

// evict drops mod from the cache and frees what it loaded.
func (c *moduleCache) evict(mod *module) {
	delete(c.byFile, mod.key)
	if c.byBuild[string(mod.buildID)] == mod {
		delete(c.byBuild, string(mod.buildID))
	}
	if c.byPath[mod.key.path] == mod {
		delete(c.byPath, mod.key.path)
	}
	c.bytes -= mod.acct.n
	mod.acct = acct{}
	mod.sources, mod.unwind, mod.code, mod.debugCFI = nil, nil, nil, nil
	mod.cache, mod.cacheBytes = nil, 0
	mod.offNames, mod.offBytes = nil, 0
	mod.dropped = true
	c.evictions++
}

// overBudget reports whether the call that ends now must trim.
func (c *moduleCache) overBudget() bool { return c.bytes > c.limit }

// DropUnmapped evicts every module that no live process maps and that no
// call used since the previous DropUnmapped, and returns how many. An
// agent calls it between windows: on a host where processes come and go,
// the binaries of those gone are likely not to run again soon, and holding
// them until the budget is reached would make the budget the usual
// footprint rather than the bound. A module used in the window that ends
// stays one more: a shell script's short-lived commands (sh, tr, the C
// library) are each gone at every cut but back in the next window, and
// dropping them made every window read their symbol tables again.
func (r *Resolver) DropUnmapped() int {
	r.gen++
	c := &r.mods
	c.clock++ // between calls: no module is in use
	r.markLive()
	n := 0
	for _, mod := range c.byFile {
		if mod.live != c.epoch && mod.used <= c.dropped {
			c.evict(mod)
			n++
		}
	}
	c.dropped = c.clock
	return n
}
