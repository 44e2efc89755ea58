package hpm

import (
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/cctop/cctop/symbol"
)

func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	return exe
}

func funcName(f any) string {
	return runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

// fileOffset translates a function address of the running test binary to a
// file offset the independent way, through its PT_LOAD segment, to check
// what symbol.FuncOffset says.
func fileOffset(t *testing.T, path string, addr uint64) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && addr >= p.Vaddr && addr < p.Vaddr+p.Filesz {
			return addr - p.Vaddr + p.Off
		}
	}
	t.Fatalf("%#x in no executable segment of %s", addr, path)
	return 0
}

func TestResolveTargets(t *testing.T) {
	exe := testBinary(t)
	name := funcName(probeTarget)
	if !strings.HasSuffix(name, "/hpm.probeTarget") {
		t.Fatalf("probe target is called %q", name)
	}
	ts, err := ResolveTargets(exe, []string{name, funcName(ParseMode)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Func != name || ts[0].Path != exe {
		t.Fatalf("%+v", ts)
	}
	// Compare with the ELF file itself: the runtime PC is a file address
	// only in a fixed-address executable.
	if exeIsStatic(t, exe) {
		if want := fileOffset(t, exe, uint64(reflect.ValueOf(probeTarget).Pointer())); ts[0].Offset != want {
			t.Errorf("offset %#x, want the entry at %#x", ts[0].Offset, want)
		}
	} else if ts[0].Offset == 0 {
		t.Errorf("zero offset")
	}
	for _, tg := range ts {
		if vaddr, off, err := symbol.FuncLocation(exe, tg.Func); err != nil || tg.Vaddr != vaddr || tg.Offset != off {
			t.Errorf("%s: vaddr %#x offset %#x, the symbol table %#x %#x (%v)", tg.Func, tg.Vaddr, tg.Offset, vaddr, off, err)
		}
	}
	spec := ts[0].Spec()
	if spec.UprobePath != exe || spec.UprobeOffset != ts[0].Offset || spec.Hardware || spec.Name != "uprobe:"+name {
		t.Errorf("spec %+v", spec)
	}

	_, err = ResolveTargets(exe, []string{name, "main.noSuchFunction"})
	if err == nil || !strings.Contains(err.Error(), `"main.noSuchFunction"`) {
		t.Errorf("missing function: error %v, want one naming it", err)
	}
	if _, err := ResolveTargets(exe, nil); err == nil {
		t.Error("no functions: no error")
	}
}

func readAt(t *testing.T, path string, off uint64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(off)); err != nil {
		t.Fatal(err)
	}
	return b
}

// exeIsStatic reports whether exe is linked at a fixed address, so that a
// runtime PC is also its ELF virtual address.
func exeIsStatic(t *testing.T, exe string) bool {
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Type == elf.ET_EXEC
}

func TestHottestFunctions(t *testing.T) {
	exe := testBinary(t)
	probe, parse, choose := funcName(probeTarget), funcName(ParseMode), funcName(Choose)
	flat := []FuncSample{
		{"runtime.morestack", exe, 900},          // system stack: never
		{"runtime.systemstack_switch", exe, 850}, // system stack
		{"runtime.mcall", exe, 800},              // system stack
		{"runtime.asmcgocall", exe, 790},         // system stack
		{"[unknown]", exe, 700},                  // pseudo frame
		{"do_syscall_64", "[kernel.kallsyms]", 650},
		{"__vdso_clock_gettime", "[vdso]", 640},
		{"", exe, 600},
		{"main.gone", exe, 500}, // not in the binary
		{parse, exe, 300},
		{probe, exe, 250},
		{probe, exe, 100}, // same function again: adds up to 350
		{choose, exe, 200},
		{funcName(Describe), exe, 0}, // never sampled
		{funcName(CallEvents), exe, 150},
		{funcName(ResolveTargets), exe, 120},
	}
	got := HottestFunctions(flat, 0)
	want := []string{probe, parse, choose, funcName(CallEvents)}
	if len(got) != DefaultAutoK {
		t.Fatalf("got %d targets, want DefaultAutoK=%d: %+v", len(got), DefaultAutoK, got)
	}
	for i, w := range want {
		if got[i].Func != w || got[i].Path != exe || got[i].Offset == 0 {
			t.Errorf("target %d: %+v, want %s", i, got[i], w)
		}
		// Located with its address: placing its probe reads no symbol table again.
		if vaddr, _, err := symbol.FuncLocation(exe, w); err != nil || got[i].Vaddr != vaddr {
			t.Errorf("target %d: vaddr %#x, the symbol table %#x (%v)", i, got[i].Vaddr, vaddr, err)
		}
	}
	if got := HottestFunctions(flat, 2); len(got) != 2 || got[1].Func != parse {
		t.Errorf("k=2: %+v", got)
	}
	if got := HottestFunctions(flat[:9], 3); len(got) != 0 {
		t.Errorf("nothing probeable, got %+v", got)
	}
}

func TestAfterStackCheck(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the Go stack-bound check is only recognised on amd64")
	}
	exe := testBinary(t)
	ts, err := ResolveTargets(exe, []string{funcName(framedTarget), funcName(probeTarget)})
	if err != nil {
		t.Fatal(err)
	}
	// framedTarget starts CMPQ SP, 0x10(R14); JBE rel8: 6 bytes, then
	// the PUSHQ BP the kernel emulates.
	moved, d := ts[0].AfterStackCheck()
	if d != 6 || moved.Offset != ts[0].Offset+6 || moved.Func != ts[0].Func || moved.Path != exe {
		t.Errorf("framedTarget: moved by %d to %+v, want 6", d, moved)
	}
	if b := readAt(t, exe, moved.Offset, 1); b[0] != 0x55 {
		t.Errorf("probed instruction starts with %#x, want PUSHQ BP (0x55)", b[0])
	}
	// A leaf has no check: nothing moves.
	if same, d := ts[1].AfterStackCheck(); d != 0 || same != ts[1] {
		t.Errorf("probeTarget moved by %d: %+v", d, same)
	}
	if same, d := (Target{Func: "f", Path: "/nonexistent", Offset: 64}).AfterStackCheck(); d != 0 || same.Offset != 64 {
		t.Errorf("unreadable file moved by %d", d)
	}
}

