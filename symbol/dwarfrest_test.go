package symbol

import (
	"slices"
	"testing"
	"time"
)

// TestDWARFRest: libc's debug info (libc6-dbg) lets go of its sections
// after restIdle looks without use, which the module's bytes show; a
// lookup in a unit not parsed yet reads them again and names the pc as a
// resolver that never rested does; after a wake the next rest waits twice
// as long; and a file that cannot be read again leaves the parsed units
// answering and the rest to the symbol table.
func TestDWARFRest(t *testing.T) {
	libcWithDebug(t)
	prog, _ := buildC(t, cBuild{prog: []string{"-fPIE", "-pie", "-DWITH_LIBC"}})
	tg := startTarget(t, prog)
	fresh := func(pc uint64) []Frame {
		r := NewResolver()
		if err := r.LoadProc(tg.pid); err != nil {
			t.Fatal(err)
		}
		return r.Lookup(tg.pid, pc, nil)
	}
	r := NewResolver()
	if err := r.LoadProc(tg.pid); err != nil {
		t.Fatal(err)
	}
	first := r.Lookup(tg.pid, tg.addrs["getpid"], nil)
	if last := first[len(first)-1]; last.Line <= 0 {
		t.Skipf("getpid has no line from libc's debug info: %s", chainString(first))
	}
	dw := libcDWARF(t, r)
	held := r.MemStats().Bytes

	now := time.Unix(1e9, 0)
	looks := func(n int) int {
		rested := 0
		for range n {
			rested += r.RestDebugInfo(now)
			now = now.Add(restEvery)
		}
		return rested
	}
	// The lookup above used the sections: the first look sees that, and
	// restIdle unused looks after it let them go.
	if n := looks(restIdle); n != 0 || dw.rest.resting {
		t.Fatalf("rested after %d looks, want %d unused ones after the use", restIdle, restIdle)
	}
	if n := looks(1); n != 1 || !dw.rest.resting || dw.secs.info != nil {
		t.Fatalf("not resting after %d unused looks (%d rested)", restIdle, n)
	}
	if r.RestDebugInfo(now.Add(-time.Second)) != 0 {
		t.Error("looked again before restEvery")
	}
	rested := r.MemStats()
	if freed := held - rested.Bytes; freed < dw.held {
		t.Errorf("resting freed %d bytes of the module's count, want the sections' %d", freed, dw.held)
	}
	if rested.DebugRests != 1 {
		t.Errorf("DebugRests %d, want 1", rested.DebugRests)
	}

	// memset's IFUNC pick lives in a unit the first lookup did not parse.
	pc := tg.addrs["memset"]
	got := r.Lookup(tg.pid, pc, nil)
	want := fresh(pc)
	if !slices.EqualFunc(got, want, sameFrame) {
		t.Errorf("after a rest: %s, a fresh resolver: %s", chainString(got), chainString(want))
	}
	if dw.rest.resting || r.MemStats().DebugWakes != 1 {
		t.Errorf("resting %v, %d wakes after a lookup in an unparsed unit, want awake and 1", dw.rest.resting, r.MemStats().DebugWakes)
	}
	// The pcs already answered need nothing more.
	if n := looks(1 + restIdle<<1); n != 1 {
		t.Fatalf("%d rests over the doubled idle time, want 1", n)
	}
	again := r.Lookup(tg.pid, tg.addrs["getpid"], nil)
	if !slices.EqualFunc(again, first, sameFrame) || r.MemStats().DebugWakes != 1 {
		t.Errorf("getpid at rest: %s (%d wakes), was %s", chainString(again), r.MemStats().DebugWakes, chainString(first))
	}

	// A file that is not what was loaded: the symbol table names it.
	dw.rest.reopen = func() (dwarfSecs, int64, bool) { return dwarfSecs{}, 0, false }
	var other uint64
	for _, u := range dw.units {
		if !u.parsed {
			for _, ir := range dw.index {
				if dw.units[ir.unit].off == u.off {
					other = ir.lo
				}
			}
			if other != 0 {
				break
			}
		}
	}
	if other == 0 {
		t.Fatal("no unparsed unit with an address")
	}
	if fs, ok := dw.frames(other, nil); ok {
		t.Errorf("a unit of a file that cannot be read again answered %s", chainString(fs))
	}
	if dw.rest.reopen != nil || !dw.rest.resting {
		t.Error("a failed wake should stop waking and keep resting")
	}
}

// libcDWARF is the DWARF source of the libc module r loaded.
func libcDWARF(t *testing.T, r *Resolver) *dwarfSource {
	t.Helper()
	for _, mod := range r.mods.byFile {
		for _, s := range mod.sources {
			if d, ok := s.(*dwarfSource); ok && len(d.units) > 100 {
				return d
			}
		}
	}
	t.Fatal("no libc DWARF source loaded")
	return nil
}

func sameFrame(a, b Frame) bool {
	return a.Func == b.Func && a.File == b.File && a.Line == b.Line && a.Inlined == b.Inlined
}
