package flow

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ccLib is compiled apart from ccMain, so the compiler cannot inline the
// callees, fold them or know what they return.
const ccLib = `#include <stdlib.h>
int f1(int x) { return x * 3 + 1; }
int f2(int x) { return x ^ 0x55; }
int f3(int x) { return x - 7; }
void die(int code) { exit(code); }
`

const ccMain = `int f1(int), f2(int), f3(int);
__attribute__((noreturn)) void die(int);

int three(int x) { int a = f1(x); int b = f2(a); int c = f3(b); return a + b + c; }
int diamond(int x) { int r; if (x > 0) r = f1(x); else r = f2(x); return r * 5; }
int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += f1(i); return s; }
int checked(int x) { if (x < 0) die(x); return f1(x) * 2; }
int sw(int x) {
	switch (x) {
	case 0: return f1(1) * 2;
	case 1: return f2(2) * 3;
	case 2: return f3(3) * 5;
	case 3: return f1(4) * 7;
	case 4: return f2(5) * 11;
	case 5: return f3(6) * 13;
	case 6: return f1(7) * 17;
	case 7: return f2(8) * 19;
	}
	return 0;
}
int tail(int x) { return f3(x + 1); }
int main(int argc, char **argv) {
	(void)argv;
	return three(argc) + diamond(argc) + loop(argc) + checked(argc) + sw(argc) + tail(argc);
}
`

// Functions a C compiler made, whose shape the source fixes.
func TestDecodeCompiledC(t *testing.T) {
	ran := false
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			continue
		}
		for _, opt := range []string{"-O1", "-O2"} {
			ran = true
			t.Run(cc+opt, func(t *testing.T) { testCompiledC(t, cc, opt) })
		}
	}
	if !ran {
		t.Skip("no C compiler")
	}
}

func testCompiledC(t *testing.T, cc, opt string) {
	dir := t.TempDir()
	for name, src := range map[string]string{"lib.c": ccLib, "main.c": ccMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "prog")
	cmd := exec.Command(cc, opt, "-o", exe, "main.c", "lib.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	img := readELF(t, exe)
	addr := func(name string) uint64 { return img.find(t, name).addr }
	noReturn := img.noReturn("die")
	decode := func(name string) *CFG {
		fn := img.find(t, name)
		g := Decode(img.arch, fn.code, fn.addr, noReturn)
		if err := consistent(g, img.arch, fn.code); err != nil {
			t.Errorf("%s: %v\n%s", name, err, dump(g))
		}
		return g
	}
	calls := func(g *CFG, target uint64) (blocks []int) {
		for i, b := range g.Blocks {
			for _, c := range b.Calls {
				if c.Target == target {
					blocks = append(blocks, i)
				}
			}
		}
		return blocks
	}

	// three: one block holds the three calls, in order, with their targets.
	g := decode("three")
	if g.Conservative {
		t.Errorf("three: %s", dump(g))
	}
	found := false
	for _, b := range g.Blocks {
		if len(b.Calls) == 3 {
			found = b.Calls[0].Target == addr("f1") && b.Calls[1].Target == addr("f2") && b.Calls[2].Target == addr("f3")
		}
	}
	if !found {
		t.Errorf("three: no block calls f1, f2, f3 in order:\n%s", dump(g))
	}

	// diamond: f1 and f2 on the two sides of a branch.
	g = decode("diamond")
	b1, b2 := calls(g, addr("f1")), calls(g, addr("f2"))
	if g.Conservative || len(b1) != 1 || len(b2) != 1 || b1[0] == b2[0] || len(g.Blocks) < 3 {
		t.Errorf("diamond: f1 in %v, f2 in %v:\n%s", b1, b2, dump(g))
	}

	// loop: the block calling f1 is on a cycle.
	g = decode("loop")
	b1 = calls(g, addr("f1"))
	if g.Conservative || len(b1) != 1 || !onCycle(g, b1[0]) {
		t.Errorf("loop: f1 in %v, not on a cycle:\n%s", b1, dump(g))
	}

	// checked: the call to die ends a block as an exit; at -O2 gcc may
	// move it to checked.cold, a jump out of the function.
	g = decode("checked")
	if d := calls(g, addr("die")); len(d) == 1 {
		if b := g.Blocks[d[0]]; !b.Exit || len(b.Succs) != 0 || b.Calls[len(b.Calls)-1].Ret != b.End {
			t.Errorf("checked: the call to die does not end its block:\n%s", dump(g))
		}
		if g.Conservative {
			t.Errorf("checked: %s", dump(g))
		}
	} else if opt == "-O1" || whyKind(g.Why) != WhyJumpOut {
		t.Errorf("checked: die called from %v:\n%s", d, dump(g))
	}

	// sw: a jump table, whose jump ends a block as an exit. Why may name
	// a jump to sw.cold before it (gcc -O2).
	g = decode("sw")
	fn := img.find(t, "sw")
	jmp := uint64(0)
	for off := 0; off < len(fn.code) && jmp == 0; {
		in := stepFor(img.arch)(fn.code[off:], fn.addr+uint64(off))
		if in.kind == kJmpInd {
			jmp = fn.addr + uint64(off+in.n)
		}
		off += in.n
	}
	ends := false
	for _, b := range g.Blocks {
		ends = ends || b.End == jmp && b.Exit && len(b.Succs) == 0
	}
	if why := whyKind(g.Why); !ends || why != WhyIndirectJump && (opt == "-O1" || why != WhyJumpOut) {
		t.Errorf("sw: indirect jump ending at %#x:\n%s", jmp, dump(g))
	}

	// tail: a call at -O1, a tail call at -O2.
	g = decode("tail")
	if opt == "-O1" {
		if g.Conservative || len(calls(g, addr("f3"))) != 1 {
			t.Errorf("tail at -O1: %s", dump(g))
		}
	} else if whyKind(g.Why) != WhyTailCall {
		t.Errorf("tail at -O2: %s", dump(g))
	}
	n, cons, why := 0, 0, map[string]int{}
	for _, fn := range img.funcs {
		n++
		if g := Decode(img.arch, fn.code, fn.addr, noReturn); g.Conservative {
			cons++
			why[whyKind(g.Why)]++
		}
	}
	t.Logf("%s %s: %d functions, %d conservative: %s", cc, opt, n, cons, histogram(why))
}

// onCycle says whether block b can reach itself.
func onCycle(g *CFG, b int) bool {
	seen := make([]bool, len(g.Blocks))
	stack := append([]int(nil), g.Blocks[b].Succs...)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i == b {
			return true
		}
		if !seen[i] {
			seen[i] = true
			stack = append(stack, g.Blocks[i].Succs...)
		}
	}
	return false
}
