package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzDWARF feeds malformed ELF files with DWARF to the module loader and
// looks up addresses around what it indexed and parsed: unit ranges,
// function spans, segments. Nothing may panic or hang, allocations stay
// within what the input can expand to, and every answer must be a well
// formed chain: Inlined on all frames but the last, the same from the
// cache. Seeds (testdata/fuzz/FuzzDWARF) are tiny freestanding programs
// with inline chains, as C and C++, DWARF 4 and 5, zlib-compressed
// sections, and without .debug_aranges; TestWriteFuzzSeeds makes them.
func FuzzDWARF(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDWARF(t, data) })
}

func fuzzDWARF(t testing.TB, data []byte) {
	{
		mod := loadELF(bytes.NewReader(data), int64(len(data)), "", nil, true)
		var addrs []uint64
		for _, s := range mod.segs {
			addrs = append(addrs, s.vaddr, s.vaddr+s.filesz/2, s.vaddr+s.filesz-1)
		}
		var dw *dwarfSource
		for _, src := range mod.sources {
			if d, ok := src.(*dwarfSource); ok {
				dw = d
			}
		}
		if dw != nil {
			for i, r := range dw.index {
				if i == 16 {
					break
				}
				addrs = append(addrs, r.lo, r.lo+(r.hi-r.lo)/2, r.hi-1, r.hi)
			}
		}
		addrs = append(addrs, 0, ^uint64(0))
		check := func(addr uint64) {
			fs := mod.frames(addr, "fuzz", nil)
			if len(fs) == 0 {
				t.Fatalf("frames(%#x) = none", addr)
			}
			for i, fr := range fs {
				if fr.Inlined != (i < len(fs)-1) || fr.Module != "fuzz" || fr.Addr != addr {
					t.Fatalf("frames(%#x) = %+v: Inlined must be set on all frames but the last", addr, fs)
				}
			}
			again := mod.frames(addr, "fuzz", nil)
			if chainString(again) != chainString(fs) {
				t.Fatalf("cached frames differ: %+v vs %+v", again, fs)
			}
		}
		for _, a := range addrs {
			check(a)
		}
		if dw == nil {
			return
		}
		// The lookups parsed some units: probe their functions' spans.
		n := 0
		for _, u := range dw.units {
			if u.t == nil {
				continue
			}
			for _, sp := range u.t.spans {
				if n++; n > 64 {
					return
				}
				check(sp.lo)
				check(sp.hi - 1)
			}
		}
	}
}

// TestFlattenSpans checks the nested-range flattening on its own: nested
// inline ranges, two inlined instances starting at the same address,
// ranges split in pieces, and ranges that overlap without nesting.
func TestFlattenSpans(t *testing.T) {
	// Node 0: subprogram [0x100, 0x200); 1: inlined in 0 at [0x110, 0x150)
	// and [0x180, 0x190); 2: inlined in 1 at [0x110, 0x120); 3: inlined
	// in 0 at [0x150, 0x160); 4: subprogram [0x300, 0x310); 5: inlined in
	// 4, corrupt, [0x308, 0x400).
	spans := []funcSpan{
		{0x180, 0x190, 1}, {0x110, 0x120, 2}, {0x100, 0x200, 0}, {0x110, 0x150, 1},
		{0x150, 0x160, 3}, {0x308, 0x400, 5}, {0x300, 0x310, 4},
	}
	depth := []int32{0, 1, 2, 1, 0, 1}
	got := flattenSpans(spans, depth)
	want := []funcSpan{
		{0x100, 0x110, 0}, {0x110, 0x120, 2}, {0x120, 0x150, 1}, {0x150, 0x160, 3},
		{0x160, 0x180, 0}, {0x180, 0x190, 1}, {0x190, 0x200, 0},
		{0x300, 0x308, 4}, {0x308, 0x310, 5},
	}
	if len(got) != len(want) {
		t.Fatalf("got %x\nwant %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("span %d: got %x, want %x", i, got[i], want[i])
		}
	}
}

