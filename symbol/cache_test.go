package symbol

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestModuleSharing: two processes of one binary share one loaded module
// (keyed by path, device and inode), and a MMAP2 mapping that carries the
// build id finds it under another path without opening anything.
func TestModuleSharing(t *testing.T) {
	prog, _ := buildC(t, cBuilds[1])
	a, b := startTarget(t, prog), startTarget(t, prog)
	r := NewResolver()
	for _, pid := range []int{a.pid, b.pid} {
		if err := r.LoadProc(pid); err != nil {
			t.Fatal(err)
		}
		if f := lookup1(r, pid, map[int]*target{a.pid: a, b.pid: b}[pid].addrs["alpha"]); f.Func != "alpha" {
			t.Fatalf("pid %d: %+v", pid, f)
		}
	}
	modOf := func(pid int, pc uint64) *module {
		m := r.procs[pid].find(pc)
		if m == nil || !m.loaded {
			t.Fatalf("pid %d: no loaded mapping at %#x", pid, pc)
		}
		return m.mod
	}
	ma, mb := modOf(a.pid, a.addrs["alpha"]), modOf(b.pid, b.addrs["alpha"])
	if ma != mb || ma == nil {
		t.Fatalf("modules not shared: %p %p", ma, mb)
	}
	if len(ma.buildID) == 0 {
		t.Skip("no build id")
	}

	// Same file under a name that does not exist, announced with its build
	// id: served from the cache.
	m := r.Mappings(a.pid)[0]
	for _, mm := range r.Mappings(a.pid) {
		if mm.Start <= a.addrs["alpha"] && a.addrs["alpha"] < mm.Limit {
			m = mm
		}
	}
	m.Path, m.Inode, m.BuildID = "/gone/renamed", 0, ma.buildID
	r.AddMapping(777, m)
	if f := lookup1(r, 777, a.addrs["alpha"]); f.Func != "alpha" || f.Module != "/gone/renamed" {
		t.Errorf("by build id: %+v", f)
	}
	if modOf(777, a.addrs["alpha"]) != ma {
		t.Error("build-id mapping loaded a new module")
	}

	// A build id that does not match the file on disk: no symbols, only
	// the file offset, which is right for the file that was mapped.
	m.Path, m.BuildID = prog, []byte("not-this-binary-id!!")
	m.Major, m.Minor, m.Inode = 0, 0, 1 // a key not loaded yet
	r.AddMapping(778, m)
	want := fmt.Sprintf("[%s+%#x]", filepath.Base(prog), a.addrs["alpha"]-m.Start+m.Offset)
	if f := lookup1(r, 778, a.addrs["alpha"]); f.Func != want || !f.Unnamed {
		t.Errorf("mismatched build id: %+v, want %s", f, want)
	}
}
