package cfi

import "testing"

// TestFuncStart: the start of the FDE that Rule uses for a pc, the
// innermost of nested ones, and none outside every FDE.
func TestFuncStart(t *testing.T) {
	f := &frames{vaddr: 0x10000}
	c := gccCIE(f)
	gccFDE(f, c, 0x1000, 0x1000) // outer
	gccFDE(f, c, 0x1100, 0x100)  // nested
	gccFDE(f, c, 0x3000, 0x20)
	tab := ehTable(f)
	for _, c := range []struct {
		pc, start uint64
		ok        bool
	}{
		{0xfff, 0, false},
		{0x1000, 0x1000, true},
		{0x10ff, 0x1000, true},
		{0x1100, 0x1100, true},
		{0x11ff, 0x1100, true},
		{0x1200, 0x1000, true},
		{0x1fff, 0x1000, true},
		{0x2000, 0, false},
		{0x301f, 0x3000, true},
		{0x3020, 0, false},
	} {
		if start, ok := tab.FuncStart(c.pc); start != c.start || ok != c.ok {
			t.Errorf("FuncStart(%#x) = %#x, %v; want %#x, %v", c.pc, start, ok, c.start, c.ok)
		}
	}
	if _, ok := (&Table{}).FuncStart(0x1000); ok {
		t.Error("FuncStart on an empty table")
	}
}
