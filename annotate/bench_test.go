package annotate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/symbol"
)

// bigFunc compiles a C function of some 12,000 instructions (-O1 -g) and
// returns the binary, its source and the function's start and size.
func bigFunc(tb testing.TB) (bin, src string, start uint64, size int) {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("no gcc")
	}
	dir := tb.TempDir()
	var sb strings.Builder
	sb.WriteString("volatile double v[64];\n__attribute__((noinline)) void big(int n) {\n")
	for i := 0; i < 2000; i++ {
		// Loads and stores of a volatile array: neither folded nor
		// vectorized, a few instructions a line.
		fmt.Fprintf(&sb, "\tv[%d] = v[%d] * %d.5 + v[%d] * (double)n;\n", i%64, (i*7+3)%64, i%9+1, (i*13+5)%64)
	}
	sb.WriteString("}\nint main(int argc, char **argv) { big(argc); return 0; }\n")
	src = filepath.Join(dir, "big.c")
	if err := os.WriteFile(src, []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	bin = filepath.Join(dir, "big")
	if out, err := exec.Command("gcc", "-O1", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		tb.Fatalf("gcc: %v\n%s", err, out)
	}
	c, err := symbol.OpenCode(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	for _, s := range c.Starts() {
		if c.NameAt(s) == "big" {
			fc, _ := c.Func(s)
			return bin, src, fc.Start, len(fc.Code)
		}
	}
	tb.Fatal("no big in the binary")
	return
}

// bigTree is a profile of big with samples at every fourth byte of it,
// under main.
func bigTree(bin, src string, start uint64, size int) (*cct.Tree, []float64, cct.FuncID) {
	t := cct.New()
	fn := t.Intern(cct.Func{Name: "big", Module: bin, File: src})
	main := t.Intern(cct.Func{Name: "main", Module: bin, File: src})
	for off := 0; off < size; off += 4 {
		st := []cct.Frame{{Func: fn, Addr: start + uint64(off), Line: 3 + off*2000/size}, {Func: main, Addr: 0x10, Line: 2004}}
		t.Add(st, 1, cct.Metrics{Samples: 1 + int64(off%7), Time: 1000 * (1 + int64(off%7))})
	}
	t.Settle()
	self := make([]float64, t.Len())
	for i := range self {
		self[i] = float64(t.Node(cct.NodeID(i)).Self.Time)
	}
	return t, self, fn
}

// TestBuildBig: the listing of a function of over 10,000 instructions has
// them all, each with its line, and its lines' text.
func TestBuildBig(t *testing.T) {
	bin, src, start, size := bigFunc(t)
	tree, self, fn := bigTree(bin, src, start, size)
	l, err := New(Options{}).Build(tree, self, fn)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Insns) < 10000 || l.Missing != "" || l.LineSource != symbol.LinesDWARF {
		t.Fatalf("%d instructions, missing %q, lines from %q", len(l.Insns), l.Missing, l.LineSource)
	}
	var flat float64
	for _, in := range l.Insns {
		if in.Line == 0 || in.File == "" {
			t.Fatalf("%#x %s: no line", in.Addr, in.Text)
		}
		flat += in.Flat
	}
	if flat != l.Flat {
		t.Fatalf("instructions' flat %v; the function's %v", flat, l.Flat)
	}
	if len(l.Lines) < 1990 || !strings.Contains(l.Lines[10].Text, "v[") {
		t.Fatalf("%d source rows; row 10 %q", len(l.Lines), l.Lines[10].Text)
	}
}

// BenchmarkBuild10k: rebuilding the listing of a function of over 10,000
// instructions, as the live view does while samples come (the module and
// source read once, by the first build). Issue 33's budget is 50 ms.
func BenchmarkBuild10k(b *testing.B) {
	bin, src, start, size := bigFunc(b)
	tree, self, fn := bigTree(bin, src, start, size)
	a := New(Options{})
	l, err := a.Build(tree, self, fn)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(l.Insns)), "insns")
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Build(tree, self, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild10kCold: the first build, the module and source read.
func BenchmarkBuild10kCold(b *testing.B) {
	bin, src, start, size := bigFunc(b)
	tree, self, fn := bigTree(bin, src, start, size)
	for b.Loop() {
		if _, err := New(Options{}).Build(tree, self, fn); err != nil {
			b.Fatal(err)
		}
	}
}
