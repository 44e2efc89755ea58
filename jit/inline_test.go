package jit

import (
	"slices"
	"strings"
	"testing"
)

// inlineEntry is one pc's chain for the writer: frames as name, file, line.
type inlineEntry struct {
	pc     uint64
	frames []InlineFrame
}

// inline appends a JIT_CODE_INLINE record as cctop's JVMTI agent writes
// it, padded to 8 bytes.
func (w *dumpWriter) inline(ts, addr uint64, es ...inlineEntry) int {
	b := w.fields(addr, uint64(len(es)))
	for _, e := range es {
		b = append(b, w.fields(e.pc, uint32(len(e.frames)))...)
		for _, f := range e.frames {
			b = append(b, w.fields(uint32(f.Line), f.Func, f.File)...)
		}
	}
	for (recordHeader+len(b))%8 != 0 {
		b = append(b, 0)
	}
	return w.record(recInline, ts, b, 0)
}

var (
	frRun = InlineFrame{"long Inl.run(long)", "Inl.java", 10}
	frMix = InlineFrame{"long Inl.mix(long)", "Inl.java", 4}
)

// inlineDump is a compiled run() with mix() inlined at [0x10, 0x20).
func inlineDump() *dumpWriter {
	w := newDump(0)
	w.inline(100, addrX,
		inlineEntry{addrX, []InlineFrame{frRun}},
		inlineEntry{addrX + 0x10, []InlineFrame{frMix, frRun}},
		inlineEntry{addrX + 0x20, []InlineFrame{frRun}},
		inlineEntry{addrX + 0x1000, []InlineFrame{frMix, frRun}}, // outside the code: dropped
	)
	w.debug(100, addrX, entry{addrX, 10, "Inl.java"}, entry{addrX + 0x10, 4, "Inl.java"})
	w.load(100, addrX, 0x40, 1, "long Inl.run(long)")
	return w
}

// TestInlineRecord: the chain at a pc is the one recorded at the nearest
// pc at or below it within the code, innermost first; the record counts
// neither as unknown nor as a standard type, and a load at another
// address does not take it.
func TestInlineRecord(t *testing.T) {
	w := inlineDump()
	w.inline(200, addrX+0x100, inlineEntry{addrX + 0x100, []InlineFrame{frMix, frRun}})
	w.load(200, addrX+0x200, 0x40, 2, "B") // not the code the chains are for
	d := NewDecoder()
	if err := d.Feed(w.b); err != nil {
		t.Fatal(err)
	}
	if byType, unknown := d.Records(); unknown != 0 || byType[recLoad] != 2 || d.Inlines() != 2 {
		t.Fatalf("records %v unknown %d inlines %d", byType, unknown, d.Inlines())
	}
	for _, tc := range []struct {
		pc   uint64
		want []InlineFrame
	}{
		{addrX, []InlineFrame{frRun}},
		{addrX + 0xf, []InlineFrame{frRun}},
		{addrX + 0x10, []InlineFrame{frMix, frRun}},
		{addrX + 0x1f, []InlineFrame{frMix, frRun}},
		{addrX + 0x20, []InlineFrame{frRun}},
		{addrX + 0x3f, []InlineFrame{frRun}},
	} {
		c, ok := d.Table().Lookup(tc.pc, 150)
		if !ok {
			t.Fatalf("no code at %#x", tc.pc)
		}
		if got := c.Inline(tc.pc); !slices.Equal(got, tc.want) {
			t.Errorf("Inline(%#x) = %v, want %v", tc.pc, got, tc.want)
		}
	}
	if c, ok := d.Table().Lookup(addrX+0x200, 250); !ok || c.Inline(addrX+0x200) != nil {
		t.Errorf("code B has chains: %v", c.Inline(addrX+0x200))
	}
	c, _ := d.Table().Lookup(addrX, 150)
	if got := c.Inline(addrX + 0x40); got != nil {
		t.Errorf("Inline past the code = %v", got)
	}
}

// TestInlineRecordDamaged: sizes that do not fit the record stop decoding
// there with one line, keeping what came before.
func TestInlineRecordDamaged(t *testing.T) {
	for name, body := range map[string]func(w *dumpWriter) []byte{
		"too many entries": func(w *dumpWriter) []byte { return w.fields(addrX, uint64(1000)) },
		"too deep":         func(w *dumpWriter) []byte { return w.fields(addrX, uint64(1), addrX, uint32(maxInlineDepth+1)) },
		"frames past end":  func(w *dumpWriter) []byte { return w.fields(addrX, uint64(1), addrX, uint32(2), uint32(1), "a", "b") },
		"unterminated": func(w *dumpWriter) []byte {
			return append(w.fields(addrX, uint64(1), addrX, uint32(1), uint32(1)), 'x', 'y', 'z', 'w', 'v', 'u')
		},
		"short": func(w *dumpWriter) []byte { return w.fields(addrX) },
	} {
		w := newDump(0)
		w.load(50, addrX+0x1000, 8, 9, "before")
		w.record(recInline, 100, body(w), 0)
		d := NewDecoder()
		err := d.Feed(w.b)
		if err == nil || !strings.Contains(err.Error(), "JIT_CODE_INLINE") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v", name, err)
		}
		if _, ok := d.Table().Lookup(addrX+0x1000, 60); !ok {
			t.Errorf("%s: the code before is lost", name)
		}
	}
}
