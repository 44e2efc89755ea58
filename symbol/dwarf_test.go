package symbol

import (
	"bufio"
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Mangled names of the functions in testdata/src/inline.cc, instantiated
// for unsigned int.
const (
	mangledHotLoop = "_ZN3cct8hot_loopIjEET_S1_i"
	mangledTwice   = "_ZN3cct5twiceIjEET_S1_"
	mangledMix     = "_ZN3cct3mixIjEET_S1_S1_"
	mangledRotl    = "_ZN3cct4rotlEji"
)

// sourceMarkers returns the line of every "// L:name" marker in
// testdata/src/name.
func sourceMarkers(t *testing.T, name string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "src", name))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`// L:([\w-]+)\s*$`)
	m := map[string]int{}
	for i, l := range strings.Split(string(data), "\n") {
		if s := re.FindStringSubmatch(l); s != nil {
			m[s[1]] = i + 1
		}
	}
	return m
}

// buildInline compiles inline.cc with g++ -O2 -g plus extra flags into
// dir/name.
func buildInline(t *testing.T, dir, name string, extra ...string) string {
	t.Helper()
	needTool(t, "g++")
	copySource(t, dir, "inline.cc", "inline.cc")
	run(t, dir, nil, "g++", append([]string{"-O2", "-g", "-o", name, "inline.cc"}, extra...)...)
	return realPath(t, filepath.Join(dir, name))
}

// symbolRange returns the value and size of function name in path's
// .symtab.
func symbolRange(t *testing.T, path, name string) (uint64, uint64) {
	t.Helper()
	syms, err := elfOpenSymbols(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 {
			return s.Value, s.Size
		}
	}
	t.Fatalf("%s: no sized function %s", path, name)
	return 0, 0
}

// chainString renders frames as "func file:line [inl]" separated by " | ",
// with file basenames, to compare and print chains.
func chainString(fs []Frame) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s %s:%d", f.Func, filepath.Base(f.File), f.Line)
		if f.Inlined {
			b.WriteString(" inl")
		}
	}
	return b.String()
}

// checkHotLoopChain checks the frames of one pc inside hot_loop<unsigned>
// against the source markers and returns which chain it was: "mix"
// (mix in twice in hot_loop), "twice", "rotl" or "body" (hot_loop alone).
func checkHotLoopChain(t *testing.T, fs []Frame, lines map[string]int) string {
	t.Helper()
	if len(fs) == 0 {
		t.Errorf("no frames")
		return ""
	}
	out := fs[len(fs)-1]
	if out.Func != mangledHotLoop || out.Inlined || filepath.Base(out.File) != "inline.cc" ||
		out.Line < lines["hot_loop-first"] || out.Line > lines["hot_loop-last"] {
		t.Errorf("outermost frame of %s: want %s, not inlined, inline.cc:%d-%d", chainString(fs),
			mangledHotLoop, lines["hot_loop-first"], lines["hot_loop-last"])
	}
	for _, f := range fs[:len(fs)-1] {
		if !f.Inlined || filepath.Base(f.File) != "inline.cc" {
			t.Errorf("inner frame %+v of %s: want Inlined, in inline.cc", f, chainString(fs))
		}
	}
	want := func(kind string, ok bool) string {
		if !ok {
			t.Errorf("%s chain %s does not match the source markers %v", kind, chainString(fs), lines)
		}
		return kind
	}
	switch {
	case len(fs) == 1:
		return "body"
	case len(fs) == 3 && fs[0].Func == mangledMix:
		return want("mix", fs[0].Line >= lines["mix-first"] && fs[0].Line <= lines["mix-last"] &&
			fs[1].Func == mangledTwice && fs[1].Line == lines["twice-calls"] && out.Line == lines["call-twice"])
	case len(fs) == 2 && fs[0].Func == mangledTwice:
		return want("twice", fs[0].Line == lines["twice-calls"] && out.Line == lines["call-twice"])
	case len(fs) == 2 && fs[0].Func == mangledRotl:
		return want("rotl", fs[0].Line == lines["rotl"] && out.Line == lines["call-rotl"])
	}
	t.Errorf("unexpected chain %s", chainString(fs))
	return ""
}