// TestLineRows checks the line table's sorting and lookup: sequences out
// of order, one ending where the next starts, several rows at one address
// (the last one counts), and gaps between sequences.
func TestLineRows(t *testing.T) {
	rows := []lineRow{
		{0x200, 1, 20}, {0x210, 1, 21}, {0x220, endSeq, 0}, // sequence 0
		{0x100, 0, 10}, {0x100, 0, 11}, {0x108, 0, 12}, {0x200, endSeq, 0}, // sequence 1, ends where 0 starts
		{0x300, noFile, 7}, {0x304, endSeq, 0}, // sequence 2, file index 0 invalid
	}
	lt := lineTable{rows: sortSequences(rows, [][2]int{{0, 3}, {3, 7}, {7, 9}}), files: []string{"a.c", "b.c"}}
	for _, c := range []struct {
		addr uint64
		file string
		line int
	}{
		{0xff, "", 0}, {0x100, "a.c", 11}, {0x107, "a.c", 11}, {0x108, "a.c", 12}, {0x1ff, "a.c", 12},
		{0x200, "b.c", 20}, {0x215, "b.c", 21}, {0x220, "", 0}, {0x2ff, "", 0}, {0x300, "", 7}, {0x304, "", 0},
	} {
		if f, l := lt.lineAt(c.addr); f != c.file || l != c.line {
			t.Errorf("lineAt(%#x) = %s:%d, want %s:%d", c.addr, f, l, c.file, c.line)
		}
	}
}

// TestParseAranges checks .debug_aranges decoding: 32- and 64-bit sets,
// tuple alignment, the terminator, a set with a segment selector (skipped)
// and a truncated set (the walk ends).
func TestParseAranges(t *testing.T) {
	le := binary.LittleEndian
	set32 := func(unit uint32, seg byte, tuples ...uint64) []byte {
		b := le.AppendUint32(nil, 0) // length, patched below
		b = le.AppendUint16(b, 2)
		b = le.AppendUint32(b, unit)
		b = append(b, 8, seg)
		b = append(b, make([]byte, 4)...) // pad the 12-byte header to 16
		for _, v := range tuples {
			b = le.AppendUint64(b, v)
		}
		b = append(b, make([]byte, 16)...)
		le.PutUint32(b, uint32(len(b)-4))
		return b
	}
	set64 := func(unit uint64, tuples ...uint64) []byte {
		b := le.AppendUint32(nil, 0xffffffff)
		b = le.AppendUint64(b, 0)
		b = le.AppendUint16(b, 2)
		b = le.AppendUint64(b, unit)
		b = append(b, 8, 0)
		b = append(b, make([]byte, 8)...) // pad the 24-byte header to 32
		for _, v := range tuples {
			b = le.AppendUint64(b, v)
		}
		b = append(b, make([]byte, 16)...)
		le.PutUint64(b[4:], uint64(len(b)-12))
		return b
	}
	var data []byte
	data = append(data, set32(0x10, 0, 0x1000, 0x100, 0x3000, 0x10)...)
	data = append(data, set32(0x20, 1, 0x5000, 0x100)...) // segmented: skipped
	data = append(data, set64(0x30, 0x2000, 0x20)...)
	data = append(data, set32(0x40, 0, 0x4000, 0x10)[:30]...) // truncated
	type r struct{ unit, lo, hi uint64 }
	var got []r
	parseAranges(data, le, func(unit, lo, hi uint64) { got = append(got, r{unit, lo, hi}) })
	want := []r{{0x10, 0x1000, 0x1100}, {0x10, 0x3000, 0x3010}, {0x30, 0x2000, 0x2020}}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("range %d: got %x, want %x", i, got[i], want[i])
		}
	}
}

