package symbol

import (
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cctop/cctop/symbol/cfi"
)

// fileKey identifies a mapped file. The device and inode keep two different
// files at the same path apart (containers, upgraded packages); the path
// keeps mappings apart whose device/inode were not reported (zero).
type fileKey struct {
	path         string
	major, minor uint32
	inode        uint64
}

// moduleCache holds the modules loaded so far. Modules are immutable after
// loading except for their caches, so processes share them freely. With a
// budget, the least recently used are evicted (budget.go).
type moduleCache struct {
	byFile  map[fileKey]*module
	byBuild map[string]*module // by GNU build id
	byPath  map[string]*module // by the path it was loaded from, for ModuleInfo
	vdso    map[uint64]*module // by image size: one kernel, one vdso per ABI
	// namesOnly leaves DWARF out of modules loaded from now on: function
	// names from symbol tables, no source lines or inlined frames
	// (SetNamesOnly).
	namesOnly bool

	// restAt is when RestDebugInfo looks next; rests and wakes count
	// debug info let go and read again (dwarfrest.go).
	restAt       time.Time
	rests, wakes uint64

	bytes  int64 // what the cached modules hold, estimated (mem.go)
	budget int64 // bytes to stay under; math.MaxInt64 for no limit
	// limit is the total that makes a call trim: the budget, or more
	// after a trim that could not reach it (budget.go).
	limit int64
	// addrCap bounds each module's address and rule caches: an eighth of
	// the budget, at most maxCachedAddrs entries.
	addrCap int
	// clock counts the calls that use modules; a module records the
	// clock of the last call that used it.
	clock uint64
	epoch uint64 // for marking the modules live processes map (budget.go)
	// dropped is the clock of the last DropUnmapped: a module whose
	// used is above it was used in the window since.
	dropped uint64

	evictions, reloads uint64
}

func newModuleCache() moduleCache {
	return moduleCache{
		byFile:  make(map[fileKey]*module),
		byBuild: make(map[string]*module),
		byPath:  make(map[string]*module),
		vdso:    make(map[uint64]*module),
		budget:  math.MaxInt64,
		limit:   math.MaxInt64,
		addrCap: maxCachedAddrs,
	}
}

// module is one loaded binary: its PT_LOAD segments for translation, and
// its sources of names.
type module struct {
	segs    []segment
	sources []source
	buildID []byte
	// goBuildID is the Go toolchain's build ID (.note.go.buildid) of a
	// Go binary, which has no GNU one unless linked with -B.
	goBuildID string
	unwind    *unwindInfo // nil for modules with nothing to read
	code      *codeCache  // machine code read for the unwinder's checks (code.go)
	// debugCFI is the .debug_frame of a separate debug file, read with
	// its names, for loadUnwind.
	debugCFI *cfi.Table
	// base is the file's base name, for naming what no source names
	// (unnamed.go); "" for images that are not files (the vdso) and
	// for anonymous memory.
	base     string
	offNames map[uint64]string // names of file offsets outside every segment
	offBytes int64             // what offNames holds, counted in acct

	// cache memoizes answers per module-relative address, misses included:
	// a profile hits the same pcs over and over, and a hit must cost one
	// map lookup. Frames are stored without Module and Addr, which depend
	// on the mapping and are filled in by Lookup.
	cache      map[uint64][]Frame
	cacheBytes int64 // what cache holds, counted in acct

	acct acct    // the bytes the module holds (mem.go)
	key  fileKey // its key in byFile
	used uint64  // the cache's clock when a call last used it
	live uint64  // the cache's epoch when a live process was last seen mapping it
	// dropped: evicted. Only its segments, build id and base name are
	// left; a mapping that still points to it looks its file up again.
	dropped bool
}

// maxCachedAddrs bounds a module's address cache; past it the cache starts
// over rather than grow without limit in a long session. A budget lowers
// the bound (moduleCache.addrCap).
const maxCachedAddrs = 1 << 20

func newModule() *module {
	return &module{cache: make(map[uint64][]Frame)}
}

// frames appends the frames for the module-relative address addr.
func (mod *module) frames(addr uint64, name string, dst []Frame) []Frame {
	fs, ok := mod.cache[addr]
	if !ok {
		var fresh int64
		fs, fresh = mod.resolve(addr)
		if len(mod.cache) >= mod.acct.maxAddrs() {
			// A new map rather than clear: clear keeps the old one's
			// slots, which the budget would go on paying for.
			mod.acct.add(-mod.cacheBytes)
			mod.cache, mod.cacheBytes = make(map[uint64][]Frame), 0
		}
		mod.cache[addr] = fs
		n := addrEntry + framesBytes(fs, fresh)
		mod.cacheBytes += n
		mod.acct.add(n)
	}
	if len(fs) == 0 {
		return append(dst, Frame{Module: name, Addr: addr})
	}
	for _, f := range fs {
		f.Module, f.Addr = name, addr
		if f.Unnamed {
			f.Func = mod.rename(f.Func, name)
		}
		dst = append(dst, f)
	}
	return dst
}

