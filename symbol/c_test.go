package symbol

import (
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cBuild describes how to build the C target and what it maps.
type cBuild struct {
	name    string
	prog    []string // extra gcc flags for the program
	lib     []string // gcc flags for libcct.so; nil: no library
	progSym []string // functions of the program to check
	libSym  []string // functions of the library to check
}

var cBuilds = []cBuild{
	{name: "nopie", prog: []string{"-no-pie"}, progSym: []string{"alpha", "beta", "gamma_local", "main"}},
	{name: "pie", prog: []string{"-fPIE", "-pie"}, progSym: []string{"alpha", "beta", "gamma_local", "main"}},
	{
		name: "shared", prog: []string{"-fPIE", "-pie", "-DWITH_LIB"},
		lib:     []string{"-shared", "-fPIC"},
		progSym: []string{"alpha", "main"}, libSym: []string{"lib_global", "lib_local"},
	},
	{
		// Text linked at 0x201000 but stored at file offset 0x1000: a
		// translation that treats the file offset as the address is off
		// by 0x200000, one that ignores the mapping offset is off by the
		// segment start.
		name: "shared-textseg", prog: []string{"-no-pie", "-DWITH_LIB"},
		lib:     []string{"-shared", "-fPIC", "-Wl,-Ttext-segment=0x200000"},
		progSym: []string{"beta"}, libSym: []string{"lib_global", "lib_local"},
	},
}

// buildC builds testdata/src/prog.c (and lib.c) in a temp dir and returns
// the program's and the library's paths.
func buildC(t *testing.T, b cBuild) (prog, lib string) {
	t.Helper()
	needTool(t, "gcc")
	dir := t.TempDir()
	copySource(t, dir, "prog.c", "prog.c")
	args := []string{"-O1", "-g0", "-o", "prog", "prog.c"}
	if b.lib != nil {
		copySource(t, dir, "lib.c", "lib.c")
		run(t, dir, nil, "gcc", append([]string{"-O1", "-o", "libcct.so", "lib.c"}, b.lib...)...)
		args = append(args, "-L"+dir, "-lcct", "-Wl,-rpath,"+dir)
		lib = realPath(t, filepath.Join(dir, "libcct.so"))
	}
	run(t, dir, nil, "gcc", append(args, b.prog...)...)
	return realPath(t, filepath.Join(dir, "prog")), lib
}

func TestCPrograms(t *testing.T) {
	for _, b := range cBuilds {
		t.Run(b.name, func(t *testing.T) {
			prog, lib := buildC(t, b)
			tg := startTarget(t, prog)
			r := NewResolver()
			if err := r.LoadProc(tg.pid); err != nil {
				t.Fatal(err)
			}
			check := func(path string, names []string) {
				for _, name := range names {
					pc := tg.addrs[name]
					want := elfSymbol(t, path, name)
					for _, d := range []uint64{0, 1} {
						f := lookup1(r, tg.pid, pc+d)
						if f.Func != name || f.Module != path || f.Addr != want+d {
							t.Errorf("Lookup(%s+%d = %#x) = %+v, want Func %s Module %s Addr %#x",
								name, d, pc+d, f, name, path, want+d)
						}
					}
				}
			}
			check(prog, b.progSym)
			if lib != "" {
				check(lib, b.libSym)
			}
			// An address no mapping covers has no module and keeps the pc.
			if f := lookup1(r, tg.pid, 8); f != (Frame{Addr: 8}) {
				t.Errorf("Lookup(8) = %+v", f)
			}
		})
	}
}

// TestLibc checks libc names from .dynsym, and, when libc6-dbg is
// installed, the local symbols only its separate debug file has.
func TestLibc(t *testing.T) {
	prog, _ := buildC(t, cBuild{prog: []string{"-fPIE", "-pie", "-DWITH_LIBC"}})
	tg := startTarget(t, prog)
	r := NewResolver()
	if err := r.LoadProc(tg.pid); err != nil {
		t.Fatal(err)
	}
	getpid := lookup1(r, tg.pid, tg.addrs["getpid"])
	if !strings.HasPrefix(filepath.Base(getpid.Module), "libc") {
		t.Fatalf("getpid in module %q, want libc", getpid.Module)
	}
	if getpid.Func != "getpid" && getpid.Func != "__getpid" {
		t.Errorf("getpid resolved to %+v", getpid)
	}
	libc := getpid.Module

	f, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	id := buildID(f)
	dyn, _ := f.DynamicSymbols()
	f.Close()
	if len(id) < 2 {
		t.Skip("libc has no build id")
	}
	h := hex.EncodeToString(id)
	dbg := filepath.Join("/usr/lib/debug/.build-id", h[:2], h[2:]+".debug")
	if _, err := os.Stat(dbg); err != nil {
		t.Skipf("no debug file for libc (%s): install libc6-dbg", dbg)
	}
	m := lookup1(r, tg.pid, tg.addrs["memset"])
	if !strings.HasPrefix(m.Func, "__memset_") {
		t.Fatalf("memset implementation resolved to %+v, want __memset_*", m)
	}
	for _, s := range dyn {
		if s.Name == m.Func {
			t.Fatalf("%s is in libc's .dynsym; the test means to prove the debug file's .symtab is used", m.Func)
		}
	}
	t.Logf("memset -> %s", m.Func)
}

// TestDebugLink strips the program and finds its symbols again in a
// separate debug file: by build id, by .gnu_debuglink next to it and in
// .debug/ (checked by CRC when there are no build ids), and not at all when
// the debug file does not match.
func TestDebugLink(t *testing.T) {
	needTool(t, "objcopy")
	prog, _ := buildC(t, cBuild{prog: []string{"-no-pie"}})
	want := elfSymbol(t, prog, "gamma_local")

	cases := []struct {
		name string
		prep func(t *testing.T, d string) // builds d/stripped and its debug file
		ok   bool
	}{
		{"same-dir", func(t *testing.T, d string) {
			run(t, d, nil, "objcopy", "--only-keep-debug", prog, "stripped.debug")
			run(t, d, nil, "objcopy", "--strip-all", "--add-gnu-debuglink=stripped.debug", prog, "stripped")
		}, true},
		{"dot-debug-crc", func(t *testing.T, d string) {
			run(t, d, nil, "objcopy", "--remove-section=.note.gnu.build-id", prog, "nobid")
			os.Mkdir(filepath.Join(d, ".debug"), 0o755)
			run(t, d, nil, "objcopy", "--only-keep-debug", "nobid", ".debug/stripped.debug")
			run(t, d, nil, "objcopy", "--strip-all", "--add-gnu-debuglink=.debug/stripped.debug", "nobid", "stripped")
		}, true},
		{"crc-mismatch", func(t *testing.T, d string) {
			run(t, d, nil, "objcopy", "--remove-section=.note.gnu.build-id", prog, "nobid")
			run(t, d, nil, "objcopy", "--only-keep-debug", "nobid", "stripped.debug")
			run(t, d, nil, "objcopy", "--strip-all", "--add-gnu-debuglink=stripped.debug", "nobid", "stripped")
			// Same name, different contents: must not be trusted.
			run(t, d, nil, "objcopy", "--add-section", ".junk=nobid", "stripped.debug")
		}, false},
		{"build-id-dir", func(t *testing.T, d string) {
			f, err := elf.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			h := hex.EncodeToString(buildID(f))
			f.Close()
			if h == "" {
				t.Skip("gcc made no build id")
			}
			bd := filepath.Join(d, "debugroot", ".build-id", h[:2])
			os.MkdirAll(bd, 0o755)
			run(t, d, nil, "objcopy", "--only-keep-debug", prog, filepath.Join(bd, h[2:]+".debug"))
			run(t, d, nil, "objcopy", "--strip-all", prog, "stripped")
			old := debugDirs
			debugDirs = []string{filepath.Join(d, "debugroot")}
			t.Cleanup(func() { debugDirs = old })
		}, true},
		{"no-debug", func(t *testing.T, d string) {
			run(t, d, nil, "objcopy", "--strip-all", prog, "stripped")
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			c.prep(t, d)
			stripped := realPath(t, filepath.Join(d, "stripped"))
			if syms, _ := elfOpenSymbols(stripped); len(syms) != 0 {
				t.Fatal("strip left a .symtab")
			}
			tg := startTarget(t, stripped)
			r := NewResolver()
			if err := r.LoadProc(tg.pid); err != nil {
				t.Fatal(err)
			}
			f := lookup1(r, tg.pid, tg.addrs["gamma_local"])
			if f.Addr != want || f.Module != stripped {
				t.Errorf("frame %+v, want Addr %#x Module %s", f, want, stripped)
			}
			if got := f.Func == "gamma_local"; got != c.ok {
				t.Errorf("Func = %q, found = %v, want found = %v", f.Func, got, c.ok)
			}
		})
	}
}

func elfOpenSymbols(path string) ([]elf.Symbol, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Symbols()
}

// TestFuncOffset checks the uprobe offset against the section headers:
// offset = value - sh_addr + sh_offset of .text.
func TestFuncOffset(t *testing.T) {
	for _, b := range cBuilds[:2] {
		t.Run(b.name, func(t *testing.T) {
			prog, _ := buildC(t, b)
			f, err := elf.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			text := f.Section(".text")
			f.Close()
			for _, name := range []string{"alpha", "gamma_local", "main"} {
				want := elfSymbol(t, prog, name) - text.Addr + text.Offset
				got, err := FuncOffset(prog, name)
				if err != nil || got != want {
					t.Errorf("FuncOffset(%s) = %#x, %v; want %#x", name, got, err, want)
				}
			}
			if _, err := FuncOffset(prog, "no_such_function"); err == nil {
				t.Error("FuncOffset of a missing function succeeded")
			}
		})
	}
	if _, err := FuncOffset("/nonexistent", "x"); err == nil {
		t.Error("FuncOffset of a missing file succeeded")
	}
}
