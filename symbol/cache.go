package symbol

import (
	"os"
	"strconv"
	"strings"

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

// moduleCache holds every module loaded so far. Modules are immutable after
// loading except for their address cache, so processes share them freely.
type moduleCache struct {
	byFile  map[fileKey]*module
	byBuild map[string]*module // by GNU build id
	vdso    map[uint64]*module // by image size: one kernel, one vdso per ABI
}

func newModuleCache() moduleCache {
	return moduleCache{
		byFile:  make(map[fileKey]*module),
		byBuild: make(map[string]*module),
		vdso:    make(map[uint64]*module),
	}
}

// module is one loaded binary: its PT_LOAD segments for translation, and
// its sources of names.
type module struct {
	segs    []segment
	sources []source
	buildID []byte
	unwind  *unwindInfo // nil for modules with nothing to read
	code    *codeCache  // machine code read for the unwinder's checks (code.go)
	// debugCFI is the .debug_frame of a separate debug file, read with
	// its names, for loadUnwind.
	debugCFI *cfi.Table
	// base is the file's base name, for naming what no source names
	// (unnamed.go); "" for images that are not files (the vdso) and
	// for anonymous memory.
	base     string
	offNames map[uint64]string // names of file offsets outside every segment

	// cache memoizes answers per module-relative address, misses included:
	// a profile hits the same pcs over and over, and a hit must cost one
	// map lookup. Frames are stored without Module and Addr, which depend
	// on the mapping and are filled in by Lookup.
	cache map[uint64][]Frame
}

// maxCachedAddrs bounds a module's address cache; past it the cache starts
// over rather than grow without limit in a long session.
const maxCachedAddrs = 1 << 20

func newModule() *module {
	return &module{cache: make(map[uint64][]Frame)}
}

// frames appends the frames for the module-relative address addr.
func (mod *module) frames(addr uint64, name string, dst []Frame) []Frame {
	fs, ok := mod.cache[addr]
	if !ok {
		fs = mod.resolve(addr)
		if len(mod.cache) >= maxCachedAddrs {
			clear(mod.cache)
		}
		mod.cache[addr] = fs
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

func (mod *module) resolve(addr uint64) []Frame {
	for _, s := range mod.sources {
		if fs, ok := s.frames(addr, nil); ok {
			for i := range fs {
				fs[i].Func = demangle(fs[i].Func)
			}
			return fs
		}
	}
	return mod.unnamed(addr)
}

// moduleFor finds or loads the module behind a file mapping of pid.
func (r *Resolver) moduleFor(pid int, m *Mapping) *module {
	if m.Path == vdsoPath {
		return r.vdsoModule(pid, m)
	}
	if !strings.HasPrefix(m.Path, "/") {
		// "" (anonymous), "[vsyscall]", "[heap]", memfd names...: nothing
		// we can open by name.
		return nil
	}
	c := &r.mods
	if len(m.BuildID) > 0 {
		if mod := c.byBuild[string(m.BuildID)]; mod != nil {
			return mod
		}
	}
	key := fileKey{m.Path, m.Major, m.Minor, m.Inode}
	if mod := c.byFile[key]; mod != nil {
		return mod
	}
	mod := loadFile(pid, m)
	if !anonCode(m.Path) {
		// Even a file that could not be read is named by file offsets:
		// the offsets are right for the file that was mapped.
		mod.base = ModuleBase(m.Path)
	}
	c.byFile[key] = mod
	if len(mod.buildID) > 0 {
		if _, ok := c.byBuild[string(mod.buildID)]; !ok {
			c.byBuild[string(mod.buildID)] = mod
		}
	}
	return mod
}

// loadFile opens the file behind m as the target sees it and loads it. A
// file that cannot be opened or parsed yields an empty module, which is
// cached like any other so the failure costs one attempt, not one per pc.
func loadFile(pid int, m *Mapping) *module {
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
	mod := loadELF(f, st.Size(), strings.TrimSuffix(m.Path, " (deleted)"), open)
	loadUnwind(f, mod)
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
