package cfi

import (
	"fmt"
	"testing"
)

// TestPointerEncodings builds one FDE per pc_begin encoding and
// application and expects it indexed at the right range.
func TestPointerEncodings(t *testing.T) {
	formats := []byte{peAbsptr, peUleb128, peUdata2, peUdata4, peUdata8, peSleb128, peSdata2, peSdata4, peSdata8}
	apps := []byte{0, pePcrel, peTextrel, peDatarel}
	for _, format := range formats {
		for _, app := range apps {
			enc := format | app
			t.Run(fmt.Sprintf("%#02x", enc), func(t *testing.T) {
				// udata2 and sdata2 hold 16 bits: keep the addresses (and
				// their distances from the bases) small.
				f := &frames{vaddr: 0x3000, text: 0x1000, data: 0x4000}
				c := f.cie(cieSpec{
					aug: "zR", codeAlign: 1, dataAlign: -8, ra: 16, augData: []byte{enc},
					ins: cat(defCFA(RegRSP, 8), offset(RegRA, 1)),
				})
				begin := uint64(0x1200)
				unsigned := format == peUleb128 || format == peUdata2 || format == peUdata4
				if unsigned && (app == pePcrel || app == peDatarel) {
					// Unsigned formats cannot go backwards from their base.
					begin = 0x4800
				}
				f.fde(c, enc, begin, 0x40, []byte{})
				tab := ehTable(f)
				if tab.Len() != 1 {
					t.Fatalf("Len = %d, want 1", tab.Len())
				}
				checkRules(t, tab, []pcWant{{begin - 1, ""}, {begin, base}, {begin + 0x3f, base}, {begin + 0x40, ""}})
			})
		}
	}
}

// TestIndirectPcBegin: an indirect pc_begin would need the process's
// memory, so the FDE is dropped.
func TestIndirectPcBegin(t *testing.T) {
	f := &frames{vaddr: 0x3000}
	c := f.cie(cieSpec{aug: "zR", codeAlign: 1, dataAlign: -8, ra: 16, augData: []byte{peIndirect | pePcrel | peSdata4}, ins: defCFA(RegRSP, 8)})
	f.fde(c, pePcrel|peSdata4, 0x1000, 0x10, []byte{})
	if n := ehTable(f).Len(); n != 0 {
		t.Fatalf("Len = %d, want 0", n)
	}
}

// TestAugmentations covers the augmentation strings GCC and glibc emit.
func TestAugmentations(t *testing.T) {
	sdata4 := byte(pePcrel | peSdata4)
	tests := []struct {
		name    string
		cie     cieSpec
		enc     byte   // FDE pointer encoding implied by the CIE
		fdeAug  []byte // nil: the CIE has no 'z'
		signal  bool
		indexed bool
	}{
		{"z", cieSpec{aug: "z", version: 1}, peAbsptr, []byte{}, false, true},
		{"zR", cieSpec{aug: "zR", version: 1, augData: []byte{sdata4}}, sdata4, []byte{}, false, true},
		{"zPLR", cieSpec{aug: "zPLR", version: 1, augData: cat(
			[]byte{peIndirect | pePcrel | peSdata4}, le32(0x1234), // personality
			[]byte{sdata4}, // LSDA encoding
			[]byte{sdata4}, // FDE encoding
		)}, sdata4, le32(0x5678), false, true},
		{"zPR with uleb personality", cieSpec{aug: "zPR", version: 3, augData: cat(
			[]byte{peUleb128}, uleb(1<<20), []byte{sdata4},
		)}, sdata4, []byte{}, false, true},
		{"zS", cieSpec{aug: "zRS", version: 1, augData: []byte{sdata4}}, sdata4, []byte{}, true, true},
		{"zS alone", cieSpec{aug: "zS", version: 1}, peAbsptr, []byte{}, true, true},
		{"unknown after z is skipped by length", cieSpec{aug: "zRX", version: 1, augData: []byte{sdata4, 1, 2, 3}}, sdata4, []byte{}, false, true},
		{"eh", cieSpec{aug: "eh", version: 1, augData: le64(0xdead)}, peAbsptr, nil, false, true},
		{"empty", cieSpec{aug: "", version: 1}, peAbsptr, nil, false, true},
		{"unknown without z", cieSpec{aug: "Q", version: 1}, peAbsptr, nil, false, false},
		{"version 2", cieSpec{aug: "", version: 2}, peAbsptr, nil, false, false},
		{"version 4", cieSpec{aug: "zR", version: 4, addrSize: 8, augData: []byte{sdata4}}, sdata4, []byte{}, false, true},
		{"version 4 bad address size", cieSpec{aug: "zR", version: 4, addrSize: 3, augData: []byte{sdata4}}, sdata4, []byte{}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &frames{vaddr: 0x3000}
			tc.cie.codeAlign, tc.cie.dataAlign, tc.cie.ra = 1, -8, 16
			tc.cie.ins = cat(defCFA(RegRSP, 8), offset(RegRA, 1))
			c := f.cie(tc.cie)
			f.fde(c, tc.enc, 0x1000, 0x10, tc.fdeAug, cat(advance(1), defCFAOffset(16))...)
			tab := ehTable(f)
			if got := tab.Len() == 1; got != tc.indexed {
				t.Fatalf("indexed = %v, want %v", got, tc.indexed)
			}
			if !tc.indexed {
				return
			}
			r, ok := tab.Rule(0x1001)
			if !ok || r.String() != fmt.Sprint("cfa=rsp+16 ra=c-8", map[bool]string{true: " signal"}[tc.signal]) {
				t.Errorf("Rule(0x1001) = %v, %v", r, ok)
			}
			if r.Signal() != tc.signal {
				t.Errorf("Signal = %v, want %v", r.Signal(), tc.signal)
			}
		})
	}
}

