package symbol

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFramePointers: the same C program built with and without
// -fno-omit-frame-pointer is told apart from its CFI, and a Go binary
// counts as keeping frame pointers.
func TestFramePointers(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	prog := `
int f(int x) { volatile int a[10]; a[0] = x; return a[0] + 1; }
int g(int x) { return f(x) * 2 + f(x + 1); }
int h(int x) { volatile char b[100]; b[0] = (char)x; return g(b[0]) + 3; }
int main(void) { return h(3) & 1; }
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		keeps bool
	}{
		{[]string{"-O2", "-fno-omit-frame-pointer"}, true},
		{[]string{"-O0"}, true}, // -O0 keeps them by default
		{[]string{"-O2"}, false},
		{[]string{"-O1"}, false},
	} {
		bin := filepath.Join(dir, "p"+strings.Join(c.flags, ""))
		if out, err := exec.Command("gcc", append(c.flags, "-o", bin, src)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		if keeps, why := FramePointers(bin); keeps != c.keeps {
			t.Errorf("gcc %v: keeps frame pointers %v (%s), want %v", c.flags, keeps, why, c.keeps)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if keeps, why := FramePointers(exe); !keeps || !strings.Contains(why, "Go") {
		t.Errorf("the Go test binary: %v, %q", keeps, why)
	}
	if keeps, why := FramePointers(filepath.Join(dir, "missing")); !keeps || !strings.Contains(why, "cannot read") {
		t.Errorf("a missing file: %v, %q", keeps, why)
	}
}
