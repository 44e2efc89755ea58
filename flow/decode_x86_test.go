package flow

import (
	"strings"
	"testing"
)

const base = 0x401000

func decodeOK(t *testing.T, arch string, code []byte, noReturn func(uint64) bool) *CFG {
	t.Helper()
	g := Decode(arch, code, base, noReturn)
	if g.Conservative {
		t.Fatalf("conservative: %s\n%s", g.Why, dump(g))
	}
	if err := consistent(g, arch, code); err != nil {
		t.Fatalf("%v\n%s", err, dump(g))
	}
	return g
}

func decodeConservative(t *testing.T, arch string, code []byte, why string) *CFG {
	t.Helper()
	g := Decode(arch, code, base, nil)
	if !g.Conservative || g.Why != why {
		t.Fatalf("conservative %v why %q, want %q\n%s", g.Conservative, g.Why, why, dump(g))
	}
	if err := consistent(g, arch, code); err != nil {
		t.Fatalf("%v\n%s", err, dump(g))
	}
	return g
}

func TestX86ThreeCallsOneBlock(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x55)                   // push %rbp
	a.label("c1").call(0x500000)  // call f
	a.label("c2").call(0x400100)  // call g, below the function
	a.label("c3").raw(0xff, 0xd0) // call *%rax
	a.label("r3").raw(0x5d).ret() // pop %rbp; ret
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{{base, base + uint64(len(code)), nil, true, []CallSite{
		{Addr: a.at("c1"), Ret: a.at("c2"), Target: 0x500000},
		{Addr: a.at("c2"), Ret: a.at("c3"), Target: 0x400100},
		{Addr: a.at("c3"), Ret: a.at("r3")},
	}}})
}

func TestX86Diamond(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)                  // test %edi,%edi
	a.label("je").jcc8(ccE, "else")    // je else
	a.label("then").call(0x500000)     // call f
	a.label("jmp").jmp("join")         // jmp join
	a.label("else").call(0x600000)     // call g
	a.label("join").raw(0x83, 0xc0, 1) // add $1,%eax
	a.ret()
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("then"), []int{2, 1}, false, nil},
		{a.at("then"), a.at("else"), []int{3}, false, []CallSite{{Addr: a.at("then"), Ret: a.at("jmp"), Target: 0x500000}}},
		{a.at("else"), a.at("join"), []int{3}, false, []CallSite{{Addr: a.at("else"), Ret: a.at("join"), Target: 0x600000}}},
		{a.at("join"), g.End, nil, true, nil},
	})
}

func TestX86Loop(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x31, 0xc0) // xor %eax,%eax
	// Alignment a compiler puts before a loop head: executed, so in the
	// block before.
	a.raw(0x0f, 0x1f, 0x44, 0x00, 0x00) // nopl 0x0(%rax,%rax,1)
	a.label("loop").call(0x500000)
	a.label("inc").raw(0xff, 0xc0) // inc %eax
	a.raw(0x83, 0xf8, 0x0a)        // cmp $10,%eax
	a.jcc8(ccNE, "loop")           // jne loop
	a.label("out").ret()
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("loop"), []int{1}, false, nil},
		{a.at("loop"), a.at("out"), []int{1, 2}, false, []CallSite{{Addr: a.at("loop"), Ret: a.at("inc"), Target: 0x500000}}},
		{a.at("out"), g.End, nil, true, nil},
	})
}

// A call that does not return ends its block with no successor, as an
// exit, and the code after it starts another block.
func TestX86NoReturnSplits(t *testing.T) {
	const abort = 0x7000
	a := newAsm(t, base)
	a.raw(0x85, 0xff)            // test %edi,%edi
	a.jcc8(ccNE, "ok")           // jne ok
	a.label("die").call(abort)   // call abort
	a.label("ok").call(0x500000) // call f
	a.label("r").ret()
	code := a.code()
	noReturn := func(t uint64) bool { return t == abort }
	g := decodeOK(t, "amd64", code, noReturn)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("die"), []int{2, 1}, false, nil},
		{a.at("die"), a.at("ok"), nil, true, []CallSite{{Addr: a.at("die"), Ret: a.at("ok"), Target: abort}}},
		{a.at("ok"), g.End, nil, true, []CallSite{{Addr: a.at("ok"), Ret: a.at("r"), Target: 0x500000}}},
	})

	// Without noReturn the call falls through into ok.
	g = decodeOK(t, "amd64", code, nil)
	if b := g.Blocks[1]; len(g.Blocks) != 3 || b.Exit || len(b.Succs) != 1 || b.Succs[0] != 2 {
		t.Errorf("without noReturn:\n%s", dump(g))
	}

	// The code after a call that does not return, with no branch to it,
	// is a block nothing reaches.
	a = newAsm(t, base)
	a.raw(0x85, 0xff)
	a.label("die").call(abort)
	a.label("dead").raw(0x31, 0xc0).ret() // xor %eax,%eax; ret
	code = a.code()
	g = decodeOK(t, "amd64", code, noReturn)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("dead"), nil, true, []CallSite{{Addr: a.at("die"), Ret: a.at("dead"), Target: abort}}},
		{a.at("dead"), g.End, nil, true, nil},
	})
	if !g.Blocks[1].Unreached || g.Blocks[0].Unreached {
		t.Errorf("reached:\n%s", dump(g))
	}
}

