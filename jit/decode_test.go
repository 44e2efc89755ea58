package jit

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cctop/cctop/symbol/cfi"
)

const (
	addrX = 0x7f0000001000
	addrY = 0x7f0000002000
)

// timeline is the file of the end-to-end test: A loaded at X at 100, B
// over it at 200, B moved to Y at 300, the runtime closed at 400.
func timeline() *dumpWriter {
	w := newDump(0)
	w.unwinding(99, leafEHFrame(addrX, 6))
	w.load(100, addrX, 6, 1, "A")
	w.debug(199, addrX, entry{addrX, 10, "b.js"}, entry{addrX + 3, 11, "b.js"})
	w.unwinding(199, leafEHFrame(addrX, 6))
	w.load(200, addrX, 6, 2, "B")
	w.move(300, addrX, addrY, 6, 2)
	w.close(400)
	return w
}

func decode(t *testing.T, b []byte) *Decoder {
	t.Helper()
	d := NewDecoder()
	if err := d.Feed(b); err != nil {
		t.Fatalf("Feed: %v", err)
	}
	return d
}

func name(tab *Table, pc, at uint64) string {
	c, ok := tab.Lookup(pc, at)
	if !ok {
		return "-"
	}
	return c.Name
}

// TestLookupByTime: the code at an address is the one placed there last
// at or before the time asked; before any, after a move away or after the
// close, none; an unknown time gets the newest.
func TestLookupByTime(t *testing.T) {
	tab := decode(t, timeline().b).Table()
	for _, c := range []struct {
		pc, at uint64
		want   string
	}{
		{addrX, 50, "-"},      // before A
		{addrX, 100, "A"},     // A from its own time on
		{addrX + 5, 150, "A"}, // between the loads: the older
		{addrX + 6, 150, "-"}, // past A's end
		{addrX, 200, "B"},     // B supersedes A from its time
		{addrX + 2, 299, "B"},
		{addrX, 300, "-"}, // moved away
		{addrY, 299, "-"}, // not there yet
		{addrY, 300, "B"}, // moved there
		{addrY + 5, 399, "B"},
		{addrY, 400, "-"}, // closed
		{addrX, 0, "B"},   // unknown time: the newest at X
		{addrY, 0, "B"},   // and at Y
		{addrX - 1, 0, "-"} /* below everything */} {
		if got := name(tab, c.pc, c.at); got != c.want {
			t.Errorf("Lookup(%#x, %d) = %s, want %s", c.pc, c.at, got, c.want)
		}
	}
	c, ok := tab.Lookup(addrY+1, 350)
	if !ok || c.Start != addrY || c.Size != 6 || c.Index != 2 || c.Time != 300 {
		t.Errorf("moved code: %+v %v", c, ok)
	}
	if n := tab.Len(); n != 3 {
		t.Errorf("%d placements, want 3 (A, B, B moved)", n)
	}
}

// TestLinesAndCFI: debug info gives the nearest line at or below a pc and
// goes with the load that follows it, not the one before; unwinding info
// gives the leaf's CFA rule, at the code's new address after a move.
func TestLinesAndCFI(t *testing.T) {
	tab := decode(t, timeline().b).Table()
	a, _ := tab.Lookup(addrX+4, 150)
	if _, _, ok := a.Line(addrX + 4); ok {
		t.Error("A has lines: the debug info was B's")
	}
	for _, when := range []struct {
		pc, at uint64
	}{{addrX, 250}, {addrY, 350}} {
		b, ok := tab.Lookup(when.pc, when.at)
		if !ok || b.Name != "B" {
			t.Fatalf("Lookup(%#x, %d) = %+v", when.pc, when.at, b)
		}
		for off, want := range []int{10, 10, 10, 11, 11, 11} {
			file, line, ok := b.Line(when.pc + uint64(off))
			if !ok || file != "b.js" || line != want {
				t.Errorf("B at %#x+%d: %s:%d %v, want b.js:%d", when.pc, off, file, line, ok, want)
			}
		}
		if _, _, ok := b.Line(when.pc + 6); ok {
			t.Error("a line past the code")
		}
		for _, code := range []Code{a, b} {
			pc := code.Start + 2
			r, ok := code.Rule(pc)
			if !ok {
				t.Fatalf("%s at %#x: no CFI rule", code.Name, pc)
			}
			if cfa := r.CFA(); cfa.Reg() != cfi.RegRSP || cfa.Offset() != 8 {
				t.Errorf("%s: CFA %v, want rsp+8", code.Name, cfa)
			}
			if ra := r.Reg(cfi.RegRA); ra.Kind() != cfi.AtCFA || ra.Offset() != -8 {
				t.Errorf("%s: return address %v, want at CFA-8", code.Name, ra)
			}
		}
	}
}

