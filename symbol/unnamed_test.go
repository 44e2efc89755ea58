package symbol

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/symbol/cfi"
)

// fileModule loads path as the resolver does for a mapping of it.
func fileModule(t *testing.T, path string) *module {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	mod := loadELF(f, st.Size(), path, nil, true)
	loadUnwind(f, mod, true)
	mod.base = ModuleBase(path)
	return mod
}

// fileOffsetOf translates a link-time address to a file offset with the
// program headers alone, independently of the package's translation.
func fileOffsetOf(t *testing.T, path string, vaddr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off
		}
	}
	t.Fatalf("%s: %#x in no PT_LOAD", path, vaddr)
	return 0
}

// TestUnnamedStripped: in a stripped build, every pc of the static
// function spin is named "[plt+0xOFF]", OFF the file offset of spin's
// first instruction (from the unstripped build's symbol table and program
// headers), through its FDE; a pc no FDE covers (_init) is named by its
// own offset. Through the resolver, a mapping of the same file under
// another name (same build id) is named after that file, and a pc past
// every segment by its file offset.
func TestUnnamedStripped(t *testing.T) {
	needTool(t, "gcc")
	needTool(t, "strip")
	dir := t.TempDir()
	copySource(t, dir, "plt.c", "plt.c")
	full := filepath.Join(dir, "plt")
	run(t, dir, nil, "gcc", "-O2", "-o", full, "plt.c")
	if err := os.Mkdir(filepath.Join(dir, "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "s", "plt")
	run(t, dir, nil, "strip", "-o", stripped, full)

	f, err := elf.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var spin, initSym elf.Symbol
	for _, s := range syms {
		switch s.Name {
		case "spin":
			spin = s
		case "_init":
			initSym = s
		}
	}
	if spin.Size == 0 || initSym.Value == 0 {
		t.Fatalf("no spin or _init in %s", full)
	}
	want := fmt.Sprintf("[plt+%#x]", fileOffsetOf(t, full, spin.Value))

	mod := fileModule(t, stripped)
	for _, a := range []uint64{spin.Value, spin.Value + 1, spin.Value + spin.Size/2, spin.Value + spin.Size - 1} {
		fs := mod.frames(a, stripped, nil)
		if len(fs) != 1 || fs[0].Func != want || !fs[0].Unnamed || fs[0].Module != stripped || fs[0].Addr != a {
			t.Errorf("%#x: %+v, want %s", a, fs, want)
		}
	}
	// _init has no CFI (crti.o's code carries none): its pcs are named one
	// by one, unless this toolchain gives it an FDE.
	pc := initSym.Value + 4
	wantInit := fileOffsetOf(t, full, pc)
	if ef, err := elf.Open(stripped); err == nil {
		if tab, err := cfi.Load(ef); err == nil {
			if start, ok := tab.FuncStart(pc); ok {
				wantInit = fileOffsetOf(t, full, start)
			}
		}
		ef.Close()
	}
	if fs := mod.frames(pc, stripped, nil); fs[0].Func != fmt.Sprintf("[plt+%#x]", wantInit) || !fs[0].Unnamed {
		t.Errorf("_init+4: %+v, want [plt+%#x]", fs[0], wantInit)
	}

	// The resolver, with the executable segment mapped as ld.so maps it.
	r := NewResolver()
	ef, err := elf.Open(stripped)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var text *elf.Prog
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	const base = 0x555555554000
	m := Mapping{Start: base + text.Vaddr, Limit: base + text.Vaddr + text.Filesz, Offset: text.Off, Path: stripped}
	r.AddMapping(1, m)
	f1 := lookup1(r, 1, base+spin.Value+5)
	if f1.Func != want || f1.Module != stripped || f1.Addr != spin.Value+5 {
		t.Errorf("Lookup: %+v, want %s", f1, want)
	}
	id := r.procs[1].maps[0].mod.buildID
	if len(id) == 0 {
		t.Skip("no build id")
	}
	m.Path, m.BuildID = "/gone/renamed (deleted)", id
	r.AddMapping(2, m)
	if f := lookup1(r, 2, base+spin.Value+5); f.Func != strings.Replace(want, "[plt", "[renamed", 1) || !f.Unnamed {
		t.Errorf("same build id, another name: %+v", f)
	}
	m.Path, m.BuildID, m.Offset = stripped, nil, 1<<40
	r.AddMapping(3, m)
	if f := lookup1(r, 3, m.Start+0x10); f.Func != fmt.Sprintf("[plt+%#x]", uint64(1<<40+0x10)) || f.Addr != 1<<40+0x10 {
		t.Errorf("past every segment: %+v", f)
	}
}
