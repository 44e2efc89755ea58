package jit

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzDecode feeds a jitdump in chunks cut at random and checks it against
// the same bytes fed whole: the same error at the same offset, the same
// code at every place's address and time. Nothing may panic, an error is
// one line, and what is held waiting is never more than a record.
func FuzzDecode(f *testing.F) {
	f.Add(timeline().b, uint64(1))
	w := newDump(0)
	w.load(100, addrX, 6, 1, "A")
	w.record(recLoad, 300, nil, 8)
	f.Add(w.b, uint64(2))
	f.Add(newDump(FlagArchTimestamp).b, uint64(3))
	f.Add(inlineDump().b, uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole := NewDecoder()
		werr := whole.Feed(data)

		rng := rand.New(rand.NewPCG(seed, seed>>32))
		d := NewDecoder()
		var err error
		for rest := data; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			err = d.Feed(rest[:n])
			rest = rest[n:]
			if d.Waiting() > MaxRecord {
				t.Fatalf("%d bytes waiting", d.Waiting())
			}
			if rng.IntN(4) == 0 {
				d.Table().Lookup(rng.Uint64(), rng.Uint64N(1000))
			}
		}
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("chunked: %v, whole: %v", err, werr)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of several lines: %q", err)
		}
		if d.Offset() != whole.Offset() || d.Waiting() != whole.Waiting() {
			t.Fatalf("chunked: offset %d waiting %d, whole: %d %d", d.Offset(), d.Waiting(), whole.Offset(), whole.Waiting())
		}
		if inc := d.Incomplete(); inc != nil && (err != nil || d.Waiting() == 0) {
			t.Fatalf("incomplete %v with error %v, %d waiting", inc, err, d.Waiting())
		}
		a, b := d.Table(), whole.Table()
		if a.Len() != b.Len() {
			t.Fatalf("chunked: %d places, whole %d", a.Len(), b.Len())
		}
		for i, p := range b.places {
			if i == 256 {
				break
			}
			for _, pc := range []uint64{p.start, p.end - 1, p.start + (p.end-p.start)/2} {
				for _, at := range []uint64{0, p.from, p.from - 1, p.until, p.until - 1} {
					x, okx := a.Lookup(pc, at)
					y, oky := b.Lookup(pc, at)
					if okx != oky || x.Name != y.Name || x.Start != y.Start || x.Time != y.Time {
						t.Fatalf("Lookup(%#x, %d): chunked %+v %v, whole %+v %v", pc, at, x, okx, y, oky)
					}
					if !okx {
						continue
					}
					if pc < x.Start || pc-x.Start >= x.Size {
						t.Fatalf("Lookup(%#x, %d) = code at %#x of %d bytes", pc, at, x.Start, x.Size)
					}
					if at != 0 && !b.timeless && x.Time > at {
						t.Fatalf("Lookup(%#x, %d) = code placed later, at %d", pc, at, x.Time)
					}
					x.Line(pc)
					x.Rule(pc)
					for _, fr := range x.Inline(pc) {
						if strings.ContainsAny(fr.Func+fr.File, "\n\x00") {
							t.Fatalf("Inline(%#x): frame %+v", pc, fr)
						}
					}
				}
			}
		}
		if b.Bytes() < 0 || b.Bytes() > maxBytes+MaxRecord*2 {
			t.Fatalf("table of %d bytes", b.Bytes())
		}
	})
}
