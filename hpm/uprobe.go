package hpm

import (
	"bytes"
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// DefaultAutoK is how many of the hottest functions automatic mode probes.
// Every call of a probed function traps into the kernel (0.6 to 10 µs a hit
// in a VM, see MeasureUprobeCost), so a few give density its signal and more
// would mostly slow the target down.
const DefaultAutoK = 4

// Target is one function to count with an entry uprobe: where its first
// instruction lives in its ELF file.
type Target struct {
	Func   string
	Path   string
	Offset uint64 // file offset of the probed instruction, as the uprobe PMU wants it
	// Vaddr is the function's entry as frames name addresses (its ELF
	// virtual address), found with Offset; 0 where unknown.
	Vaddr uint64
}

// Spec is the uprobe as the sampler opens it: an entry probe only. Return
// probes rewrite the return address on the stack, which breaks Go's stack
// copying and unwinding, so there are none, for any target.
func (t Target) Spec() sampler.EventSpec {
	return sampler.EventSpec{Name: "uprobe:" + t.Func, UprobePath: t.Path, UprobeOffset: t.Offset}
}

// ResolveTargets finds funcs in binary. All or nothing: a name that does not
// resolve is almost always a typo, and counting the rest would quietly
// measure something other than what was asked.
func ResolveTargets(binary string, funcs []string) ([]Target, error) {
	if len(funcs) == 0 {
		return nil, errors.New("no functions to probe")
	}
	ts := make([]Target, 0, len(funcs))
	for _, f := range funcs {
		vaddr, off, err := symbol.FuncLocation(binary, f)
		if err != nil {
			return nil, fmt.Errorf("cannot place a uprobe on %q in %s: %w", f, binary, err)
		}
		t := Target{Func: f, Path: binary, Offset: off, Vaddr: vaddr}
		if err := t.stepsSafely(); err != nil {
			return nil, fmt.Errorf("cannot place a uprobe on %q in %s: %w", f, binary, err)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// FuncSample is one row of a flat profile: a function, the file it was
// found in, and its self weight (samples or time: only the order matters).
type FuncSample struct {
	Name, Module string
	Self         int64
}

// HottestFunctions picks the k hottest functions of a flat profile that can
// carry an entry uprobe (k <= 0 means DefaultAutoK), hottest first. Rows of
// the same function are added up first.
func HottestFunctions(flat []FuncSample, k int) []Target {
	return hottest(flat, k, locate)
}

// hottest is HottestFunctions finding each candidate with find.
func hottest(flat []FuncSample, k int, find func(name, path string) (Target, bool)) []Target {
	if k <= 0 {
		k = DefaultAutoK
	}
	type key struct{ name, module string }
	self := map[key]int64{}
	var order []key
	for _, f := range flat {
		if f.Self <= 0 || !probeable(f.Name, f.Module) {
			continue
		}
		kk := key{f.Name, f.Module}
		if _, ok := self[kk]; !ok {
			order = append(order, kk)
		}
		self[kk] += f.Self
	}
	slices.SortStableFunc(order, func(a, b key) int {
		if c := cmp.Compare(self[b], self[a]); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	var ts []Target
	for _, kk := range order {
		if len(ts) == k {
			break
		}
		if t, ok := find(kk.name, kk.module); ok {
			ts = append(ts, t)
		}
	}
	return ts
}

// errEVEX: the kernel (6.18 here) runs an AVX-512 (EVEX-encoded)
// instruction under a uprobe wrongly, and the target dies of SIGSEGV: glibc's
// __strchr_evex and __strchrnul_evex, the string functions it picks on
// AVX-512 machines, start with one.
var errEVEX = errors.New("its first instruction is AVX-512 (EVEX-encoded), which the kernel's uprobes execute wrongly: the program would crash")

// stepsSafely reports whether the probed instruction is one the kernel can
// run from under a uprobe. Only amd64 files are looked at.
func (t Target) stepsSafely() error {
	f, err := os.Open(t.Path)
	if err != nil {
		return nil // the sampler will say
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil || ef.Machine != elf.EM_X86_64 {
		return nil
	}
	code := make([]byte, 16)
	n, _ := f.ReadAt(code, int64(t.Offset))
	if evex(code[:n]) {
		return errEVEX
	}
	return nil
}

// evex reports whether the amd64 instruction at the start of code is
// EVEX-encoded: its first byte past the legacy prefixes is 0x62 (BOUND,
// which 0x62 was outside 64-bit mode, does not exist there).
func evex(code []byte) bool {
	for _, b := range code {
		switch b {
		case 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3:
			continue // legacy prefixes
		}
		return b == 0x62
	}
	return false
}

// probeable rules out what an entry uprobe cannot or must not sit on, before
// any ELF file is opened.
func probeable(name, module string) bool {
	switch {
	case name == "" || module == "":
		return false
	case strings.HasPrefix(name, "[") || strings.HasPrefix(module, "["):
		// [unknown], [truncated], [kernel.kallsyms], [vdso]: no file to
		// probe, or kernel code.
		return false
	case strings.HasPrefix(name, "0x"):
		return false // an unsymbolized address
	}
	return !goSystemStack(name)
}

// Go runtime functions that switch stacks or run with no goroutine of their
// own. A probe hit there fires with the stack in between states, and
// counting them says nothing about the program's calls anyway.
func goSystemStack(name string) bool {
	fn, ok := strings.CutPrefix(name, "runtime.")
	if !ok {
		return false
	}
	for _, p := range []string{"morestack", "systemstack", "asm", "cgocallback", "sigtramp", "sigreturn"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	switch fn {
	case "mcall", "gogo", "rt0_go", "mstart", "mstart0", "goexit", "gosave_systemstack_switch":
		return true
	}
	return false
}

// AfterStackCheck moves the probe of an amd64 Go function past the
// stack-bound check Go puts first in every function that may grow its stack,
//
//	CMPQ SP, 0x10(R14)                        (small frames)
//	LEAQ -n(SP), R12; CMPQ R12, 0x10(R14)      (larger frames)
//	JBE  morestack
//
// and returns the moved target with the distance moved (0, and t unchanged,
// for anything else, C code included). Two reasons to want it. morestack
// (stack growth, and the runtime's synchronous preemption, which poisons the
// bound) returns to the function's entry, so an entry probe counts such a
// call twice; past the JBE each call passes once. And the kernel single-steps
// a probed CMP or LEA out of line but emulates the PUSHQ BP that usually
// follows, which in a VM is the difference between about 10 µs and 0.6 µs a
// hit. The stack pointer is the same at both places, so the caller is still
// the word at SP; but samples taken at the probe then carry the entry's
// address plus the distance, and whoever recognises probe hits by address
// must add it.
func (t Target) AfterStackCheck() (Target, uint64) {
	f, err := os.Open(t.Path)
	if err != nil {
		return t, 0
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil || ef.Machine != elf.EM_X86_64 {
		return t, 0
	}
	code := make([]byte, 32)
	n, _ := f.ReadAt(code, int64(t.Offset))
	d := uint64(goStackCheckLen(code[:n]))
	t.Offset += d
	return t, d
}

var (
	cmpSPg    = []byte{0x49, 0x3b, 0x66, 0x10} // CMPQ SP, 0x10(R14)
	cmpR12g   = []byte{0x4d, 0x3b, 0x66, 0x10} // CMPQ R12, 0x10(R14)
	leaR12d8  = []byte{0x4c, 0x8d, 0x64, 0x24} // LEAQ disp8(SP), R12
	leaR12d32 = []byte{0x4c, 0x8d, 0xa4, 0x24} // LEAQ disp32(SP), R12
)

// goStackCheckLen is the length of the Go stack-bound check at the start of
// code, through its JBE, or 0 if code does not start with one.
func goStackCheckLen(code []byte) int {
	n := 0
	switch {
	case bytes.HasPrefix(code, cmpSPg):
		n = len(cmpSPg)
	case bytes.HasPrefix(code, leaR12d8) && bytes.HasPrefix(code[min(len(code), 5):], cmpR12g):
		n = 5 + len(cmpR12g)
	case bytes.HasPrefix(code, leaR12d32) && bytes.HasPrefix(code[min(len(code), 8):], cmpR12g):
		n = 8 + len(cmpR12g)
	default:
		return 0
	}
	rest := code[n:]
	switch {
	case len(rest) >= 2 && rest[0] == 0x76: // JBE rel8
		return n + 2
	case len(rest) >= 6 && rest[0] == 0x0f && rest[1] == 0x86: // JBE rel32
		return n + 6
	}
	return 0
}