// TestWriteFuzzSeeds regenerates the seed corpora of FuzzDWARF and
// FuzzDebugdata from testdata/src/fuzz_dwarf.c. It runs only with
// CCTOP_WRITE_FUZZ_SEEDS=1, since the bytes depend on the compiler.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("CCTOP_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set CCTOP_WRITE_FUZZ_SEEDS=1 to rewrite the seed corpora")
	}
	needTool(t, "gcc")
	needTool(t, "g++")
	needTool(t, "objcopy")
	d := t.TempDir()
	copySource(t, d, "fuzz_dwarf.c", "fuzz_dwarf.c")
	// -N packs the one segment without page alignment: a 2-3 KB file.
	common := []string{"-O2", "-nostdlib", "-static", "-fno-asynchronous-unwind-tables",
		"-Wl,--build-id=none", "-Wl,-N", "-Wl,--no-warn-rwx-segments", "fuzz_dwarf.c"}
	build := func(name, cc string, flags ...string) []byte {
		run(t, d, nil, cc, append(append([]string{"-o", name}, flags...), common...)...)
		run(t, d, nil, "objcopy", "-R", ".comment", name)
		data, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	write := func(target, name string, data []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("FuzzDWARF", "c-dwarf5", build("c5", "gcc", "-g", "-gdwarf-5"))
	write("FuzzDWARF", "c-dwarf4", build("c4", "gcc", "-g", "-gdwarf-4"))
	write("FuzzDWARF", "c-zlib", build("cz", "gcc", "-g", "-gz=zlib"))
	write("FuzzDWARF", "cxx-dwarf5", build("x5", "g++", "-x", "c++", "-g", "-fno-exceptions"))
	write("FuzzDWARF", "cxx-dwarf4", build("x4", "g++", "-x", "c++", "-g", "-gdwarf-4", "-fno-exceptions"))
	build("na", "gcc", "-g")
	run(t, d, nil, "objcopy", "--remove-section", ".debug_aranges", "na")
	na, err := os.ReadFile(filepath.Join(d, "na"))
	if err != nil {
		t.Fatal(err)
	}
	write("FuzzDWARF", "c-no-aranges", na)

	// FuzzDebugdata: the .gnu_debugdata of the C build, and xz streams
	// of it with each check type and with sized block headers.
	needTool(t, "xz")
	prog := filepath.Join(d, "c5")
	mini := makeMiniDebugInfo(t, prog)
	xzData := func(path string) []byte {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ef, err := elf.NewFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := ef.Section(".gnu_debugdata").Data()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	z := xzData(mini)
	write("FuzzDebugdata", "mini-debuginfo", z)
	img, ok := unxz(z, 1<<20)
	if !ok {
		t.Fatal("cannot decompress the seed")
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"crc32", []string{"--check=crc32"}},
		{"sha256", []string{"--check=sha256"}},
		{"none", []string{"--check=none"}},
		{"sized-blocks", []string{"-T2", "--block-size=1024"}},
	} {
		write("FuzzDebugdata", c.name, xzCompress(t, img, c.args...))
	}
}

// seedFile reads a []byte seed of a fuzz target's corpus.
func seedFile(t testing.TB, target, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", target, name))
	if err != nil {
		t.Fatal(err)
	}
	_, lit, _ := strings.Cut(strings.TrimSpace(string(raw)), "\n")
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}

// TestDWARFSeeds resolves the FuzzDWARF seeds themselves, so each variant
// (DWARF 4 and 5, compressed sections, no .debug_aranges, C++) is known
// to work, not only not to crash: somewhere in leaf there must be the
// chain sq (inlined) in sq2 (inlined) in leaf, at the marked lines.
func TestDWARFSeeds(t *testing.T) {
	lines := sourceMarkers(t, "fuzz_dwarf.c")
	for _, name := range []string{"c-dwarf5", "c-dwarf4", "c-zlib", "c-no-aranges", "cxx-dwarf5", "cxx-dwarf4"} {
		data := seedFile(t, "FuzzDWARF", name)
		mod := loadELF(bytes.NewReader(data), int64(len(data)), "", nil, true)
		found := false
		for _, s := range mod.segs {
			for a := s.vaddr; a < s.vaddr+s.filesz && !found; a++ {
				fs := mod.frames(a, "seed", nil)
				if len(fs) != 3 {
					continue
				}
				found = true
				leaf := fs[2].Func == "leaf" || fs[2].Func == "_ZN4seed4leafEi"
				if fs[0].Func != "sq" || fs[1].Func != "sq2" || !leaf ||
					fs[0].Line != lines["sq"] || fs[1].Line != lines["sq2"] || fs[2].Line != lines["leaf"] ||
					filepath.Base(fs[0].File) != "fuzz_dwarf.c" || !fs[0].Inlined || !fs[1].Inlined || fs[2].Inlined {
					t.Errorf("%s: %#x: %s, want sq:%d inl | sq2:%d inl | leaf:%d", name, a, chainString(fs),
						lines["sq"], lines["sq2"], lines["leaf"])
				}
			}
		}
		if !found {
			t.Errorf("%s: no three-frame inline chain", name)
		}
	}
}
