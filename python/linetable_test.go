package python

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lineRecord is one code object of testdata/linetable (written by gen.py
// from CPython's own co_lines, co_positions and PyCode_Addr2Line).
type lineRecord struct {
	Version     string   `json:"version"`
	Name        string   `json:"name"`
	FirstLineno int      `json:"firstlineno"`
	Table       string   `json:"table"`
	Lines       [][2]int `json:"lines"`
}

var lineVersions = map[string]lineFormat{
	"3.9":  lnotab39,
	"3.10": linetable310,
	"3.11": locations311,
	"3.12": locations311,
	"3.13": locations311,
}

// loadLineRecords reads every file of testdata/linetable, requiring one of
// each version the reader supports: a file gone missing would otherwise
// quietly test less.
func loadLineRecords(t testing.TB) map[string][]lineRecord {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "linetable", "*.json*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]lineRecord{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		var recs []lineRecord
		if err := json.Unmarshal(data, &recs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(recs) == 0 {
			t.Fatalf("%s: no code objects", name)
		}
		for _, r := range recs {
			if _, ok := lineVersions[r.Version]; !ok {
				t.Fatalf("%s: %s: unknown version %q", name, r.Name, r.Version)
			}
			out[r.Version] = append(out[r.Version], r)
		}
	}
	for v := range lineVersions {
		if len(out[v]) == 0 {
			t.Errorf("no line table test data of %s (run gen.py with it)", v)
		}
	}
	return out
}

func TestLineTablesOfCPython(t *testing.T) {
	for version, recs := range loadLineRecords(t) {
		format := lineVersions[version]
		t.Run(version, func(t *testing.T) {
			offsets := 0
			for _, r := range recs {
				table, err := hex.DecodeString(r.Table)
				if err != nil {
					t.Fatalf("%s: %v", r.Name, err)
				}
				x := decodeLines(format, table, r.FirstLineno)
				checkIndex(t, format, table, x)
				bad := 0
				for _, ol := range r.Lines {
					offset, want := ol[0], ol[1]
					a := lineAt(format, table, r.FirstLineno, offset)
					b := x.line(offset)
					if a != want || b != want {
						if bad++; bad <= 5 {
							t.Errorf("%s (first line %d) offset %d: lineAt %d, decodeLines %d, CPython %d",
								r.Name, r.FirstLineno, offset, a, b, want)
						}
					}
				}
				if bad > 5 {
					t.Errorf("%s: %d offsets wrong in all", r.Name, bad)
				}
				offsets += len(r.Lines)
			}
			t.Logf("%d code objects, %d offsets", len(recs), offsets)
		})
	}
}

// checkIndex checks what a lineIndex promises whatever the table: ranges
// contiguous from 0, sorted, neighbours of different lines, as many as the
// table's bytes at most, and the decoder's walk bounded by them too.
func checkIndex(t testing.TB, format lineFormat, table []byte, x lineIndex) {
	t.Helper()
	if len(x.ranges) > len(table)+1 {
		t.Fatalf("%d ranges from %d bytes", len(x.ranges), len(table))
	}
	if len(x.ranges) == 0 {
		if x.end != 0 {
			t.Fatalf("no ranges but end %d", x.end)
		}
	} else if x.ranges[0].start != 0 {
		t.Fatalf("first range starts at %d", x.ranges[0].start)
	}
	for i, r := range x.ranges {
		if r.start >= x.end || i > 0 && r.start <= x.ranges[i-1].start {
			t.Fatalf("range %d starts at %d: ranges %v, end %d", i, r.start, x.ranges, x.end)
		}
		if i > 0 && r.line == x.ranges[i-1].line {
			t.Fatalf("ranges %d and %d both of line %d", i-1, i, r.line)
		}
		if r.line < 0 {
			t.Fatalf("range %d of line %d", i, r.line)
		}
	}
	it := newLineIter(format, table, 1)
	calls := 0
	for {
		_, _, _, ok := it.next()
		calls++
		if !ok {
			break
		}
		if calls > len(table)+2 {
			t.Fatalf("more than %d ranges from %d bytes", calls, len(table))
		}
	}
	if it.steps > len(table) {
		t.Fatalf("%d entries read from %d bytes", it.steps, len(table))
	}
}

// lineCase is a table and the line of each of its offsets from 0: the
// offsets past want have no line (3.10+) or the last one's (3.9).
type lineCase struct {
	name      string
	format    lineFormat
	table     string
	firstLine int
	want      []int
}

var lineCases = []lineCase{
	// 3.9: the delta is the next range's line; a trailing odd byte is
	// not a pair; a zero offset step moves only the line.
	{"lnotab", lnotab39, "\x04\x01\x02\xfe\x00\x05\x02\x00\x7f", 10,
		[]int{10, 10, 10, 10, 11, 11, 14, 14, 14, 14}},
	{"lnotab empty", lnotab39, "", 7, []int{7, 7, 7}},
	{"lnotab to line 0", lnotab39, "\x02\xfb\x02\x06", 5, []int{5, 5, 0, 0, 6}},
	// A line delta over 127 split over pairs with no offset step.
	{"lnotab big line step", lnotab39, "\x00\x7f\x00\x7f\x02\x03\x02\x81", 1,
		[]int{255, 255, 258, 258, 131}},

	// 3.10: the delta is this range's line; -128 has none and keeps the
	// line; past the table nothing.
	{"linetable", linetable310, "\x04\x01\x02\x80\x02\xff\x00\x05\x02\x00", 10,
		[]int{11, 11, 11, 11, 0, 0, 10, 10, 15, 15, 0}},
	{"linetable empty", linetable310, "", 7, []int{0, 0}},
	{"linetable odd byte", linetable310, "\x02\x01\x04", 7, []int{8, 8, 0}},
	{"linetable big line step", linetable310, "\x00\x7f\x02\x7f\x00\x81\x02\x81", 1,
		[]int{255, 255, 1, 1, 0}},

	// 3.11: one entry of each kind.
	{"locations", locations311, "" +
		"\xf8" + // 15 none, 1 unit
		"\xe9\x06" + // 13 no columns, 2 units, line +3
		"\xf2\x05\x01\x06\x45\x01" + // 14 long, 3 units, -2, end +1, columns 5 and 69
		"\xe0\x10\x20" + // 12 one line, 1 unit, +2, columns 16 and 32
		"\x9f\x12" + // 3 short, 8 units, same line
		"\xd1\x70\x7f" + // 10 one line, 2 units, +0
		"\xd8\x10\x20", // 11 one line, 1 unit, +1
		10, []int{0, 13, 13, 11, 11, 11, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 13, 14, 0}},
	{"locations empty", locations311, "", 7, []int{0, 0}},
	// A none entry leaves the line the next delta is relative to.
	{"locations none keeps line", locations311, "\xe8\x04\xf9\xe8\x06", 1, []int{3, 0, 0, 6}},
	// A multi-chunk varint: 0x44 0x01 is 4 + 1<<6 = 68, so +34.
	{"locations two-chunk svarint", locations311, "\xe8\x44\x01", 1, []int{35, 0}},
	{"locations negative line", locations311, "\xe8\x05\xe8\x02", 1, []int{0, 0, 0}},

	// Malformed: everything from the bad entry on has no line.
	{"truncated svarint", locations311, "\xe8\x02\xf0\x41", 1, []int{2, 0, 0}},
	{"truncated long form", locations311, "\xe8\x02\xf0\x02\x00\x01", 1, []int{2, 0, 0}},
	{"varint cut by an entry", locations311, "\xe8\x02\xe8\x41\xf8\xe8\x02", 1, []int{2, 0, 0, 0}},
	{"varint of 7 chunks", locations311, "\xe8\x02\xe8\x41\x41\x41\x41\x41\x41\x00\xe8\x02", 1, []int{2, 0, 0}},
	{"varint of 6 chunks", locations311, "\xe8\x02\xe8\x40\x40\x40\x40\x40\x00\xe8\x02", 1, []int{2, 2, 3, 0}},
	{"entry without high bit", locations311, "\xe8\x02\x68\x02\xe8\x02", 1, []int{2, 0, 0}},
	{"extra data byte", locations311, "\x80\x05\x05\x80\x05", 1, []int{1, 0}},
	{"one line form cut", locations311, "\xe8\x02\xd0\x05", 1, []int{2, 0}},
	{"column byte with high bit", locations311, "\xe8\x02\xd0\x05\x85\x80\x05", 1, []int{2, 0, 0}},
	{"short form cut", locations311, "\xe8\x02\x80", 1, []int{2, 0}},

	// Absurd values.
	{"line past int32", locations311, "\xe8\x02\xe8\x7e\x7f\x7f\x7f\x7f\x3f\xe8\x02", 1, []int{2, 0, 0, 0}},
	{"first line past int32", lnotab39, "\x02\x01", math.MaxInt32, []int{math.MaxInt32, math.MaxInt32, 0}},
	{"negative first line", linetable310, "\x02\x01\x02\x07", -5, []int{0, 0, 3, 3}},
	{"unknown format 0", 0, "\x02\x01", 1, []int{0, 0, 0}},
	{"unknown format 4", 4, "\xe8\x02", 1, []int{0, 0}},
}

func TestLineCases(t *testing.T) {
	for _, c := range lineCases {
		t.Run(c.name, func(t *testing.T) {
			table := []byte(c.table)
			x := decodeLines(c.format, table, c.firstLine)
			checkIndex(t, c.format, table, x)
			for offset, want := range c.want {
				if got := lineAt(c.format, table, c.firstLine, offset); got != want {
					t.Errorf("lineAt offset %d: %d, want %d", offset, got, want)
				}
				if got := x.line(offset); got != want {
					t.Errorf("decodeLines offset %d: %d, want %d (ranges %v end %d)", offset, got, want, x.ranges, x.end)
				}
			}
			for _, offset := range []int{-1, math.MinInt, maxOffset, math.MaxInt} {
				if got := lineAt(c.format, table, c.firstLine, offset); got != 0 {
					t.Errorf("lineAt offset %d: %d, want 0", offset, got)
				}
				if got := x.line(offset); got != 0 {
					t.Errorf("decodeLines offset %d: %d, want 0", offset, got)
				}
			}
		})
	}
}

// TestLineLnotabRunsOn: in 3.9 the last line holds for any offset past the
// table, as PyCode_Addr2Line gives it (the table does not say the code's
// length), up to maxOffset.
func TestLineLnotabRunsOn(t *testing.T) {
	table := []byte("\x02\x01\x02\x01")
	x := decodeLines(lnotab39, table, 1)
	for _, offset := range []int{4, 1000, maxOffset - 1} {
		if a, b := lineAt(lnotab39, table, 1, offset), x.line(offset); a != 3 || b != 3 {
			t.Errorf("offset %d: lineAt %d, decodeLines %d, want 3", offset, a, b)
		}
	}
}

// TestLineSumBound: deltas that add up past maxLineSum end the table there,
// even if later ones would bring the sum back to a real line, so that the
// sum cannot overflow.
func TestLineSumBound(t *testing.T) {
	up := "\xe8\x7e\x7f\x7f\x7f\x7f\x3f"   // +2^35-1
	down := "\xe8\x7f\x7f\x7f\x7f\x7f\x3f" // -(2^35-1)
	table := []byte(strings.Repeat(up, 40) + strings.Repeat(down, 40) + "\xe8\x02")
	x := decodeLines(locations311, table, 1)
	checkIndex(t, locations311, table, x)
	if x.end > 33 {
		t.Errorf("decoded %d units, past the bound", x.end)
	}
	if got := lineAt(locations311, table, 1, 80); got != 0 {
		t.Errorf("line after the bound: %d", got)
	}
	// Without the bound's stop, the same deltas in fewer steps are real.
	table = []byte(strings.Repeat(up, 20) + strings.Repeat(down, 20) + "\xe8\x02")
	if got := lineAt(locations311, table, 1, 40); got != 2 {
		t.Errorf("line after deltas within the bound: %d, want 2", got)
	}
}

func TestLineZeroIndex(t *testing.T) {
	var x lineIndex
	for _, offset := range []int{-1, 0, 1, 100} {
		if got := x.line(offset); got != 0 {
			t.Errorf("zero index offset %d: %d", offset, got)
		}
	}
}

// TestLineLargeGarbage: the largest tables the reader accepts, of bytes
// that make the most entries or the longest ranges, stay bounded.
func TestLineLargeGarbage(t *testing.T) {
	const size = 1 << 18
	fill := func(b ...byte) []byte {
		out := make([]byte, 0, size)
		for len(out) < size {
			out = append(out, b...)
		}
		return out[:size]
	}
	for _, c := range []struct {
		name   string
		format lineFormat
		table  []byte
	}{
		{"lnotab max steps", lnotab39, fill(0xff, 0x01)},
		{"lnotab zero steps", lnotab39, fill(0x00, 0x7f)},
		{"linetable alternating", linetable310, fill(0x01, 0x01, 0x01, 0xff)},
		{"locations one unit each", locations311, fill(0xe8, 0x02, 0xe8, 0x03)},
		{"locations long", locations311, fill(0xff)},
		{"locations short", locations311, fill(0x80, 0x00)},
		{"locations max varints", locations311, fill(0xf7, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f, 0x00, 0x00, 0x00)},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := decodeLines(c.format, c.table, 1)
			checkIndex(t, c.format, c.table, x)
			for _, offset := range []int{0, 1, int(x.end) / 2, int(x.end) - 1} {
				if a, b := lineAt(c.format, c.table, 1, offset), x.line(offset); a != b {
					t.Errorf("offset %d: lineAt %d, decodeLines %d", offset, a, b)
				}
			}
		})
	}
}

// TestLineAtAllocates nothing: it is the form for a table asked once.
func TestLineAtAllocates(t *testing.T) {
	table := []byte("\xe8\x02\xf2\x05\x01\x06\x45\x01\x9f\x12")
	if n := testing.AllocsPerRun(100, func() { lineAt(locations311, table, 1, 5) }); n != 0 {
		t.Errorf("lineAt allocates %v times", n)
	}
}

func BenchmarkLineIndex(b *testing.B) {
	recs := loadLineRecords(b)
	var r lineRecord
	for _, c := range recs["3.12"] {
		if len(c.Lines) > len(r.Lines) {
			r = c
		}
	}
	table, _ := hex.DecodeString(r.Table)
	x := decodeLines(locations311, table, r.FirstLineno)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.line(r.Lines[i%len(r.Lines)][0])
	}
}
