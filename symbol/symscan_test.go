package symbol

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymtabScan: the raw scan of .symtab finds what funcByName finds over
// the decoded symbols, for a sample of a 3,000-function program's, names
// that are tails of others included, nothing for names that are no
// function's or only a part of one's, and says there was nothing to scan
// in a stripped copy.
func TestSymtabScan(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	// A C program of 3,000 functions, some names the tails of others
	// (the linker may store them once), and a stripped copy.
	dir := t.TempDir()
	var src strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&src, "int f%d(int x) { return x + %d; }\n", i, i)
		if i%100 == 0 {
			fmt.Fprintf(&src, "int tail_f%d(int x) { return f%d(x) * 2; }\n", i, i)
		}
	}
	src.WriteString("int main(void) { return f7(1) + tail_f100(2); }\n")
	c := filepath.Join(dir, "many.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "many")
	if out, err := exec.Command("gcc", "-O0", "-o", bin, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	paths := []string{bin, stripped}
	for _, path := range paths {
		file, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.NewFile(file)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := f.Symbols()
		if err != nil {
			_, _, scanned := funcBySymtabScan(f, file, "main")
			if scanned || path != stripped {
				t.Errorf("%s: no .symtab to decode (%v), scanned %v", path, err, scanned)
			}
			file.Close()
			continue
		}
		checked := 0
		for i, s := range syms {
			if (i%7 != 0 && !strings.HasPrefix(s.Name, "tail_")) || s.Name == "" {
				continue
			}
			want, wok := funcByName(syms, s.Name)
			got, ok, scanned := funcBySymtabScan(f, file, s.Name)
			if !scanned || ok != wok || (ok && got != want) {
				t.Fatalf("%s: %q: scan %#x %v (scanned %v), decoded %#x %v", path, s.Name, got, ok, scanned, want, wok)
			}
			checked++
		}
		if checked < 400 {
			t.Errorf("%s: only %d names checked", path, checked)
		}
		for _, name := range []string{"no_such_function_anywhere", "ail_f100", "f10000", "tail_f"} {
			if _, ok, _ := funcBySymtabScan(f, file, name); ok {
				if _, wok := funcByName(syms, name); !wok {
					t.Errorf("%s: %q found by the scan, not a function", path, name)
				}
			}
		}
		t.Logf("%s: %d names checked", path, checked)
		file.Close()
	}
}

// TestStringOffsets: a name found across the boundary of two reads, at a
// tail of a longer string, and not as a prefix of another.
func TestStringOffsets(t *testing.T) {
	tab := append(bytes.Repeat([]byte{'x'}, 60), 0)
	tab = append(tab, "foo_bar\x00bar\x00barn\x00"...)
	r := bytes.NewReader(tab)
	buf := make([]byte, 16)
	got := stringOffsets(r, 0, uint64(len(tab)), []byte("bar\x00"), buf)
	want := []uint64{65, 69}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("offsets of bar: %v, want %v", got, want)
	}
}