// addr2lineChains runs binutils' addr2line -i -f on addrs of path: an
// independent DWARF reader to compare with. It returns nil when addr2line
// is not installed. Only names and lines are compared with it: for DWARF
// 5 line tables, binutils 2.40 sometimes reports the unit's primary file
// (or "<artificial>" under LTO) where the line table names another, as
// objdump --dwarf=decodedline shows.
func addr2lineChains(t *testing.T, path string, addrs []uint64) map[uint64]string {
	t.Helper()
	if _, err := exec.LookPath("addr2line"); err != nil {
		return nil
	}
	args := []string{"-i", "-f", "-a", "-e", path}
	for _, a := range addrs {
		args = append(args, "0x"+strconv.FormatUint(a, 16))
	}
	out, err := exec.Command("addr2line", args...).Output()
	if err != nil {
		t.Fatalf("addr2line: %v", err)
	}
	res := map[uint64]string{}
	var cur uint64
	var fs []Frame
	flush := func() {
		if len(fs) > 0 {
			res[cur] = namesLines(fs)
		}
		fs = nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "0x") {
			flush()
			cur, _ = strconv.ParseUint(l[2:], 16, 64)
			continue
		}
		if !sc.Scan() {
			break
		}
		pos, _, _ := strings.Cut(sc.Text(), " ") // drop " (discriminator N)"
		_, line, _ := strings.Cut(pos, ":")
		n, _ := strconv.Atoi(line)
		fs = append(fs, Frame{Func: l, Line: n})
	}
	flush()
	return res
}

// namesLines renders a chain as "func:line | func:line ...".
func namesLines(fs []Frame) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s:%d", f.Func, f.Line)
	}
	return b.String()
}