// resolve asks the sources for addr. fresh is the bytes of the names made
// for the answer alone (unnamed and demangled ones), which only the
// address cache will hold.
func (mod *module) resolve(addr uint64) (fs []Frame, fresh int64) {
	for _, s := range mod.sources {
		if fs, ok := s.frames(addr, nil); ok {
			for i := range fs {
				d := demangle(fs[i].Func)
				if unsafe.StringData(d) != unsafe.StringData(fs[i].Func) {
					fresh += int64(len(d))
				}
				fs[i].Func = d
			}
			return fs, fresh
		}
	}
	fs = mod.unnamed(addr)
	for i := range fs {
		fresh += int64(len(fs[i].Func))
	}
	return fs, fresh
}

// moduleFor finds or loads the module behind a file mapping of pid.
// reload says the mapping held a module that was evicted since, for the
// count of reloads. pending: the module is being loaded on another
// goroutine and the lookup is deferred (loads.go); mod is nil until then.
func (r *Resolver) moduleFor(pid int, m *Mapping, reload bool) (mod *module, pending bool) {
	if m.Path == vdsoPath {
		return r.vdsoModule(pid, m), false
	}
	if !strings.HasPrefix(m.Path, "/") {
		// "" (anonymous), "[vsyscall]", "[heap]", memfd names...: nothing
		// we can open by name.
		return nil, false
	}
	c := &r.mods
	if len(m.BuildID) > 0 {
		if mod := c.byBuild[string(m.BuildID)]; mod != nil {
			return mod, false
		}
	}
	key := fileKey{m.Path, m.Major, m.Minor, m.Inode}
	if mod := c.byFile[key]; mod != nil {
		return mod, false
	}
	if ld := r.loads.inflight[key]; ld != nil {
		if !r.settle(ld.ready) {
			return nil, true
		}
		return r.waitLoad(key), false
	}
	if r.loads.deferred {
		r.startLoad(pid, m, key, reload)
		r.loads.missed = true
		return nil, true
	}
	mod = r.loads.load(pid, m, !c.namesOnly)
	r.insertLoaded(key, m, mod, reload)
	return mod, false
}

// insertLoaded puts a module just read from m's file in the cache.
func (r *Resolver) insertLoaded(key fileKey, m *Mapping, mod *module, reload bool) {
	c := &r.mods
	if !anonCode(m.Path) {
		// Even a file that could not be read is named by file offsets:
		// the offsets are right for the file that was mapped.
		mod.base = ModuleBase(m.Path)
	}
	if reload {
		c.reloads++
	}
	c.insert(key, mod)
	// A load ends any wait for growth before the next trim (trim).
	c.limit = min(c.limit, c.budget)
}

// insert puts a freshly loaded module in the cache's indexes and its
// bytes in the total.
func (c *moduleCache) insert(key fileKey, mod *module) {
	mod.key = key
	c.byFile[key] = mod
	if len(mod.buildID) > 0 {
		if _, ok := c.byBuild[string(mod.buildID)]; !ok {
			c.byBuild[string(mod.buildID)] = mod
		}
	}
	c.byPath[key.path] = mod
	c.account(mod)
}

// account counts the module's own struct and indexes, then links its byte
// count to the cache's total.
func (c *moduleCache) account(mod *module) {
	mod.acct.add(int64(unsafe.Sizeof(*mod)) + int64(cap(mod.segs))*sizeSegment +
		int64(cap(mod.buildID)) + int64(len(mod.base)) + 3*keyEntry)
	mod.acct.cache = c
	c.bytes += mod.acct.n
}

// loadFile opens the file behind m as the target sees it and loads it. A
// file that cannot be opened or parsed yields an empty module, which is
// cached like any other so the failure costs one attempt, not one per pc.
func loadFile(pid int, m *Mapping, lines bool) *module {
	open := targetOpener(pid)
	f, err := openMapped(pid, m)
	if err != nil {
		return newModule()
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return newModule()
	}
	mod := loadELF(f, st.Size(), strings.TrimSuffix(m.Path, " (deleted)"), open, lines)
	loadUnwind(f, mod, lines)
	if len(m.BuildID) > 0 && len(mod.buildID) > 0 && string(m.BuildID) != string(mod.buildID) {
		// The file on disk is not what was mapped (upgraded since): its
		// symbols would name the wrong code.
		return newModule()
	}
	return mod
}

// targetOpener opens paths as process pid sees them: through its root
// directory first (a process in another mount namespace), then as is.
func targetOpener(pid int) func(string) (*os.File, error) {
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	return func(path string) (*os.File, error) {
		if pid > 0 {
			if f, err := os.Open(root + path); err == nil {
				return f, nil
			}
		}
		return os.Open(path)
	}
}
