package symbol

import (
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// openGoTableFrom reads path's Go table, through the file itself (mapped)
// or through a reader that is not a file (read).
func openGoTableFrom(t *testing.T, path string, mapped bool) *goTable {
	t.Helper()
	file, size := openSized(t, path)
	var r io.ReaderAt = file
	if !mapped {
		r = io.NewSectionReader(file, 0, size)
	}
	f, err := elf.NewFile(r)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	g := newGoTable(f, r, syms, loadSegments(f.Progs), size)
	if g == nil || g.tab == nil {
		t.Fatalf("%s: no Go 1.18+ table", path)
	}
	return g
}

// openSized opens path for the test, closed at its end, and its size.
func openSized(t *testing.T, path string) (*os.File, int64) {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	st, err := file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return file, st.Size()
}

// selfPCs are pcs of this test binary in functions of several packages.
func selfPCs() []uint64 {
	var pcs []uint64
	for _, fn := range []any{selfTestFunc, TestSelf, NewResolver, strings.Index, runtime.GC, reflect.DeepEqual} {
		entry := uint64(reflect.ValueOf(fn).Pointer())
		pcs = append(pcs, entry, entry+5)
	}
	return pcs
}

// TestGoTableMapped: a Go binary's pclntab mapped from its file answers
// as the one read into memory does, and takes none of the Go heap.
func TestGoTableMapped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tables are mapped on Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	read := openGoTableFrom(t, exe, false)
	if read.fm != nil || read.held < int64(len(read.tab.pclntable)) {
		t.Fatalf("read through a reader: mapped %v, held %d bytes", read.fm != nil, read.held)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mapped := openGoTableFrom(t, exe, true)
	runtime.ReadMemStats(&after)
	if mapped.fm == nil {
		t.Fatal("the table was read, not mapped")
	}
	if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > read.held/8 {
		t.Errorf("mapping a %d-byte table allocated %d bytes of heap", read.held, grew)
	}
	if mapped.held > read.held/8 {
		t.Errorf("a mapped table counts %d bytes held, the read one %d", mapped.held, read.held)
	}
	for _, pc := range selfPCs() {
		want, wok := read.frames(pc, nil)
		got, gok := mapped.frames(pc, nil)
		if !wok || gok != wok || !reflect.DeepEqual(got, want) {
			t.Errorf("frames(%#x): mapped %+v %v, read %+v %v", pc, got, gok, want, wok)
		}
		wd, wok := read.spDelta(pc)
		gd, gok := mapped.spDelta(pc)
		if gd != wd || gok != wok {
			t.Errorf("spDelta(%#x): mapped %d %v, read %d %v", pc, gd, gok, wd, wok)
		}
	}
	we, wok := read.lookupFunc("runtime.GC")
	ge, gok := mapped.lookupFunc("runtime.GC")
	if !wok || ge != we || gok != wok {
		t.Errorf("lookupFunc(runtime.GC): mapped %#x %v, read %#x %v", ge, gok, we, wok)
	}
	mapped.close()
	if _, ok := mapped.frames(selfPCs()[0], nil); ok {
		t.Error("a closed table still answers")
	}
}

// TestGoTableTruncated: a binary cut short while its table is mapped (a
// deploy that rewrites it in place) makes the pages past its new end fault;
// the lookups fail instead of the profiler dying of SIGBUS.
func TestGoTableTruncated(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tables are mapped on Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	g := openGoTableFrom(t, path, true)
	if g.fm == nil {
		t.Fatal("the table was read, not mapped")
	}
	pcs := selfPCs()
	if _, ok := g.frames(pcs[0], nil); !ok {
		t.Fatalf("frames(%#x) found nothing before the cut", pcs[0])
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for _, pc := range pcs[2:] {
		if f, ok := g.frames(pc, []Frame{{Func: "kept"}}); ok || len(f) != 1 || f[0].Func != "kept" {
			t.Errorf("frames(%#x) after the cut = %+v, %v", pc, f, ok)
		}
		if _, ok := g.spDelta(pc); ok {
			t.Errorf("spDelta(%#x) answered after the cut", pc)
		}
		if g.topFrame(pc) {
			t.Errorf("topFrame(%#x) answered after the cut", pc)
		}
	}
	if _, ok := g.lookupFunc("runtime.GC"); ok {
		t.Error("lookupFunc answered after the cut")
	}
	if c := g.funcCands(nil); len(c) != 0 {
		t.Errorf("funcCands gave %d functions after the cut", len(c))
	}
}

// TestGoModuleSymbols: a Go binary's module keeps no function symbol where
// its pclntab names every pc, yet names those pcs and gives their
// functions' extents as the symbols did.
func TestGoModuleSymbols(t *testing.T) {
	gobin, dir := goTool(t), goMainDir(t)
	run(t, dir, []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}, gobin, "build", "-o", "target")
	bin := filepath.Join(dir, "target")
	file, size := openSized(t, bin)
	mod := loadELF(file, size, bin, nil, true)
	var g *goTable
	var kept symtab
	for _, s := range mod.sources {
		switch s := s.(type) {
		case *goTable:
			g = s
		case symtab:
			kept = s
		}
	}
	if g == nil || g.lo >= g.hi {
		t.Fatalf("no Go 1.18+ table with its text range: %+v", g)
	}
	for _, s := range kept {
		if g.covers(s.start) {
			t.Fatalf("symbol %s at %#x kept inside the table's text [%#x, %#x)", s.name, s.start, g.lo, g.hi)
		}
	}
	f, err := elf.NewFile(file)
	if err != nil {
		t.Fatal(err)
	}
	all, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"main.work": true, "runtime.mallocgc": true, "runtime.schedule": true, "runtime.memmove": true}
	for _, sym := range all {
		if !want[sym.Name] || elf.ST_TYPE(sym.Info) != elf.STT_FUNC {
			continue
		}
		delete(want, sym.Name)
		for _, addr := range []uint64{sym.Value, sym.Value + 5} {
			start, end, ok := mod.funcRange(addr)
			if !ok || start != sym.Value || end < sym.Value+sym.Size {
				t.Errorf("%s: funcRange(%#x) = [%#x, %#x) %v, the symbol's [%#x, %#x)", sym.Name, addr, start, end, ok, sym.Value, sym.Value+sym.Size)
			}
			fs := mod.frames(addr, "target", nil)
			if n := len(fs); n == 0 || fs[n-1].Func != sym.Name {
				t.Errorf("%#x named %+v, want %s outermost", addr, fs, sym.Name)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("functions not in the binary's symbols: %v", want)
	}
}
