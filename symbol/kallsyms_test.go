package symbol

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParseKallsyms(t *testing.T) {
	k := parseKallsyms(strings.NewReader(`ffffffffc0001000 t mod_func	[ext4]
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000100 t local_b
ffffffff81000100 T global_b
ffffffff81000200 D some_data
ffffffff81000300 W weak_c
garbage line
ffffffff81000400 T
`))
	for _, c := range []struct {
		pc   uint64
		want string
	}{
		{0xffffffff80ffffff, ""},
		{0xffffffff81000000, "_stext"}, // aliases: fewer underscores, then bytewise
		{0xffffffff810000ff, "_stext"},
		{0xffffffff81000100, "global_b"}, // T over t
		{0xffffffff81000250, "global_b"}, // data symbols are not functions
		{0xffffffff81000300, "weak_c"},
		{0xffffffffc0001010, "mod_func"},
	} {
		if got, _ := k.lookup(c.pc); got != c.want {
			t.Errorf("lookup(%#x) = %q, want %q", c.pc, got, c.want)
		}
	}
}

// TestParseKallsymsSpan: a table spanning under 4 GiB holds 4-byte
// offsets; one spanning more (not a kernel's, but input all the same)
// holds whole addresses, and both look up alike, past the span too.
func TestParseKallsymsSpan(t *testing.T) {
	narrow := parseKallsyms(strings.NewReader("ffffffff81000000 T a\nffffffffc0001000 t b\n"))
	wide := parseKallsyms(strings.NewReader("0000000000001000 T a\nffffffffc0001000 t b\n"))
	if narrow.offs == nil || narrow.wide != nil || wide.wide == nil || wide.offs != nil {
		t.Fatalf("narrow: %d offsets, %d addresses; wide: %d offsets, %d addresses", len(narrow.offs), len(narrow.wide), len(wide.offs), len(wide.wide))
	}
	for _, c := range []struct {
		k    *kallsyms
		pc   uint64
		want string
	}{
		{narrow, 0xffffffff80ffffff, ""},
		{narrow, 0xffffffff81000001, "a"},
		{narrow, 0xffffffffc0001000, "b"},
		{narrow, 0xffffffffffffffff, "b"},
		{wide, 0xfff, ""},
		{wide, 0x1000, "a"},
		{wide, 0xffffffffc0000fff, "a"},
		{wide, 0xffffffffffffffff, "b"},
	} {
		if got, _ := c.k.lookup(c.pc); got != c.want {
			t.Errorf("lookup(%#x) = %q, want %q", c.pc, got, c.want)
		}
	}
	// Past 4 GiB above the base of a narrow table: its last symbol.
	far := parseKallsyms(strings.NewReader("0000000000001000 T a\n0000000000002000 t b\n"))
	if got, _ := far.lookup(1 << 40); got != "b" {
		t.Errorf("lookup(1<<40) = %q, want b", got)
	}
}

func TestLookupKernelRestricted(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kallsyms")
	os.WriteFile(p, []byte("0000000000000000 T _stext\n0000000000000000 t foo\n"), 0o644)
	old := kallsymsPath
	kallsymsPath = p
	defer func() { kallsymsPath = old }()
	fs := NewResolver().LookupKernel(0xffffffff81000010, nil)
	if len(fs) != 1 || fs[0] != (Frame{Module: "[kernel.kallsyms]", Addr: 0xffffffff81000010}) {
		t.Errorf("restricted kallsyms: %+v", fs)
	}
}

// TestUseKallsyms: a resolver given a table names kernel addresses from it,
// not from this machine's /proc/kallsyms.
func TestUseKallsyms(t *testing.T) {
	r := NewResolver()
	r.UseKallsyms(strings.NewReader("ffffffff81000000 T asm_exc_int3\nffffffff81000100 t handle_swbp.isra.0\n"))
	fs := r.LookupKernel(0xffffffff81000010, nil)
	fs = r.LookupKernel(0xffffffff81000180, fs)
	if len(fs) != 2 || fs[0] != (Frame{Func: "asm_exc_int3", Module: KernelModule, Addr: 0xffffffff81000010}) || fs[1].Func != "handle_swbp.isra.0" {
		t.Errorf("frames %+v", fs)
	}
}