// A call that is the function's last instruction cannot return into it.
func TestX86LastCallEnds(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "die")
	a.label("r").ret()
	a.label("die").call(0x500000)
	a.label("pad").raw(0xcc, 0xcc, 0xcc) // int3 padding after it, as Go puts
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("r"), []int{2, 1}, false, nil},
		{a.at("r"), a.at("die"), nil, true, nil},
		{a.at("die"), a.at("pad"), nil, true, []CallSite{{Addr: a.at("die"), Ret: a.at("pad"), Target: 0x500000}}},
	})
}

func TestX86JumpTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		jmp  []byte
	}{
		{"jmp *%rax", []byte{0xff, 0xe0}},
		{"notrack jmp *%rax", []byte{0x3e, 0xff, 0xe0}},
		{"jmp *0x0(,%rdi,8)", []byte{0xff, 0x24, 0xfd, 0, 0, 0, 0}},
		{"jmp *0x0(%rip)", []byte{0xff, 0x25, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAsm(t, base)
			a.raw(0x83, 0xff, 0x03) // cmp $3,%edi
			a.jcc(0x7, "default")   // ja default
			a.label("jmp").raw(tc.jmp...)
			a.label("case0").call(0x500000).ret()
			a.label("default").raw(0x31, 0xc0).ret()
			g := decodeConservative(t, "amd64", a.code(), "indirect jump at 0x401009")
			// The blocks that can be built still are.
			if len(g.Blocks) != 4 || !g.Blocks[1].Exit || len(g.Blocks[1].Succs) != 0 || len(g.Blocks[2].Calls) != 1 {
				t.Errorf("blocks:\n%s", dump(g))
			}
		})
	}
}

func TestX86TailCall(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "r")
	a.label("jmp").jmp(0x500000) // jmp f: out of the function
	a.label("r").ret()
	g := decodeConservative(t, "amd64", a.code(), "tail call at 0x401004")
	if b := g.Blocks[1]; !b.Exit || len(b.Succs) != 0 {
		t.Errorf("tail call block:\n%s", dump(g))
	}

	// A conditional jump out of bounds (a conditional tail call, or a
	// jump to the function's .cold part) is as conservative.
	a = newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc(ccE, base-0x100)
	a.ret()
	g = decodeConservative(t, "amd64", a.code(), "jump out of bounds at 0x401002")
	if b := g.Blocks[0]; !b.Exit || len(b.Succs) != 1 {
		t.Errorf("conditional tail call block:\n%s", dump(g))
	}
}

func TestX86PaddingAfterReturn(t *testing.T) {
	for _, tc := range []struct {
		name string
		pad  []byte
	}{
		{"int3", []byte{0xcc, 0xcc, 0xcc, 0xcc}},
		{"nops", []byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x0f, 0x1f, 0x40, 0x00, 0x90}},
		{"ud2", []byte{0x0f, 0x0b}},
		{"zeros", []byte{0, 0, 0, 0, 0}}, // add %al,(%rax) twice and a zero cut short
		{"mixed", []byte{0x0f, 0x0b, 0xcc, 0x90, 0x66, 0x90, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAsm(t, base)
			a.raw(0x85, 0xff)
			a.jcc8(ccE, "out")
			a.call(0x500000)
			a.label("out").ret()
			a.label("pad").raw(tc.pad...)
			g := decodeOK(t, "amd64", a.code(), nil)
			if last := g.Blocks[len(g.Blocks)-1]; len(g.Blocks) != 3 || last.End != a.at("pad") {
				t.Errorf("padding in a block:\n%s", dump(g))
			}
		})
	}
}

