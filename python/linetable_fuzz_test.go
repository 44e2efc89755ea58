package python

import "testing"

// FuzzLine feeds lineAt and decodeLines what a target's memory could hold
// in place of a line table: they must not panic, must agree, and must walk
// at most one entry per byte of the table.
func FuzzLine(f *testing.F) {
	f.Add(uint8(locations311), []byte("\xe8\x02\xf2\x05\x01\x06\x45\x01\x9f\x12"), 1, 3)
	f.Fuzz(func(t *testing.T, format uint8, table []byte, firstLine int, offset int) {
		fm := lineFormat(format)
		x := decodeLines(fm, table, firstLine)
		checkIndex(t, fm, table, x)
		if a, b := lineAt(fm, table, firstLine, offset), x.line(offset); a != b {
			t.Fatalf("offset %d: lineAt %d, decodeLines %d", offset, a, b)
		}
		// The edges of the ranges, where an off-by-one would show; a
		// bounded number, as each lineAt walks the table.
		for i, r := range x.ranges {
			if i == 16 {
				break
			}
			for _, o := range []int{int(r.start) - 1, int(r.start), int(r.start) + 1, int(x.end) - 1, int(x.end)} {
				if a, b := lineAt(fm, table, firstLine, o), x.line(o); a != b {
					t.Fatalf("offset %d: lineAt %d, decodeLines %d", o, a, b)
				}
			}
		}
	})
}