// TestPartialOverlap: a load over part of an older one supersedes only
// the addresses it covers.
func TestPartialOverlap(t *testing.T) {
	w := newDump(0)
	w.load(10, 0x1000, 0x100, 1, "old")
	w.load(20, 0x1080, 0x100, 2, "new")
	w.load(30, 0x5000, 0x10, 3, "far")
	w.load(40, 0x0f00, 0x10, 4, "below")
	tab := decode(t, w.b).Table()
	for _, c := range []struct {
		pc, at uint64
		want   string
	}{
		{0x1000, 25, "old"}, {0x107f, 25, "old"}, {0x1080, 25, "new"}, {0x1080, 15, "old"},
		{0x1100, 15, "-"}, {0x1100, 25, "new"}, {0x117f, 25, "new"}, {0x1180, 25, "-"},
		{0x5008, 35, "far"}, {0x0f08, 45, "below"}, {0x0f08, 35, "-"}, {0x1010, 45, "old"},
	} {
		if got := name(tab, c.pc, c.at); got != c.want {
			t.Errorf("Lookup(%#x, %d) = %s, want %s", c.pc, c.at, got, c.want)
		}
	}
}

// TestChunks: the file fed in pieces of any size decodes as it does whole,
// and a piece that ends inside a record leaves it waiting, undecoded.
func TestChunks(t *testing.T) {
	whole := timeline().b
	for _, n := range []int{1, 3, 7, 16, 41, 100} {
		d := NewDecoder()
		for i := 0; i < len(whole); i += n {
			if err := d.Feed(whole[i:min(i+n, len(whole))]); err != nil {
				t.Fatalf("chunks of %d: %v", n, err)
			}
			if d.Fed() != int64(min(i+n, len(whole))) {
				t.Fatalf("chunks of %d: Fed %d after %d bytes", n, d.Fed(), min(i+n, len(whole)))
			}
		}
		if d.Waiting() != 0 || d.Offset() != int64(len(whole)) || d.Incomplete() != nil {
			t.Errorf("chunks of %d: waiting %d, offset %d of %d, %v", n, d.Waiting(), d.Offset(), len(whole), d.Incomplete())
		}
		for _, at := range []uint64{150, 250, 350} {
			if got, want := name(d.Table(), addrX, at)+name(d.Table(), addrY, at), name(decode(t, whole).Table(), addrX, at)+name(decode(t, whole).Table(), addrY, at); got != want {
				t.Errorf("chunks of %d at %d: %s, whole %s", n, at, got, want)
			}
		}
		if recs, _ := d.Records(); recs != [5]uint64{2, 1, 1, 1, 2} {
			t.Errorf("chunks of %d: records %v", n, recs)
		}
	}
}

// TestTruncated: a file that ends inside a record keeps what came before
// it; the record waits, and once the file is final Incomplete says where
// it was cut. The rest, when it comes, is decoded.
func TestTruncated(t *testing.T) {
	w := newDump(0)
	w.load(100, addrX, 6, 1, "A")
	cut := w.load(200, addrY, 6, 2, "B")
	for _, keep := range []int{cut + 5, cut + 30, len(w.b) - 1} {
		d := decode(t, w.b[:keep])
		if name(d.Table(), addrX, 150) != "A" {
			t.Errorf("cut at %d: A not named", keep)
		}
		if name(d.Table(), addrY, 250) != "-" {
			t.Errorf("cut at %d: B named from half a record", keep)
		}
		err := d.Incomplete()
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset != int64(cut) || d.Waiting() != keep-cut {
			t.Fatalf("cut at %d: Incomplete %v, waiting %d", keep, err, d.Waiting())
		}
		if keep-cut >= 8 && !strings.Contains(err.Error(), "bytes into a record of") {
			t.Errorf("cut at %d: %v", keep, err)
		}
		if d.Err() != nil {
			t.Errorf("cut at %d: a cut record is no error: %v", keep, d.Err())
		}
		d.Feed(w.b[keep:])
		if name(d.Table(), addrY, 250) != "B" || d.Incomplete() != nil {
			t.Errorf("cut at %d: the rest did not complete B", keep)
		}
	}
	d := decode(t, w.b[:20])
	if err := d.Incomplete(); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("file cut in its header: %v", err)
	}
}