// Alignment between a return and a branch target is dropped too; between
// code that falls through and the target it is executed and stays.
func TestX86PaddingBetweenBlocks(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "L")
	a.label("r").ret()
	a.label("pad").raw(0x0f, 0x1f, 0x00, 0xcc) // nopl (%rax); int3
	a.label("L").call(0x500000)
	a.label("r2").ret()
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("r"), []int{2, 1}, false, nil},
		{a.at("r"), a.at("pad"), nil, true, nil},
		{a.at("L"), g.End, nil, true, []CallSite{{Addr: a.at("L"), Ret: a.at("r2"), Target: 0x500000}}},
	})
}

// Padding a branch reaches is code: a block.
func TestX86PaddingReached(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "trap")
	a.label("r").ret()
	a.label("trap").raw(0x0f, 0x0b) // ud2: __builtin_trap
	a.label("end")
	g := decodeOK(t, "amd64", a.code(), nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("r"), []int{2, 1}, false, nil},
		{a.at("r"), a.at("trap"), nil, true, nil},
		{a.at("trap"), a.at("end"), nil, true, nil},
	})
}

func TestX86TrapsEndBlocks(t *testing.T) {
	for _, trap := range [][]byte{{0x0f, 0x0b}, {0xf4}, {0xcc}} {
		a := newAsm(t, base)
		a.raw(0x85, 0xff)
		a.jcc8(ccNE, "L")
		a.label("trap").raw(trap...)
		a.label("L").ret()
		g := decodeOK(t, "amd64", a.code(), nil)
		checkBlocks(t, g, []wantBlock{
			{base, a.at("trap"), []int{2, 1}, false, nil},
			{a.at("trap"), a.at("L"), nil, true, nil},
			{a.at("L"), g.End, nil, true, nil},
		})
	}
}

func TestX86JumpIntoInstruction(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.label("j").jcc8(ccE, base+0x6)     // into the middle of the mov below
	a.label("mov").raw(0xb8, 1, 0, 0, 0) // mov $1,%eax
	a.ret()
	if a.at("mov") != base+4 {
		t.Fatal("layout")
	}
	decodeConservative(t, "amd64", a.code(), "jump into an instruction at 0x401002")
}

// glibc's old trick of jumping over a lock prefix lands inside what the
// sweep decoded as one instruction.
func TestX86JumpOverLockPrefix(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, base+5)
	a.raw(0xf0, 0x0f, 0xb1, 0x17) // lock cmpxchg %edx,(%rdi)
	a.ret()
	decodeConservative(t, "amd64", a.code(), "jump into an instruction at 0x401002")
}

func TestX86Undecodable(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.raw(0x06) // push %es: invalid in 64-bit mode
	a.ret()
	decodeConservative(t, "amd64", a.code(), "undecodable bytes at 0x401002")
}

func TestX86FallsOffTheEnd(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "out")
	a.ret()
	a.label("out").raw(0x31, 0xc0) // xor %eax,%eax, and nothing after
	decodeConservative(t, "amd64", a.code(), "falls off the end at 0x401007")
}

// Go's prologue: the stack check's slow path calls morestack and jumps
// back to the entry.
func TestX86GoPrologue(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x49, 0x3b, 0x66, 0x10) // cmp 0x10(%r14),%rsp
	a.jcc8(0x6, "more")           // jbe more
	a.label("body").call(0x500000)
	a.label("r").ret()
	a.label("more").call(0x600000) // call runtime.morestack_noctxt
	a.label("back").jmp8(base)
	a.label("pad").raw(0xcc, 0xcc)
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("body"), []int{2, 1}, false, nil},
		{a.at("body"), a.at("more"), nil, true, []CallSite{{Addr: a.at("body"), Ret: a.at("r"), Target: 0x500000}}},
		{a.at("more"), a.at("pad"), []int{0}, false, []CallSite{{Addr: a.at("more"), Ret: a.at("back"), Target: 0x600000}}},
	})
}