// TestDebugFrame: .debug_frame's CIE id is all ones, its CIE pointer a
// section offset (so a CIE may follow its FDEs), and 64-bit DWARF uses the
// 0xffffffff length escape with 8-byte ids.
func TestDebugFrame(t *testing.T) {
	for _, dwarf64 := range []bool{false, true} {
		for _, version := range []byte{1, 3, 4} {
			t.Run(fmt.Sprintf("dwarf64=%v/v%d", dwarf64, version), func(t *testing.T) {
				f := &frames{debug: true, dwarf64: dwarf64}
				spec := cieSpec{version: version, addrSize: 8, codeAlign: 1, dataAlign: -8, ra: 16,
					ins: cat(defCFA(RegRSP, 8), offset(RegRA, 1))}
				// The first FDE names the CIE that follows it: measure the
				// FDE to know the offset.
				first := &frames{debug: true, dwarf64: dwarf64}
				first.fde(0, peAbsptr, 0x1000, 0x20, nil, cat(advance(4), defCFAOffset(16))...)
				cieOff := len(first.b)
				f.fde(cieOff, peAbsptr, 0x1000, 0x20, nil, cat(advance(4), defCFAOffset(16))...)
				f.cie(spec)
				f.fde(cieOff, peAbsptr, 0x2000, 0x20, nil)
				tab := load(input{debug: f.b, addrSize: 8})
				if tab.Len() != 2 {
					t.Fatalf("Len = %d, want 2", tab.Len())
				}
				checkRules(t, tab, []pcWant{
					{0x1003, base}, {0x1004, "cfa=rsp+16 ra=c-8"}, {0x1020, ""},
					{0x2000, base},
				})
			})
		}
	}
}

// TestDebugFrameSegment: a version 4 CIE with a segment selector size puts
// the selector in front of each FDE's initial location.
func TestDebugFrameSegment(t *testing.T) {
	f := &frames{debug: true}
	c := f.cie(cieSpec{version: 4, addrSize: 8, segSize: 2, codeAlign: 1, dataAlign: -8, ra: 16,
		ins: cat(defCFA(RegRSP, 8), offset(RegRA, 1))})
	body := cat(le16(7), le64(0x1000), le64(0x10))
	f.entry(uint64(c), body)
	tab := load(input{debug: f.b, addrSize: 8})
	checkRules(t, tab, []pcWant{{0x1000, base}, {0x1010, ""}})
}

// TestEhFrameTerminator: .eh_frame ends at a zero length; .debug_frame
// steps over zero words.
func TestEhFrameTerminator(t *testing.T) {
	f := &frames{vaddr: 0x3000}
	c := gccCIE(f)
	gccFDE(f, c, 0x1000, 0x10)
	f.b = append(f.b, 0, 0, 0, 0)
	gccFDE(f, c, 0x2000, 0x10)
	if n := ehTable(f).Len(); n != 1 {
		t.Errorf(".eh_frame: Len = %d, want 1 (nothing after the terminator)", n)
	}

	d := &frames{debug: true}
	dc := d.cie(cieSpec{version: 3, codeAlign: 1, dataAlign: -8, ra: 16, ins: defCFA(RegRSP, 8)})
	d.fde(dc, peAbsptr, 0x1000, 0x10, nil)
	d.b = append(d.b, 0, 0, 0, 0)
	d.fde(dc, peAbsptr, 0x2000, 0x10, nil)
	if n := load(input{debug: d.b, addrSize: 8}).Len(); n != 2 {
		t.Errorf(".debug_frame: Len = %d, want 2", n)
	}
}

