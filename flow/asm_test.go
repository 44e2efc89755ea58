package flow

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// asm assembles test functions by hand: raw bytes, labels, and branches
// whose displacements it fills in once every label is known.
type asm struct {
	t      testing.TB
	start  uint64
	b      []byte
	labels map[string]uint64
	fixes  []fixup
}

// fixup is a displacement to fill: x86's rel8/rel32 counted from the
// instruction's end, or an arm64 word's immediate counted from the word.
type fixup struct {
	pos  int    // where the displacement is
	size int    // 1 or 4 (x86); 0 for an arm64 word
	from uint64 // the address it is relative to
	to   any    // a label or an absolute address
	a64  func(w uint32, imm int64) uint32
}

func newAsm(t testing.TB, start uint64) *asm {
	return &asm{t: t, start: start, labels: map[string]uint64{}}
}

func (a *asm) pc() uint64 { return a.start + uint64(len(a.b)) }

func (a *asm) raw(b ...byte) *asm { a.b = append(a.b, b...); return a }

func (a *asm) label(name string) *asm { a.labels[name] = a.pc(); return a }

func (a *asm) rel(op []byte, size int, to any) *asm {
	a.b = append(a.b, op...)
	pos := len(a.b)
	a.b = append(a.b, make([]byte, size)...)
	a.fixes = append(a.fixes, fixup{pos: pos, size: size, from: a.pc(), to: to})
	return a
}

func (a *asm) call(to any) *asm          { return a.rel([]byte{0xe8}, 4, to) }
func (a *asm) jmp(to any) *asm           { return a.rel([]byte{0xe9}, 4, to) }
func (a *asm) jmp8(to any) *asm          { return a.rel([]byte{0xeb}, 1, to) }
func (a *asm) jcc(cc byte, to any) *asm  { return a.rel([]byte{0x0f, 0x80 | cc}, 4, to) }
func (a *asm) jcc8(cc byte, to any) *asm { return a.rel([]byte{0x70 | cc}, 1, to) }
func (a *asm) word(w uint32) *asm        { return a.raw(binary.LittleEndian.AppendUint32(nil, w)...) }
func (a *asm) at(name string) uint64     { return a.addr(name) }
func (a *asm) ret() *asm                 { return a.raw(0xc3) }
func (a *asm) a64(w uint32, to any, enc func(uint32, int64) uint32) *asm {
	a.fixes = append(a.fixes, fixup{pos: len(a.b), from: a.pc(), to: to, a64: enc})
	return a.word(w)
}

// x86 condition codes for jcc.
const (
	ccE  = 0x4
	ccNE = 0x5
	ccLE = 0xe
)

func (a *asm) addr(to any) uint64 {
	switch to := to.(type) {
	case string:
		v, ok := a.labels[to]
		if !ok {
			a.t.Fatalf("no label %q", to)
		}
		return v
	case uint64:
		return to
	case int:
		return uint64(to)
	}
	a.t.Fatalf("bad branch target %v", to)
	return 0
}

// code resolves the branches and returns the bytes.
func (a *asm) code() []byte {
	for _, f := range a.fixes {
		d := int64(a.addr(f.to) - f.from)
		switch {
		case f.a64 != nil:
			w := binary.LittleEndian.Uint32(a.b[f.pos:])
			binary.LittleEndian.PutUint32(a.b[f.pos:], f.a64(w, d/4))
		case f.size == 1:
			if d < -128 || d > 127 {
				a.t.Fatalf("rel8 %d out of range", d)
			}
			a.b[f.pos] = byte(int8(d))
		default:
			binary.LittleEndian.PutUint32(a.b[f.pos:], uint32(int32(d)))
		}
	}
	return a.b
}

// arm64 immediates of branches, in units of 4 bytes.
func imm26(w uint32, imm int64) uint32 { return w | uint32(imm)&0x3ffffff }
func imm19(w uint32, imm int64) uint32 { return w | (uint32(imm)&0x7ffff)<<5 }
func imm14(w uint32, imm int64) uint32 { return w | (uint32(imm)&0x3fff)<<5 }

// wantBlock is what a test expects of one block.
type wantBlock struct {
	start, end uint64
	succs      []int
	exit       bool
	calls      []CallSite // Block is filled in by check
}

func checkBlocks(t *testing.T, g *CFG, want []wantBlock) {
	t.Helper()
	if len(g.Blocks) != len(want) {
		t.Fatalf("%d blocks, want %d:\n%s", len(g.Blocks), len(want), dump(g))
	}
	for i, w := range want {
		b := g.Blocks[i]
		bad := b.Start != w.start || b.End != w.end || b.Exit != w.exit || fmt.Sprint(b.Succs) != fmt.Sprint(w.succs) || len(b.Calls) != len(w.calls)
		for j := 0; !bad && j < len(w.calls); j++ {
			c := w.calls[j]
			c.Block = i
			bad = b.Calls[j] != c
		}
		if bad {
			t.Errorf("block %d: got [%#x,%#x) succs %v exit %v calls %+v; want [%#x,%#x) succs %v exit %v calls %+v",
				i, b.Start, b.End, b.Succs, b.Exit, b.Calls, w.start, w.end, w.succs, w.exit, w.calls)
		}
	}
}

func dump(g *CFG) string {
	s := fmt.Sprintf("CFG [%#x,%#x) conservative=%v %s\n", g.Start, g.End, g.Conservative, g.Why)
	for i, b := range g.Blocks {
		s += fmt.Sprintf("  %d [%#x,%#x) succs %v exit %v calls %+v\n", i, b.Start, b.End, b.Succs, b.Exit, b.Calls)
	}
	return s
}