// TestCorrupt: a damaged record stops decoding at its offset with one
// line saying what is wrong; what came before stays named, and nothing
// after it is decoded, even when more bytes come.
func TestCorrupt(t *testing.T) {
	cases := []struct {
		name string
		bad  func(w *dumpWriter)
		want string
	}{
		{"size below header", func(w *dumpWriter) { w.record(recLoad, 300, nil, 8) }, "less than its 16-byte header"},
		{"size beyond bound", func(w *dumpWriter) { w.record(recLoad, 300, nil, MaxRecord+1) }, "more than the 64 MiB bound"},
		{"load too short", func(w *dumpWriter) { w.record(recLoad, 300, make([]byte, 8), 0) }, "JIT_CODE_LOAD record of 24 bytes"},
		{"name unterminated", func(w *dumpWriter) {
			w.record(recLoad, 300, append(w.fields(uint32(1), uint32(1), uint64(addrY), uint64(addrY), uint64(0), uint64(3)), "nonul"...), 0)
		}, "name is not terminated"},
		{"code size", func(w *dumpWriter) {
			w.record(recLoad, 300, w.fields(uint32(1), uint32(1), uint64(addrY), uint64(addrY), uint64(1000), uint64(3), "C"), 0)
		}, "code_size 1000 exceeds"},
		{"wraps", func(w *dumpWriter) {
			w.record(recLoad, 300, w.fields(uint32(1), uint32(1), ^uint64(0), ^uint64(0), uint64(2), uint64(3), "C", []byte{1, 2}), 0)
		}, "wraps around"},
		{"debug entries", func(w *dumpWriter) { w.record(recDebugInfo, 300, w.fields(uint64(addrY), uint64(1)<<40), 0) }, "claims 1099511627776 entries"},
		{"debug entry past record", func(w *dumpWriter) {
			w.record(recDebugInfo, 300, w.fields(uint64(addrY), uint64(1), uint64(addrY), uint32(1), uint32(0), []byte("nonul")), 0)
		}, "entry 0 of 1 runs past"},
		{"unwinding size", func(w *dumpWriter) {
			w.record(recUnwinding, 300, w.fields(uint64(1000), uint64(0), uint64(0)), 0)
		}, "unwinding_size 1000 exceeds"},
		{"eh_frame_hdr size", func(w *dumpWriter) {
			w.record(recUnwinding, 300, w.fields(uint64(4), uint64(8), uint64(0), []byte{0, 0, 0, 0}), 0)
		}, "eh_frame_hdr_size 8 exceeds"},
		{"move too short", func(w *dumpWriter) { w.record(recMove, 300, make([]byte, 40), 0) }, "JIT_CODE_MOVE record of 56 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newDump(0)
			w.load(100, addrX, 6, 1, "A")
			off := len(w.b)
			c.bad(w)
			after := len(w.b)
			w.load(400, addrY+0x100, 6, 9, "after")
			for _, split := range []int{len(w.b), off + 3, after} {
				d := NewDecoder()
				d.Feed(w.b[:split])
				err := d.Feed(w.b[split:])
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Offset != int64(off) || !strings.Contains(fe.What, c.want) {
					t.Fatalf("split at %d: error %v, want offset %d and %q", split, err, off, c.want)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				if d.Offset() != int64(off) || d.Incomplete() != nil {
					t.Errorf("offset %d, incomplete %v", d.Offset(), d.Incomplete())
				}
				if name(d.Table(), addrX, 150) != "A" {
					t.Error("A, decoded before the damage, is gone")
				}
				if name(d.Table(), addrY+0x100, 500) != "-" {
					t.Error("a record after the damage was decoded")
				}
				if d.Feed(w.b) != err {
					t.Error("Feed after the error did not return it")
				}
			}
		})
	}
	for _, c := range []struct {
		name string
		head []byte
		want string
	}{
		{"magic", []byte("ELF\x7f\x01\x00\x00\x00\x28\x00\x00\x00"), "not a jitdump"},
		{"version", newDump(0).b[:4], "version 7"},
		{"header size", newDump(0).b[:8], "header size 8"},
	} {
		b := append([]byte(nil), c.head...)
		switch c.name {
		case "version":
			b = binary.LittleEndian.AppendUint32(b, 7)
			b = binary.LittleEndian.AppendUint32(b, headerSize)
		case "header size":
			b = binary.LittleEndian.AppendUint32(b, 8)
		}
		b = append(b, make([]byte, 64)...)
		d := NewDecoder()
		err := d.Feed(b)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset != 0 || !strings.Contains(fe.What, c.want) {
			t.Errorf("%s: %v, want %q at offset 0", c.name, err, c.want)
		}
	}
}

