package symbol

import (
	"debug/elf"
	"testing"
)

// libcMalloc is libc's code mapped as the kernel maps it, at an address of
// no process, and a pc inside its malloc there.
func libcMalloc(t *testing.T) (Mapping, uint64) {
	t.Helper()
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		t.Skip(err)
	}
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	f.Close()
	off, err := FuncOffset(libc, "malloc")
	if text == nil || err != nil {
		t.Skip("no malloc in an executable segment of " + libc)
	}
	m := Mapping{Start: 0x7f00_0000_0000 + text.Vaddr&^4095, Offset: text.Off &^ 4095, Path: libc}
	m.Limit = m.Start + text.Memsz + 4096
	return m, m.Start + off - m.Offset + 1
}

// TestLookupCacheFollowsMappings: Lookup's cache answers as the resolver
// does without it, and a pc's cached name goes when its process's
// mappings change (another file mapped at the same place, an exit that
// frees the pid for a new process).
func TestLookupCacheFollowsMappings(t *testing.T) {
	const pid = 4242
	m, pc := libcMalloc(t)
	res := NewResolver()
	res.AddMapping(pid, m)
	name := func() string {
		fs := res.Lookup(pid, pc, nil)
		if len(fs) == 0 {
			return ""
		}
		return fs[len(fs)-1].Func
	}
	for i := range 2 { // a miss, then a hit
		fs, _ := res.lookup(pid, pc, nil)
		if got := name(); got != "malloc" || got != fs[0].Func {
			t.Fatalf("lookup %d: %q, uncached %q", i, got, fs[0].Func)
		}
	}
	if e := res.looks.slot(pid, pc); !e.hit(pid, pc, res.gen) {
		t.Fatalf("malloc was not cached: %+v", e)
	}
	res.AddMapping(pid, Mapping{Start: m.Start, Limit: m.Limit, Offset: m.Offset, Path: "/nonexistent/other.so"})
	if got := name(); got == "malloc" {
		t.Errorf("after another file was mapped there: %q", got)
	}
	res.AddMapping(pid, m)
	if got := name(); got != "malloc" {
		t.Fatalf("libc mapped again: %q", got)
	}
	res.Exit(pid)
	if got := name(); got == "malloc" {
		t.Errorf("after the process exited: %q", got)
	}
}

// TestLookupCacheKeepsLRU: under a symbol budget, a module used only
// through Lookup's cache is as recently used as its last lookup: the
// budget drops the module used longer ago, not the one the cache serves.
func TestLookupCacheKeepsLRU(t *testing.T) {
	mods := realModules(t, 2, 8<<20, 4)
	size := func(rm realModule) int64 {
		r := NewResolver()
		pcs := mapOne(r, fakePID, 0, rm)
		r.Lookup(fakePID, pcs[0], nil)
		return r.MemStats().Bytes
	}
	// The smaller one is loaded first and then served from the cache,
	// after the larger one's load: with its uses seen, it is the newer.
	small, big := mods[0], mods[1]
	if size(small) > size(big) {
		small, big = big, small
	}
	r := NewResolver()
	a := mapOne(r, fakePID, 0, small)
	b := mapOne(r, fakePID, 1, big)
	for _, pcs := range [][]uint64{a, b, a} {
		for _, pc := range pcs {
			r.Lookup(fakePID, pc, nil)
		}
	}
	for _, pc := range a {
		if e := r.looks.slot(fakePID, pc); !e.hit(fakePID, pc, r.gen) {
			t.Fatalf("%#x not cached", pc)
		}
	}
	modA := r.procs[fakePID].find(a[0]).mod
	modB := r.procs[fakePID].find(b[0]).mod
	if modA == nil || modB == nil || modA == modB {
		t.Fatal("the two modules were not loaded")
	}
	// Room for the smaller, not both: the larger, used longer ago, goes.
	// Were the cached uses not seen, the smaller would go first, and then
	// the larger too.
	r.SetBudget(modA.acct.n*8/7 + 1)
	if modA.dropped || !modB.dropped {
		t.Errorf("dropped: %s %v, %s %v; want only %s, used longer ago", small.path, modA.dropped, big.path, modB.dropped, big.path)
	}
}
