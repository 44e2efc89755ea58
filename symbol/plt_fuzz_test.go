package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzPLT feeds arbitrary bytes to the PLT reader, then to the whole
// loader, and looks up every stub and the addresses around it. Nothing may
// panic; every stub has a perf-style name; the reader allocates no more
// than the relocations in the input can justify; and what no source names
// gets a "[module+0xOFFSET]" name.
func FuzzPLT(f *testing.F) {
	broken := brokenPLTs(f, seedFile(f, "FuzzPLT", "lazy"))
	for _, name := range slices.Sorted(maps.Keys(broken)) {
		f.Add(broken[name])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return
		}
		symtab, _ := ef.Symbols()
		dynsym, _ := ef.DynamicSymbols()
		cands := pltCands(ef, symtab, dynsym, int64(len(data)))
		// A stub per relocation at most, plus .plt's header: .plt and
		// .plt.sec per .rela.plt entry, .plt.got per .rela.dyn entry, 8
		// bytes each at the least, and the sections may all overlap.
		if bound := 3*len(data)/8 + 2; len(cands) > bound {
			t.Fatalf("%d stubs from %d bytes", len(cands), len(data))
		}
		for _, c := range cands {
			if c.size == 0 || c.name != ".plt" && !strings.HasSuffix(c.name, "@plt") || c.name == "@plt" {
				t.Fatalf("stub %+v", c)
			}
		}

		mod := loadELF(bytes.NewReader(data), int64(len(data)), "", nil, true)
		loadUnwind(bytes.NewReader(data), mod, true)
		mod.base = "fuzz"
		var addrs []uint64
		for i, c := range cands {
			if i == 64 {
				break
			}
			addrs = append(addrs, c.addr-1, c.addr, c.addr+c.size-1, c.addr+c.size)
		}
		for _, s := range mod.segs {
			addrs = append(addrs, s.vaddr, s.vaddr+s.filesz/2, s.vaddr+s.filesz)
		}
		addrs = append(addrs, 0, 1<<63, ^uint64(0))
		for _, a := range addrs {
			fs := mod.frames(a, "/fuzz", nil)
			if len(fs) == 0 || fs[0].Module != "/fuzz" || fs[0].Addr != a {
				t.Fatalf("frames(%#x) = %+v", a, fs)
			}
			if u := fs[0]; u.Unnamed && (len(fs) != 1 || !strings.HasPrefix(u.Func, "[fuzz+0x") || !strings.HasSuffix(u.Func, "]")) {
				t.Fatalf("unnamed %#x: %+v", a, fs)
			}
		}
	})
}

// pltSeeds are the builds of testdata/src/plt.c in FuzzPLT's corpus, made
// as small as ld can: no symbols, no page alignment, no build id.
var pltSeeds = []struct {
	name  string
	flags []string
}{
	{"lazy", nil},
	{"ibt", []string{"-fcf-protection=full", "-Wl,-z,ibtplt"}},
	{"no-plt", []string{"-fno-plt"}},
	{"shared", []string{"-shared", "-fPIC"}},
}

// TestPLTSeeds checks that the well-formed seeds name their stubs, so the
// fuzzer starts from inputs that reach every rule.
func TestPLTSeeds(t *testing.T) {
	for _, s := range pltSeeds {
		data := seedFile(t, "FuzzPLT", s.name)
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		dynsym, _ := ef.DynamicSymbols()
		names := map[string]bool{}
		for _, c := range pltCands(ef, nil, dynsym, int64(len(data))) {
			names[c.name] = true
		}
		want := []string{"memcpy@plt", "__cxa_finalize@plt"}
		if s.name == "no-plt" {
			want = want[1:]
		}
		for _, w := range want {
			if !names[w] {
				t.Errorf("%s: no %s in %v", s.name, w, names)
			}
		}
	}
}

// TestWritePLTFuzzSeeds regenerates FuzzPLT's seed corpus: small builds of
// testdata/src/plt.c, and copies of the lazy one broken the ways a PLT
// reader must survive. It runs only with CCTOP_WRITE_FUZZ_SEEDS=1, since
// the bytes depend on the toolchain.
func TestWritePLTFuzzSeeds(t *testing.T) {
	if os.Getenv("CCTOP_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set CCTOP_WRITE_FUZZ_SEEDS=1 to rewrite the seed corpus")
	}
	needTool(t, "gcc")
	needTool(t, "objcopy")
	d := t.TempDir()
	copySource(t, d, "plt.c", "plt.c")
	write := func(name string, data []byte) {
		dir := filepath.Join("testdata", "fuzz", "FuzzPLT")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range pltSeeds {
		out := filepath.Join(d, s.name)
		run(t, d, nil, "gcc", append([]string{"-O2", "-s", "-o", out, "plt.c",
			"-Wl,-z,noseparate-code", "-Wl,-z,max-page-size=0x10", "-Wl,-z,common-page-size=0x10",
			"-Wl,--build-id=none"}, s.flags...)...)
		run(t, d, nil, "objcopy", "-R", ".comment", out)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		write(s.name, data)
	}
}

// brokenPLTs returns copies of lazy (the lazy-binding seed) broken the
// ways a PLT reader must survive: a bogus stub size, a .plt running past
// the end of the file, a .rela.plt larger than the file or linked to no
// section, relocations whose slots are in .plt rather than the GOT, and
// the file cut in the middle of .plt.
func brokenPLTs(tb testing.TB, lazy []byte) map[string][]byte {
	out := map[string][]byte{}
	ef, err := elf.NewFile(bytes.NewReader(lazy))
	if err != nil {
		tb.Fatal(err)
	}
	// set sets a 64-bit field of section name's header (at byte off of
	// Elf64_Shdr) in b.
	set := func(b []byte, name string, off int, v uint64) []byte {
		for i, s := range ef.Sections {
			if s.Name == name {
				at := int(binary.LittleEndian.Uint64(b[0x28:])) + i*64 + off
				binary.LittleEndian.PutUint64(b[at:], v)
				return b
			}
		}
		tb.Fatalf("no %s", name)
		return nil
	}
	patch := func(name string, off int, v uint64) []byte { return set(bytes.Clone(lazy), name, off, v) }
	const shAddralign, shEntsize, shSize, shOffset = 48, 56, 32, 24
	out["bogus-entsize"] = set(patch(".plt", shEntsize, ^uint64(0)), ".plt", shAddralign, 8)
	out["plt-past-end"] = patch(".plt", shOffset, uint64(len(lazy)-8))
	out["rela-huge"] = patch(".rela.plt", shSize, 1<<40)
	// sh_link is a 32-bit field; its neighbour sh_info goes with it.
	out["rela-bad-link"] = patch(".rela.plt", 40, 0xffff_ffff_ffff_ffff)
	// Relocations whose slots are in .plt itself, not in the GOT.
	rela, plt := ef.Section(".rela.plt"), ef.Section(".plt")
	b := bytes.Clone(lazy)
	for off := rela.Offset; off+24 <= rela.Offset+rela.Size; off += 24 {
		binary.LittleEndian.PutUint64(b[off:], plt.Addr+(off-rela.Offset))
	}
	out["slots-outside-got"] = b
	out["truncated-in-plt"] = lazy[:plt.Offset+plt.Size/2]
	return out
}
