package cfi

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// minimalELF is an x86-64 executable header with no sections at all.
func minimalELF() []byte {
	h := make([]byte, 64)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = 2, 1, 1 // 64-bit, little-endian, version 1
	binary.LittleEndian.PutUint16(h[16:], uint16(elf.ET_EXEC))
	binary.LittleEndian.PutUint16(h[18:], uint16(elf.EM_X86_64))
	binary.LittleEndian.PutUint32(h[20:], 1)
	binary.LittleEndian.PutUint16(h[52:], 64) // e_ehsize
	return h
}

func TestLoadNoSections(t *testing.T) {
	f, err := elf.NewFile(bytes.NewReader(minimalELF()))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Load(f)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if tab.Len() != 0 || tab.FramePointerShare() != 0 {
		t.Errorf("Len %d, share %v", tab.Len(), tab.FramePointerShare())
	}
	if r, ok := tab.Rule(0x1000); ok {
		t.Errorf("Rule on an empty table: %v", r)
	}
}

func TestLoadEmptyInput(t *testing.T) {
	tab := load(input{})
	if tab.Len() != 0 {
		t.Fatal(tab.Len())
	}
	if _, ok := tab.Rule(0); ok {
		t.Error("rule from nothing")
	}
}

// framedProgram returns C source with n functions that each need a frame
// (values live across calls in callee-saved registers), and no stack
// realignment, the way most code looks.
func framedProgram(n int) string {
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n#include <stdlib.h>\n")
	b.WriteString("__attribute__((noinline)) long sink(long a) { return a ^ (a >> 3); }\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `__attribute__((noinline)) long f%d(long a, long b) {
	long x = a * %d + b, y = sink(x);
	long z = sink(y + a);
	return x + y + z + (a > 1 ? f%d(a - 1, b) : 0);
}
`, i, i+3, max(i-1, 0))
	}
	fmt.Fprintf(&b, "int main(int argc, char **argv) { printf(\"%%ld\\n\", f%d(argc, atol(argv[0]))); return 0; }\n", n-1)
	return b.String()
}

// TestFramePointerShare compiles the same program with and without frame
// pointers; libc is built without them.
func TestFramePointerShare(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "framed.c")
	if err := os.WriteFile(src, []byte(framedProgram(30)), 0o644); err != nil {
		t.Fatal(err)
	}
	fp := loadFile(t, compile(t, dir, src, "fp", "-O2", "-fno-omit-frame-pointer"))
	nofp := loadFile(t, compile(t, dir, src, "nofp", "-O2", "-fomit-frame-pointer"))
	sfp, snofp := fp.FramePointerShare(), nofp.FramePointerShare()
	t.Logf("30 functions at -O2: share %.2f with frame pointers, %.2f without", sfp, snofp)
	// The PLT stub's FDE moves the CFA without RBP in both.
	if sfp < 0.9 || snofp > 0.1 {
		t.Errorf("share %.2f with frame pointers, %.2f without", sfp, snofp)
	}
	if _, err := os.Stat(libc); err == nil {
		s := loadFile(t, libc).FramePointerShare()
		t.Logf("libc: %.2f", s)
		if s > 0.2 {
			t.Errorf("libc share %.2f, but it is built without frame pointers", s)
		}
	}
}

// TestConcurrentRules reads one table from several goroutines; run with
// -race.
func TestConcurrentRules(t *testing.T) {
	if _, err := os.Stat(libc); err != nil {
		t.Skip(err)
	}
	tab := loadFile(t, libc)
	pcs := samplePCs(tab, 2000)
	want := make([]Rule, len(pcs))
	for i, pc := range pcs {
		want[i], _ = tab.Rule(pc)
	}
	done := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i, pc := range pcs {
				if r, _ := tab.Rule(pc); r != want[i] {
					done <- r.String()
					return
				}
			}
			done <- ""
		}()
	}
	for g := 0; g < 4; g++ {
		if d := <-done; d != "" {
			t.Errorf("a concurrent Rule differed: %s", d)
		}
	}
}

// samplePCs returns up to n pcs spread over the table's FDEs, at varying
// depths inside each function.
func samplePCs(t *Table, n int) []uint64 {
	var pcs []uint64
	step := max(1, len(t.fdes)/n)
	for i := 0; i < len(t.fdes) && len(pcs) < n; i += step {
		f := t.fdes[i]
		pcs = append(pcs, f.begin+(f.end-f.begin)*uint64(i%7)/7)
	}
	return pcs
}