// TestAddrSize4: a 32-bit module's absptr is 4 bytes.
func TestAddrSize4(t *testing.T) {
	d := &frames{debug: true}
	dc := d.cie(cieSpec{version: 3, codeAlign: 1, dataAlign: -4, ra: 8, ins: defCFA(4, 4)})
	d.entry(uint64(dc), cat(le32(0x8048000), le32(0x40)))
	tab := load(input{debug: d.b, addrSize: 4})
	if r, ok := tab.Rule(0x8048010); !ok || r.CFA().Reg() != 4 || r.CFA().Offset() != 4 {
		t.Fatalf("Rule = %v, %v", r, ok)
	}
}

// TestLookupOverlaps: nested, duplicate and zero-length FDEs, as linkers
// leave them, must not hide the FDE that contains a pc.
func TestLookupOverlaps(t *testing.T) {
	f := &frames{vaddr: 0x10000}
	c := gccCIE(f)
	gccFDE(f, c, 0x1000, 0x1000, defCFAOffset(100)) // outer
	gccFDE(f, c, 0x1100, 0x100, defCFAOffset(200))  // nested
	gccFDE(f, c, 0x1500, 0, defCFAOffset(300))      // zero length: dropped
	gccFDE(f, c, 0x1800, 0x10, defCFAOffset(400))   // nested, ends early
	d := &frames{debug: true}
	dc := d.cie(cieSpec{version: 3, codeAlign: 1, dataAlign: -8, ra: 16, ins: cat(defCFA(RegRSP, 8), offset(RegRA, 1))})
	d.fde(dc, peAbsptr, 0x1800, 0x10, nil, defCFAOffset(500)...) // same range in .debug_frame
	d.fde(dc, peAbsptr, 0x3000, 0x10, nil, defCFAOffset(600)...) // only in .debug_frame
	d.fde(dc, peAbsptr, 0, 0x10000, nil, defCFAOffset(700)...)   // discarded function, relocated to 0
	tab := load(input{eh: f.b, ehAddr: f.vaddr, debug: d.b, addrSize: 8})
	if tab.Len() != 6 {
		t.Fatalf("Len = %d, want 6", tab.Len())
	}
	checkRules(t, tab, []pcWant{
		{0x1000, "cfa=rsp+100 ra=c-8"},
		{0x1100, "cfa=rsp+200 ra=c-8"},
		{0x11ff, "cfa=rsp+200 ra=c-8"},
		{0x1200, "cfa=rsp+100 ra=c-8"},
		{0x1500, "cfa=rsp+100 ra=c-8"},
		{0x1800, "cfa=rsp+400 ra=c-8"}, // .eh_frame wins a tie
		{0x1810, "cfa=rsp+100 ra=c-8"},
		{0x1fff, "cfa=rsp+100 ra=c-8"},
		{0x2000, "cfa=rsp+700 ra=c-8"}, // only the one at 0 is left
		{0x3000, "cfa=rsp+600 ra=c-8"},
		{0xffff, "cfa=rsp+700 ra=c-8"},
		{0x10000, ""},
	})
}

// TestCorrupt: bad lengths, pointers and CIE references drop entries
// without disturbing the good ones before them.
func TestCorrupt(t *testing.T) {
	good := func() *frames {
		f := &frames{vaddr: 0x3000}
		c := gccCIE(f)
		gccFDE(f, c, 0x1000, 0x10)
		return f
	}
	tests := []struct {
		name   string
		mutate func(f *frames)
		want   int
	}{
		{"length past the end", func(f *frames) { f.b = append(f.b, le32(1000)...) }, 1},
		{"reserved length", func(f *frames) { f.b = append(f.b, le32(0xfffffff5)...) }, 1},
		{"64-bit length past the end", func(f *frames) { f.b = cat(f.b, le32(0xffffffff), le64(1<<62)) }, 1},
		{"CIE pointer before the section", func(f *frames) { f.entry(0x7fffffff, make([]byte, 12)) }, 1},
		{"CIE pointer to an FDE", func(f *frames) { f.entry(uint64(len(f.b)+4-30), make([]byte, 12)) }, 1},
		{"truncated header", func(f *frames) { f.b = append(f.b, 1, 2) }, 1},
		{"short entry", func(f *frames) { f.b = cat(f.b, le32(2), []byte{1, 2}) }, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := good()
			tc.mutate(f)
			tab := ehTable(f)
			if tab.Len() != tc.want {
				t.Fatalf("Len = %d, want %d", tab.Len(), tc.want)
			}
			checkRules(t, tab, []pcWant{{0x1000, base}})
		})
	}
}