func TestX86Endbr(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0xf3, 0x0f, 0x1e, 0xfa)   // endbr64
	a.label("loop").raw(0xff, 0xcf) // dec %edi
	a.jcc8(ccNE, base)              // jne to the endbr64: an instruction start
	a.label("r").ret()
	g := decodeOK(t, "amd64", a.code(), nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("r"), []int{0, 1}, false, nil},
		{a.at("r"), g.End, nil, true, nil},
	})
	// A jump into the endbr64's middle is a jump into an instruction.
	a = newAsm(t, base)
	a.raw(0xf3, 0x0f, 0x1e, 0xfa)
	a.jcc8(ccNE, base+1)
	a.ret()
	decodeConservative(t, "amd64", a.code(), "jump into an instruction at 0x401004")
}

func TestDecodeDegenerate(t *testing.T) {
	for _, tc := range []struct {
		arch string
		code []byte
		why  string
	}{
		{"amd64", nil, WhyEmpty},
		{"arm64", []byte{}, WhyEmpty},
		{"riscv64", []byte{0x13, 0, 0, 0}, WhyArch},
		{"amd64", []byte{0xc3}, WhyWraps},
	} {
		start := uint64(base)
		if tc.why == WhyWraps {
			start = 1<<64 - 1
		}
		g := Decode(tc.arch, tc.code, start, nil)
		if !g.Conservative || g.Why != tc.why || len(g.Blocks) != 0 {
			t.Errorf("%s %x: %s", tc.arch, tc.code, dump(g))
		}
	}
	// A lone ret: one block, an exit.
	g := decodeOK(t, "amd64", []byte{0xc3}, nil)
	checkBlocks(t, g, []wantBlock{{base, base + 1, nil, true, nil}})
	// A jump to itself: a block that is its own successor, no exit.
	g = decodeOK(t, "amd64", []byte{0xeb, 0xfe}, nil)
	checkBlocks(t, g, []wantBlock{{base, base + 2, []int{0}, false, nil}})
}

// The reasons name the lowest address when there are several.
func TestX86WhyFirst(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "ind")
	a.jmp(0x500000) // tail call at 0x401004
	a.label("ind").raw(0xff, 0xe0)
	g := decodeConservative(t, "amd64", a.code(), "tail call at 0x401004")
	if !strings.HasPrefix(g.Why, WhyTailCall) {
		t.Error(g.Why)
	}
}

// Blocks nothing reaches are kept, marked, and do not make the function
// conservative for what they hold: data after a return, or code that
// would run off the end.
func TestX86Unreached(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "L")
	a.label("r").ret()
	a.label("data").raw(0x06) // push %es: not an instruction in 64-bit mode
	a.label("L").ret()
	a.label("tail").raw(0x31, 0xc0) // xor %eax,%eax, then the end
	code := a.code()
	g := decodeOK(t, "amd64", code, nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("r"), []int{3, 1}, false, nil},
		{a.at("r"), a.at("data"), nil, true, nil},
		{a.at("data"), a.at("L"), nil, false, nil},
		{a.at("L"), a.at("tail"), nil, true, nil},
		{a.at("tail"), g.End, nil, false, nil},
	})
	for i, want := range []bool{false, false, true, false, true} {
		if g.Blocks[i].Unreached != want {
			t.Errorf("block %d: Unreached %v\n%s", i, g.Blocks[i].Unreached, dump(g))
		}
	}

	// The same bytes reached are a reason.
	a = newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "data")
	a.ret()
	a.label("data").raw(0x06).ret()
	decodeConservative(t, "amd64", a.code(), "undecodable bytes at 0x401005")
}

func TestX86Vzeroupper(t *testing.T) {
	a := newAsm(t, base)
	a.raw(0x85, 0xff)
	a.jcc8(ccE, "L")
	a.label("v").raw(0xc5, 0xf8, 0x77)        // vzeroupper
	a.label("v3").raw(0xc4, 0xe1, 0x7c, 0x77) // vzeroall, three-byte VEX
	a.label("r").ret()
	a.label("L").raw(0xc5, 0xf8, 0x77).ret()
	g := decodeOK(t, "amd64", a.code(), nil)
	checkBlocks(t, g, []wantBlock{
		{base, a.at("v"), []int{2, 1}, false, nil},
		{a.at("v"), a.at("L"), nil, true, nil},
		{a.at("L"), g.End, nil, true, nil},
	})
	for _, at := range []string{"v", "v3"} {
		in := stepAMD64(a.code()[a.at(at)-base:], a.at(at))
		if want := a.at(map[string]string{"v": "v3", "v3": "r"}[at]) - a.at(at); uint64(in.n) != want {
			t.Errorf("%s: %d bytes, want %d", at, in.n, want)
		}
	}
}