func TestGoStackCheckLen(t *testing.T) {
	for _, c := range []struct {
		what string
		code []byte
		want int
	}{
		{"small frame, JBE rel8", []byte{0x49, 0x3b, 0x66, 0x10, 0x76, 0x29, 0x55}, 6},
		{"small frame, JBE rel32", []byte{0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0x87, 0x02, 0, 0, 0x55}, 10},
		{"LEAQ -0x10(SP), R12", []byte{0x4c, 0x8d, 0x64, 0x24, 0xf0, 0x4d, 0x3b, 0x66, 0x10, 0x76, 0x7f, 0x55}, 11},
		{"LEAQ 0xffffff78(SP), R12", []byte{0x4c, 0x8d, 0xa4, 0x24, 0x78, 0xff, 0xff, 0xff, 0x4d, 0x3b, 0x66, 0x10,
			0x0f, 0x86, 0x10, 0x01, 0, 0}, 18},
		{"C: endbr64; push rbp", []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5}, 0},
		{"C: push rbp", []byte{0x55, 0x48, 0x89, 0xe5}, 0},
		{"Go leaf: PUSHQ BP", []byte{0x55, 0x48, 0x89, 0xe5}, 0},
		{"systemstack bound (0x18): runtime only, left alone", []byte{0x49, 0x3b, 0x66, 0x18, 0x76, 0x10}, 0},
		{"CMPQ without JBE", []byte{0x49, 0x3b, 0x66, 0x10, 0x90}, 0},
		{"truncated", []byte{0x4c, 0x8d, 0x64}, 0},
		{"empty", nil, 0},
	} {
		if got := goStackCheckLen(c.code); got != c.want {
			t.Errorf("%s: %d, want %d", c.what, got, c.want)
		}
	}
}

// TestEVEX: probes are kept off AVX-512 instructions, which the kernel runs
// wrongly under a uprobe (the target died of SIGSEGV with a probe on glibc's
// __strchr_evex).
func TestEVEX(t *testing.T) {
	for _, c := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce}, true}, // vpbroadcastb %esi,%ymm17
		{[]byte{0x67, 0x62, 0xe1, 0xfe, 0x28, 0x6f}, true}, // with an address-size prefix
		{[]byte{0xc5, 0xf9, 0x6e, 0xc6}, false},            // vmovd %esi,%xmm0 (VEX: runs fine)
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa}, false},            // endbr64
		{[]byte{0x55}, false},                              // push %rbp
		{nil, false},
	} {
		if got := evex(c.code); got != c.want {
			t.Errorf("evex(% x) = %v, want %v", c.code, got, c.want)
		}
	}
	// glibc's own, where the machine has AVX-512 variants.
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	off, err := symbol.FuncOffset(libc, "__strchr_evex")
	if err != nil {
		t.Skipf("no __strchr_evex in %s: %v", libc, err)
	}
	tg := Target{Func: "__strchr_evex", Path: libc, Offset: off}
	if err := tg.stepsSafely(); err == nil {
		t.Errorf("a probe on __strchr_evex passes")
	}
	if ts := HottestFunctions([]FuncSample{{"__strchr_evex", libc, 100}, {"malloc", libc, 50}}, 4); len(ts) != 1 || ts[0].Func != "malloc" {
		t.Errorf("HottestFunctions picked %v", ts)
	}
}
