package engine

import (
	"debug/elf"
	"testing"

	"github.com/cctop/cctop/symbol"
)

// TestPCCacheFollowsMappings: the builder's symbol cache answers as the
// resolver does, and a pc's cached name goes when its process's mappings
// change (another file mapped at the same place, an exit that frees the
// pid for a new process).
func TestPCCacheFollowsMappings(t *testing.T) {
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
	off, err := symbol.FuncOffset(libc, "malloc")
	if text == nil || err != nil {
		t.Skip("no malloc in an executable segment of " + libc)
	}
	const pid = 4242
	m := symbol.Mapping{Start: 0x7f00_0000_0000 + text.Vaddr&^4095, Offset: text.Off &^ 4095, Path: libc}
	m.Limit = m.Start + text.Memsz + 4096
	res := symbol.NewResolver()
	res.AddMapping(pid, m)
	b := newBuilder(res)
	pc := m.Start + off - m.Offset + 1
	name := func() string {
		fs := b.lookup(pid, pc, nil)
		if len(fs) == 0 {
			return ""
		}
		return fs[len(fs)-1].Func
	}
	for i := range 2 { // a miss, then a hit
		if got, want := name(), res.Lookup(pid, pc, nil)[0].Func; got != "malloc" || got != want {
			t.Fatalf("lookup %d: %q, the resolver %q", i, got, want)
		}
	}
	res.AddMapping(pid, symbol.Mapping{Start: m.Start, Limit: m.Limit, Offset: m.Offset, Path: "/nonexistent/other.so"})
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