// TestDWARFInlineChains resolves every pc of a C++ hot loop whose helpers
// are always_inline templates in a namespace, in the running program:
// each pc must give the inline chain the source says (innermost first,
// Inlined on all but hot_loop itself, lines at the marked source lines),
// chains through all three helpers must occur, and the chains must equal
// binutils' addr2line -i. The same chains must come back when the DWARF
// is only in a separate debug file (found by .gnu_debuglink or build id),
// with or without a .symtab left in the binary, and from an LTO build,
// whose inlined instances refer to their functions across units.
func TestDWARFInlineChains(t *testing.T) {
	needTool(t, "objcopy")
	needTool(t, "strip")
	lines := sourceMarkers(t, "inline.cc")
	dir := t.TempDir()
	prog := buildInline(t, dir, "prog")
	start, size := symbolRange(t, prog, mangledHotLoop)
	var addrs []uint64
	for a := start; a < start+size; a++ {
		addrs = append(addrs, a)
	}

	// resolve runs path and returns the chain of every pc of hot_loop by
	// module-relative address, checking each, in full and as namesLines.
	resolve := func(t *testing.T, path string, addrs []uint64) (chains, names map[uint64]string) {
		tg := startTarget(t, path)
		r := NewResolver()
		if err := r.LoadProc(tg.pid); err != nil {
			t.Fatal(err)
		}
		base := tg.addrs["hot_loop"] - addrs[0]
		kinds := map[string]int{}
		chains, names = map[uint64]string{}, map[uint64]string{}
		for _, a := range addrs {
			fs := r.Lookup(tg.pid, base+a, nil)
			for _, f := range fs {
				if f.Addr != a || f.Module != path {
					t.Fatalf("frame %+v: want Addr %#x Module %s", f, a, path)
				}
			}
			kinds[checkHotLoopChain(t, fs, lines)]++
			chains[a] = chainString(fs)
			names[a] = namesLines(fs)
		}
		for _, k := range []string{"mix", "rotl", "body"} {
			if kinds[k] == 0 {
				t.Errorf("no pc of hot_loop resolved to a %s chain (got %v)", k, kinds)
			}
		}
		t.Logf("chains: %v", kinds)
		return chains, names
	}
	compareAddr2line := func(t *testing.T, path string, addrs []uint64, names map[uint64]string) {
		a2l := addr2lineChains(t, path, addrs)
		for _, a := range addrs {
			if a2l != nil && names[a] != a2l[a] {
				t.Errorf("%#x: %s\naddr2line: %s", a, names[a], a2l[a])
			}
		}
	}

	want, names := resolve(t, prog, addrs)
	compareAddr2line(t, prog, addrs, names)

	h := func() string {
		f, err := elf.Open(prog)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return hex.EncodeToString(buildID(f))
	}()
	for _, c := range []struct {
		name string
		prep func(t *testing.T, d string) // makes d/stripped and its debug file
	}{
		{"debuglink", func(t *testing.T, d string) {
			run(t, d, nil, "objcopy", "--only-keep-debug", prog, "stripped.debug")
			run(t, d, nil, "strip", "--strip-debug", "--strip-unneeded", "-o", "stripped", prog)
			run(t, d, nil, "objcopy", "--add-gnu-debuglink=stripped.debug", "stripped")
		}},
		{"strip-g", func(t *testing.T, d string) {
			// The .symtab stays; only the DWARF moves out.
			run(t, d, nil, "objcopy", "--only-keep-debug", prog, "stripped.debug")
			run(t, d, nil, "strip", "-g", "-o", "stripped", prog)
			run(t, d, nil, "objcopy", "--add-gnu-debuglink=stripped.debug", "stripped")
		}},
		{"build-id", func(t *testing.T, d string) {
			if h == "" {
				t.Skip("g++ made no build id")
			}
			bd := filepath.Join(d, "debugroot", ".build-id", h[:2])
			if err := os.MkdirAll(bd, 0o755); err != nil {
				t.Fatal(err)
			}
			run(t, d, nil, "objcopy", "--only-keep-debug", prog, filepath.Join(bd, h[2:]+".debug"))
			run(t, d, nil, "strip", "--strip-all", "-o", "stripped", prog)
			old := debugDirs
			debugDirs = []string{filepath.Join(d, "debugroot")}
			t.Cleanup(func() { debugDirs = old })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			c.prep(t, d)
			stripped := realPath(t, filepath.Join(d, "stripped"))
			f, err := elf.Open(stripped)
			if err != nil {
				t.Fatal(err)
			}
			own := hasDWARF(f)
			f.Close()
			if own {
				t.Fatal("strip left DWARF in the binary")
			}
			got, _ := resolve(t, stripped, addrs)
			for _, a := range addrs {
				if got[a] != want[a] {
					t.Errorf("%#x: %s\nunstripped: %s", a, got[a], want[a])
				}
			}
		})
	}

	t.Run("lto", func(t *testing.T) {
		lto := buildInline(t, t.TempDir(), "lto", "-flto")
		start, size := symbolRange(t, lto, mangledHotLoop)
		var addrs []uint64
		for a := start; a < start+size; a++ {
			addrs = append(addrs, a)
		}
		_, names := resolve(t, lto, addrs)
		compareAddr2line(t, lto, addrs, names)
	})

	// DWARF 5 type units sit in .debug_info among the compilation units,
	// with a longer header: each unit is decoded on its own
	// (dwarf_unitdata.go), so its first DIE must be found past it.
	t.Run("type-units", func(t *testing.T) {
		tu := buildInline(t, t.TempDir(), "tu", "-gdwarf-5", "-fdebug-types-section")
		f, err := elf.Open(tu)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := f.Section(".debug_info").Data()
		units := listUnits(info, f.ByteOrder)
		// Every unit's first DIE where debug/dwarf, reading the file
		// whole, finds it.
		whole, err := f.DWARF()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var dies []dwarf.Offset
		for r := whole.Reader(); ; r.SkipChildren() {
			e, err := r.Next()
			if err != nil || e == nil {
				break
			}
			dies = append(dies, e.Offset)
		}
		var ours []dwarf.Offset
		for _, u := range units {
			ours = append(ours, u.off)
		}
		if !slices.Equal(ours, dies) {
			t.Errorf("units' first DIEs %v, debug/dwarf's %v", ours, dies)
		}
		types := 0
		for _, u := range units {
			if info[u.base+6] == 2 { // DWARF 5 unit_type DW_UT_type (32-bit header)
				types++
			}
		}
		if types == 0 {
			t.Skip("g++ made no type units")
		}
		// The same code as prog (type units change no code), so the same
		// chains: binutils' addr2line finds none past the type units.
		if s, n := symbolRange(t, tu, mangledHotLoop); s != start || n != size {
			t.Skipf("hot_loop at %#x+%d, not prog's %#x+%d", s, n, start, size)
		}
		got, _ := resolve(t, tu, addrs)
		for _, a := range addrs {
			if got[a] != want[a] {
				t.Errorf("%#x: %s\nwithout type units: %s", a, got[a], want[a])
			}
		}
	})
}