// TestLookupKernel resolves a real kernel function from this machine's
// /proc/kallsyms.
func TestLookupKernel(t *testing.T) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var addr uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 3 && fs[1] == "T" && fs[2] == "schedule" {
			addr, _ = strconv.ParseUint(fs[0], 16, 64)
		}
	}
	if addr == 0 {
		t.Skip("schedule not visible in /proc/kallsyms (kptr_restrict?)")
	}
	r := NewResolver()
	got := r.LookupKernel(addr+4, nil)
	if len(got) != 1 || got[0].Func != "schedule" || got[0].Module != "[kernel.kallsyms]" || got[0].Addr != addr+4 {
		t.Errorf("LookupKernel(schedule+4) = %+v", got)
	}
}

// BenchmarkParseKallsyms parses this machine's /proc/kallsyms, read once
// into memory: what an agent pays at its start, besides the kernel's own
// formatting of the table (`time cat /proc/kallsyms`).
func BenchmarkParseKallsyms(b *testing.B) {
	data, err := os.ReadFile("/proc/kallsyms")
	if err != nil || len(data) == 0 {
		b.Skip("no /proc/kallsyms")
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if k := parseKallsymsSized(bytes.NewReader(data), 160<<10); k.len() == 0 {
			b.Fatal("no symbols")
		}
	}
}

// len is the number of symbols.
func (k *kallsyms) len() int { return len(k.ends) }

// addr is symbol i's address.
func (k *kallsyms) addr(i int) uint64 {
	if k.wide != nil {
		return k.wide[i]
	}
	return k.base + uint64(k.offs[i])
}

// TestParseKallsymsPadding: the __pfx_ symbols of a kernel built with
// function padding keep no name of their own, yet name the padding as
// the kernel does; one not followed by its function keeps its name.
func TestParseKallsymsPadding(t *testing.T) {
	k := parseKallsyms(strings.NewReader(`ffffffff81000000 t __pfx_foo
ffffffff81000010 T foo
ffffffff81000040 t __pfx_bar
ffffffff81000050 t bar
ffffffff81000080 t __pfx_lonely
ffffffff81000090 t other
ffffffff810000c0 t __pfx___pfx_x
ffffffff810000d0 t __pfx_x
ffffffff810000e0 t x
ffffffff810000f0 t __pfx_last
`))
	for _, c := range []struct {
		pc   uint64
		want string
	}{
		{0xffffffff81000000, "__pfx_foo"},
		{0xffffffff8100000f, "__pfx_foo"},
		{0xffffffff81000010, "foo"},
		{0xffffffff81000045, "__pfx_bar"},
		{0xffffffff81000055, "bar"},
		{0xffffffff81000085, "__pfx_lonely"},
		{0xffffffff81000095, "other"},
		{0xffffffff810000c5, "__pfx___pfx_x"},
		{0xffffffff810000d5, "__pfx_x"},
		{0xffffffff810000e5, "x"},
		{0xffffffff810000f5, "__pfx_last"},
	} {
		if got, _ := k.lookup(c.pc); got != c.want {
			t.Errorf("lookup(%#x) = %q, want %q", c.pc, got, c.want)
		}
	}
	// Stored: foo, bar, __pfx_lonely, other, __pfx___pfx_x (its next one
	// is stored bare), x, __pfx_last.
	if want := len("foobar__pfx_lonelyother__pfx___pfx_xx__pfx_last"); len(k.names) != want {
		t.Errorf("names hold %d bytes, want %d: %q", len(k.names), want, k.names)
	}
}
