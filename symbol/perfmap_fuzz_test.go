package symbol

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// FuzzPerfMap feeds a perf map to the incremental parser in chunks cut at
// random, merging at random points, and checks the table against the
// whole file parsed at once: every complete, well-formed line named its
// range until a later line covered it. Nothing may panic, and a line
// without its newline is never parsed.
func FuzzPerfMap(f *testing.F) {
	f.Add([]byte("7fd4677c5b80 100 JS:^hotLoopFib /tmp/hot.js:1:20\n7fd4677c6040 180 JS:*hotLoopFib /tmp/hot.js:1:20\n"), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		var p perfMapParser
		for rest := data; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			p.feed(rest[:n])
			rest = rest[n:]
			if rng.IntN(2) == 0 {
				p.flush()
			}
			if len(p.partial) > maxPerfMapLine {
				t.Fatalf("partial line of %d bytes", len(p.partial))
			}
		}
		p.flush()

		var ref naiveJIT
		lines := bytes.Split(data, []byte("\n"))
		for _, l := range lines[:len(lines)-1] { // the last has no newline
			if len(l) > maxPerfMapLine {
				continue
			}
			if s, ok := parsePerfMapLine(l); ok {
				ref = append(ref, s)
			}
		}
		checkTable(t, p.syms, ref)
		if len(ref) == 0 && len(p.syms) != 0 {
			t.Fatalf("no lines, table %v", p.syms)
		}
	})
}
