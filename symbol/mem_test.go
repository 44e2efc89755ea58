package symbol

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// systemLibc is the C library of Debian-style amd64 systems.
const systemLibc = "/lib/x86_64-linux-gnu/libc.so.6"

// TestMemEstimate loads real modules (libc, with its debug file's DWARF
// when libc6-dbg is installed; the Go toolchain's go command and this test binary,
// named by their pclntabs), resolves a spread of their addresses, and
// compares the bytes the module counted with the heap it holds, measured
// after a GC: the estimate must be within a third of it, after loading
// and after filling the caches.
func TestMemEstimate(t *testing.T) {
	var paths []string
	if _, err := os.Stat(systemLibc); err == nil {
		paths = append(paths, systemLibc)
	}
	if exe, err := os.Executable(); err == nil {
		paths = append(paths, exe)
	}
	if gocmd, err := exec.LookPath("go"); err == nil {
		paths = append(paths, gocmd)
	}
	checked := 0
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		before := heapAlloc()
		mod := loadELF(f, st.Size(), path, os.Open, true)
		loadUnwind(f, mod, true)
		f.Close()
		c := newModuleCache()
		c.insert(fileKey{path: path}, mod)
		loaded := heapAlloc() - before
		estLoaded := mod.acct.n

		n := 0
		for _, s := range mod.sources {
			var tab symtab
			switch s := s.(type) {
			case symtab:
				tab = s
			case *dwarfSource:
				tab = s.syms
			case *goTable:
				if s.tab != nil {
					for i := 0; i < s.tab.nfunc; i += 2 {
						mod.frames(s.tab.text+uint64(s.tab.entryOff(i))+3, "m", nil)
						n++
					}
				}
			}
			for i, sy := range tab {
				if i%2 == 0 {
					mod.frames(sy.start+1, "m", nil)
					mod.frames(sy.start+7, "m", nil)
					n += 2
				}
			}
		}
		if u := mod.unwind; u != nil && u.cfi != nil {
			for a := range mod.cache {
				u.rule(a)
			}
		}
		filled := heapAlloc() - before
		dwarf := false
		for _, s := range mod.sources {
			_, ok := s.(*dwarfSource)
			dwarf = dwarf || ok
		}
		t.Logf("%s (DWARF %v): loaded: heap %d, estimate %d; after %d lookups: heap %d, estimate %d",
			path, dwarf, loaded, estLoaded, n, filled, mod.acct.n)
		if c.bytes != mod.acct.n {
			t.Errorf("%s: cache total %d, module %d", path, c.bytes, mod.acct.n)
		}
		if loaded < 1<<20 {
			continue // small enough for the heap's noise to matter
		}
		checked++
		for _, p := range [][2]int64{{loaded, estLoaded}, {filled, mod.acct.n}} {
			if heap, est := p[0], p[1]; est < heap*3/4 || est > heap*4/3 {
				t.Errorf("%s: estimate %d bytes, heap %d", path, est, heap)
			}
		}
		c.evict(mod)
		if c.bytes != 0 || len(c.byFile) != 0 || len(c.byPath) != 0 || len(c.byBuild) != 0 {
			t.Errorf("%s: after eviction: %d bytes, %d/%d/%d index entries", path, c.bytes, len(c.byFile), len(c.byPath), len(c.byBuild))
		}
		runtime.KeepAlive(mod)
	}
	if checked == 0 {
		t.Skip("no module of a megabyte or more")
	}
}

// heapAlloc is the live heap after a collection.
func heapAlloc() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