// TestSwappedAndTimeless: a file of the other byte order decodes the
// same; one timed by an architecture's counter is ordered by the file and
// answers the newest whatever the time asked.
func TestSwappedAndTimeless(t *testing.T) {
	w := newDumpOrder(binary.BigEndian, 0)
	w.load(100, addrX, 6, 1, "A")
	w.load(200, addrX, 6, 2, "B")
	d := decode(t, w.b)
	if !d.Header().Swapped || d.Header().PID != 4242 || d.Header().ElfMach != 62 {
		t.Errorf("header %+v", d.Header())
	}
	if name(d.Table(), addrX, 150) != "A" || name(d.Table(), addrX, 250) != "B" {
		t.Error("big-endian file misread")
	}

	w = newDump(FlagArchTimestamp)
	w.load(9_000_000, addrX, 6, 1, "A")
	w.load(5, addrX, 6, 2, "B") // TSC values say nothing of our clock
	d = decode(t, w.b)
	if !d.Table().Timeless() || !d.Header().ArchTimestamp() {
		t.Fatal("TSC flag not seen")
	}
	for _, at := range []uint64{0, 1, 100, 9_000_001} {
		if got := name(d.Table(), addrX, at); got != "B" {
			t.Errorf("timeless Lookup at %d = %s, want the newest in the file, B", at, got)
		}
	}
}

// TestSkipped: records of unknown types are skipped; empty code names
// nothing; debug info for another address is not taken by the next load;
// a move of an index never loaded is ignored.
func TestSkipped(t *testing.T) {
	w := newDump(0)
	w.record(77, 50, []byte("future"), 0)
	w.load(60, addrX, 0, 1, "empty")
	w.debug(69, addrY, entry{addrY, 5, "other.js"})
	w.load(70, addrX, 6, 2, "A")
	w.move(80, addrX, addrY, 6, 99)
	d := decode(t, w.b)
	if _, unknown := d.Records(); unknown != 1 {
		t.Errorf("unknown records: %d", unknown)
	}
	a, ok := d.Table().Lookup(addrX, 75)
	if !ok || a.Name != "A" {
		t.Fatalf("A: %+v", a)
	}
	if _, _, ok := a.Line(addrX); ok {
		t.Error("A took debug info written for another address")
	}
	if name(d.Table(), addrY, 90) != "-" || name(d.Table(), addrX, 90) != "A" {
		t.Error("a move of an unknown index moved something")
	}
	if d.Table().Len() != 1 {
		t.Errorf("%d placements, want 1", d.Table().Len())
	}
}

// TestNames: names are cut and cleaned of what must not reach a terminal.
func TestNames(t *testing.T) {
	w := newDump(0)
	w.load(10, addrX, 6, 1, "evil\x1b[2J\xff"+strings.Repeat("x", 2*maxName))
	c, ok := decode(t, w.b).Table().Lookup(addrX, 20)
	if !ok || strings.Contains(c.Name, "\x1b") || !utf8.ValidString(c.Name) || len(c.Name) > maxName+8 || !strings.HasPrefix(c.Name, "evil?[2J") {
		t.Errorf("name %q", c.Name[:min(len(c.Name), 20)])
	}
}

// TestCompact: past its bounds the table drops its older half and keeps
// answering for the rest.
func TestCompact(t *testing.T) {
	w := newDump(0)
	for i := range uint64(10) {
		w.load(10*(i+1), 0x1000*(i+1), 16, i, "f"+string(rune('a'+i)))
	}
	w.load(200, 0x1000, 16, 100, "again")
	d := decode(t, w.b)
	tab := d.Table()
	tab.Lookup(0, 0) // merge
	tab.compact()
	if tab.Len() != 6 || tab.Dropped() != 5 {
		t.Fatalf("after compact: %d places, %d dropped", tab.Len(), tab.Dropped())
	}
	for _, c := range []struct {
		pc, at uint64
		want   string
	}{{0x1000, 15, "-"}, {0x1000, 250, "again"}, {0x6000, 65, "ff"}, {0xa000, 150, "fj"}, {0x5000, 60, "-"}} {
		if got := name(tab, c.pc, c.at); got != c.want {
			t.Errorf("Lookup(%#x, %d) = %s, want %s", c.pc, c.at, got, c.want)
		}
	}
	// Moves still find the indexes that stayed.
	d.Feed(newDumpTail(func(w *dumpWriter) { w.move(300, 0xa000, 0x20000, 16, 9) }))
	if name(tab, 0x20008, 310) != "fj" {
		t.Error("move after compaction lost")
	}
	if tab.Bytes() <= 0 {
		t.Error("no bytes counted")
	}
}

// newDumpTail is the records f writes, without a file header.
func newDumpTail(f func(w *dumpWriter)) []byte {
	w := newDump(0)
	n := len(w.b)
	f(w)
	return w.b[n:]
}
