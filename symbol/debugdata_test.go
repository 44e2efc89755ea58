package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// makeMiniDebugInfo builds, the way Fedora's find-debuginfo does (GDB
// manual, "MiniDebugInfo"), a stripped copy of prog whose .gnu_debugdata
// holds the function symbols .dynsym lacks, and returns its path.
func makeMiniDebugInfo(t *testing.T, prog string) string {
	t.Helper()
	for _, tool := range []string{"nm", "objcopy", "strip", "xz"} {
		needTool(t, tool)
	}
	d := t.TempDir()
	nm := func(args ...string) []string {
		out, err := exec.Command("nm", append(args, "--format=posix", "--defined-only", prog)...).Output()
		if err != nil {
			t.Fatalf("nm %v: %v", args, err)
		}
		var names []string
		for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && (len(args) > 0 || f[1] == "T" || f[1] == "t") {
				names = append(names, f[0])
			}
		}
		return names
	}
	dynsyms := nm("-D")
	var keep []string
	for _, s := range nm() {
		if !slices.Contains(dynsyms, s) {
			keep = append(keep, s)
		}
	}
	if err := os.WriteFile(filepath.Join(d, "keep_symbols"), []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, d, nil, "objcopy", "--only-keep-debug", prog, "debug")
	run(t, d, nil, "objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment",
		"--keep-symbols=keep_symbols", "debug", "mini_debuginfo")
	run(t, d, nil, "strip", "--strip-all", "-R", ".comment", "-o", "stripped", prog)
	run(t, d, nil, "xz", "mini_debuginfo")
	run(t, d, nil, "objcopy", "--add-section", ".gnu_debugdata=mini_debuginfo.xz", "stripped")
	return realPath(t, filepath.Join(d, "stripped"))
}

// TestMiniDebugInfo strips the C test program to .dynsym plus a
// .gnu_debugdata section: its static function gamma_local, which only
// .gnu_debugdata names, must resolve; without the section it must not.
func TestMiniDebugInfo(t *testing.T) {
	prog, _ := buildC(t, cBuild{prog: []string{"-fPIE", "-pie"}})
	want := elfSymbol(t, prog, "gamma_local")
	mini := makeMiniDebugInfo(t, prog)

	f, err := elf.Open(mini)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	hasSection := f.Section(".gnu_debugdata") != nil
	f.Close()
	if len(syms) != 0 || !hasSection {
		t.Fatalf("want no .symtab (%d symbols) and a .gnu_debugdata (%v)", len(syms), hasSection)
	}
	if slices.ContainsFunc(dyn, func(s elf.Symbol) bool { return s.Name == "gamma_local" }) {
		t.Fatal("gamma_local is in .dynsym; the test means to prove .gnu_debugdata is read")
	}

	for _, c := range []struct {
		name string
		path string
		ok   bool
	}{
		{"gnu_debugdata", mini, true},
		{"without", removeSection(t, mini, ".gnu_debugdata"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg := startTarget(t, c.path)
			r := NewResolver()
			if err := r.LoadProc(tg.pid); err != nil {
				t.Fatal(err)
			}
			for _, d := range []uint64{0, 5} {
				f := lookup1(r, tg.pid, tg.addrs["gamma_local"]+d)
				if f.Addr != want+d || (f.Func == "gamma_local") != c.ok {
					t.Errorf("gamma_local+%d: %+v, want Addr %#x, named: %v", d, f, want+d, c.ok)
				}
			}
		})
	}
}

func removeSection(t *testing.T, path, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "without")
	run(t, filepath.Dir(path), nil, "objcopy", "--remove-section", name, path, out)
	return realPath(t, out)
}

// xzCompress runs xz with args over data.
func xzCompress(t *testing.T, data []byte, args ...string) []byte {
	t.Helper()
	needTool(t, "xz")
	cmd := exec.Command("xz", append([]string{"-c"}, args...)...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xz %v: %v", args, err)
	}
	return out
}

// testPayload is compressible but not trivially: an ELF-sized mix.
func testPayload(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = "symtab_strtab.text\x00"[x>>27%19]
	}
	return b
}

// TestUnxz decompresses what xz writes with each check type and across
// several blocks, and rejects damage, truncation, trailing garbage and
// output past the limit.
func TestUnxz(t *testing.T) {
	data := testPayload(100 << 10)
	for _, args := range [][]string{
		{"--check=crc64"}, {"--check=crc32"}, {"--check=sha256"}, {"--check=none"},
		{"-9"}, {"-1", "--block-size=65536"}, {"-T2", "--block-size=100000"},
	} {
		z := xzCompress(t, data, args...)
		got, ok := unxz(z, len(data))
		if !ok || !bytes.Equal(got, data) {
			t.Errorf("xz %v: ok=%v, %d bytes, want the %d input bytes", args, ok, len(got), len(data))
		}
		if _, ok := unxz(z, len(data)-1); ok {
			t.Errorf("xz %v: output past the limit accepted", args)
		}
		for _, cut := range []int{len(z) / 2, len(z) - 13} {
			if _, ok := unxz(z[:cut], len(data)); ok {
				t.Errorf("xz %v: truncated to %d bytes accepted", args, cut)
			}
		}
	}
	z := xzCompress(t, data, "--check=crc32")
	bad := bytes.Clone(z)
	bad[len(bad)/2] ^= 0x40 // inside the compressed data
	if got, ok := unxz(bad, len(data)); ok && bytes.Equal(got, data) {
		t.Error("a flipped bit went unnoticed")
	}
	if _, ok := unxz(append(bytes.Clone(z[:12]), 0x7f), len(data)); ok {
		t.Error("a block header past the end accepted")
	}
}

// TestUnxzDictionaryBound: a block header may ask for a 4 GiB dictionary;
// the decoder must not allocate more than the output limit for it.
func TestUnxzDictionaryBound(t *testing.T) {
	data := testPayload(64 << 10)
	z := xzCompress(t, data, "--check=crc32", "-0")
	// The first block header follows the 12-byte stream header; its
	// LZMA2 dictionary size is the byte before the padding and CRC.
	hlen := (int(z[12]) + 1) * 4
	h := z[12 : 12+hlen]
	if h[1] != 0 || h[2] != xzLZMA2 || h[3] != 1 {
		t.Fatalf("unexpected block header % x", h)
	}
	h[4] = 40 // 4 GiB - 1
	binary.LittleEndian.PutUint32(h[hlen-4:], crc32.ChecksumIEEE(h[:hlen-4]))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, ok := unxz(z, len(data))
	runtime.ReadMemStats(&after)
	if !ok || !bytes.Equal(got, data) {
		t.Fatalf("ok=%v, %d bytes", ok, len(got))
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16*uint64(len(data)) {
		t.Errorf("decompressing %d bytes allocated %d", len(data), n)
	}
}
