package annotate

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
)

// TestJITFromMemory: a live target's JIT code is read from its memory
// (a CodeReader) and decoded from the first sampled address to the last,
// each instruction with its samples, the loop's jump target marked; a
// reader that cannot read leaves the listing as a saved profile's.
func TestJITFromMemory(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the code below is x86-64")
	}
	const base = 0x7f0000001000
	code := []byte{
		0x48, 0x01, 0xc8, // ADDQ CX, AX
		0x48, 0xff, 0xc1, // INCQ CX
		0x48, 0x39, 0xd1, // CMPQ DX, CX
		0x7c, 0xf5, // JL base
		0xc3, // RET
	}
	tr := cct.New()
	fn := tr.Intern(cct.Func{Name: "LazyCompile:*loop app.js:3", Module: "[jit]"})
	tr.Add([]cct.Frame{{Func: fn, Addr: base + 3}}, 1, cct.Metrics{Samples: 3, Time: 30})
	tr.Add([]cct.Frame{{Func: fn, Addr: base + 9}}, 1, cct.Metrics{Samples: 1, Time: 10})
	tr.Settle()
	self := make([]float64, tr.Len())
	for i := range self {
		self[i] = float64(tr.Node(cct.NodeID(i)).Self.Time)
	}
	reads := 0
	a := New(Options{})
	a.SetCodeReader(func(addr uint64, buf []byte) bool {
		reads++
		off := addr - base
		if addr < base || off+uint64(len(buf)) > uint64(len(code)) {
			return false // past the mapping
		}
		copy(buf, code[off:])
		return true
	})
	l, err := a.Build(tr, self, fn)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Insns) < 3 || l.Insns[0].Addr != base+3 || l.Insns[0].Flat != 30 || !strings.HasPrefix(l.Insns[0].Text, "INCQ") {
		t.Fatalf("instructions %+v", l.Insns)
	}
	var jl *Insn
	for i := range l.Insns {
		if l.Insns[i].Addr == base+9 {
			jl = &l.Insns[i]
		}
	}
	if jl == nil || jl.Flat != 10 || jl.Target != base || !strings.HasPrefix(jl.Text, "JL") {
		t.Errorf("the jump: %+v", jl)
	}
	if !strings.Contains(l.Missing, "read from the running process") || strings.Contains(l.Missing, "no machine code") {
		t.Errorf("missing %q", l.Missing)
	}
	if reads != 4 {
		t.Errorf("%d reads: 16 and 8 and 4 bytes past the last address run past the mapping, 2 do not", reads)
	}
	// The process gone: as a saved profile.
	a.SetCodeReader(func(uint64, []byte) bool { return false })
	l, _ = a.Build(tr, self, fn)
	if l.Insns != nil || !strings.Contains(l.Missing, "no machine code") {
		t.Errorf("unreadable: %+v", l)
	}
}