// TestDWARFLibc resolves libc through its libc6-dbg debug file: the pcs
// the target prints (getpid, and memset's IFUNC pick, a local symbol
// .dynsym lacks) get a name and a source line, local functions of the
// debug file's .symtab are named, inline chains occur and match
// addr2line -i on the debug file, and units are parsed only as lookups
// reach them.
func TestDWARFLibc(t *testing.T) {
	libc, dbg := libcWithDebug(t)
	prog, _ := buildC(t, cBuild{prog: []string{"-fPIE", "-pie", "-DWITH_LIBC"}})
	tg := startTarget(t, prog)
	r := NewResolver()
	if err := r.LoadProc(tg.pid); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, _ := f.DynamicSymbols()
	f.Close()
	inDynsym := func(name string) bool {
		return slices.ContainsFunc(dyn, func(s elf.Symbol) bool { return s.Name == name })
	}

	for _, c := range []struct {
		name string
		ok   func(Frame) bool
	}{
		{"getpid", func(f Frame) bool { return f.Func == "getpid" || f.Func == "__getpid" }},
		{"memset", func(f Frame) bool { return strings.HasPrefix(f.Func, "__memset_") && !inDynsym(f.Func) }},
	} {
		fs := r.Lookup(tg.pid, tg.addrs[c.name], nil)
		out := fs[len(fs)-1]
		if filepath.Base(out.Module) != filepath.Base(libc) || !c.ok(out) || out.Inlined || out.File == "" || out.Line <= 0 {
			t.Errorf("%s: %s (module %s), want a libc function with a source line", c.name, chainString(fs), out.Module)
		}
		t.Logf("%s: %s", c.name, chainString(fs))
	}

	mod := loadLibc(t, libc)
	var dw *dwarfSource
	for _, s := range mod.sources {
		if d, ok := s.(*dwarfSource); ok {
			dw = d
		}
	}
	if dw == nil {
		t.Fatal("libc has no DWARF source")
	}
	parsed := func() int {
		n := 0
		for _, u := range dw.units {
			if u.parsed {
				n++
			}
		}
		return n
	}
	if n := parsed(); n != 0 {
		t.Fatalf("%d units parsed at load, want none", n)
	}
	if fs := r.Lookup(tg.pid, tg.addrs["getpid"], nil); fs[0].Addr != 0 {
		mod.frames(fs[0].Addr, "libc", nil)
		if n := parsed(); n == 0 || n > maxUnitsPerAddr {
			t.Errorf("one lookup parsed %d units, want 1 to %d", n, maxUnitsPerAddr)
		}
	}

	// Local functions at addresses .dynsym has no name for, which DWARF
	// covers, get a name from the debug file's .symtab, with a line.
	ds, err := elfOpenSymbols(dbg)
	if err != nil {
		t.Fatal(err)
	}
	locals := 0
	for _, s := range ds {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || elf.ST_BIND(s.Info) != elf.STB_LOCAL || s.Size < 2 ||
			slices.ContainsFunc(dyn, func(d elf.Symbol) bool { return d.Value == s.Value }) {
			continue
		}
		fs := mod.frames(s.Value+1, "libc", nil)
		out := fs[len(fs)-1]
		if out.File == "" {
			continue // not covered by DWARF (a few assembly stubs)
		}
		if out.Func == "" || inDynsym(out.Func) || !sameAddr(ds, out.Func, s.Value) {
			t.Errorf("%s+1: %s, want %s or a local alias", s.Name, chainString(fs), s.Name)
		}
		if locals++; locals == 50 {
			break
		}
	}
	if locals == 0 {
		t.Error("no local function of the debug file was resolved with a source line")
	}

	// Inline chains, against addr2line on the debug file. addr2line names
	// the outermost frame from DWARF, cctop from the symbol table, so that
	// name is left out of the comparison.
	pcs := libcPCs(t, dbg, 3000)
	chains := map[uint64]string{}
	inlined := 0
	for _, pc := range pcs {
		fs := mod.frames(pc, "libc", nil)
		for i, f := range fs {
			if f.Inlined != (i < len(fs)-1) {
				t.Fatalf("%#x: %s: Inlined must be set on all but the last frame", pc, chainString(fs))
			}
		}
		if len(fs) > 1 {
			inlined++
		}
		fs[len(fs)-1].Func = ""
		chains[pc] = namesLines(fs)
	}
	if inlined == 0 {
		t.Error("no libc pc resolved to an inline chain")
	}
	sample := pcs[:300]
	if a2l := addr2lineChains(t, dbg, sample); a2l != nil {
		bad := 0
		for _, pc := range sample {
			if w := dropOuterFunc(a2l[pc]); chains[pc] != w {
				if bad++; bad <= 10 {
					t.Errorf("%#x: %s\naddr2line: %s", pc, chains[pc], w)
				}
			}
		}
	}
	t.Logf("%d of %d libc pcs inside inline chains; %d units parsed of %d", inlined, len(pcs), parsed(), len(dw.units))
}

// sameAddr reports whether syms has a function name at addr.
func sameAddr(syms []elf.Symbol, name string, addr uint64) bool {
	return slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == name && s.Value == addr })
}

// dropOuterFunc removes the outermost function name from a namesLines
// string, as namesLines renders a frame whose Func is "".
func dropOuterFunc(chain string) string {
	i := strings.LastIndex(chain, " | ") + len(" | ")
	if i < len(" | ") {
		i = 0
	}
	j := strings.LastIndex(chain, ":")
	if j < i {
		return chain
	}
	return chain[:i] + chain[j:]
}
