package symbol

import (
	"bytes"
	"testing"
)

// FuzzELF feeds arbitrary bytes to the module loader and looks up
// addresses in and around everything it found. Nothing may panic, and the
// loader must stay within the input's size for its allocations.
func FuzzELF(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		mod := loadELF(bytes.NewReader(data), int64(len(data)), "", nil, true)
		var pcs []uint64
		for _, s := range mod.segs {
			pcs = append(pcs, s.off, s.off+s.filesz/2, s.off+s.filesz-1, s.off+s.filesz)
		}
		for _, src := range mod.sources {
			if st, ok := src.(symtab); ok {
				for i, s := range st {
					if i > 64 {
						break
					}
					pcs = append(pcs, s.start, s.end-1, s.end)
				}
			}
		}
		pcs = append(pcs, 0, 1<<63, ^uint64(0))
		var dst []Frame
		for _, off := range pcs {
			addr, ok := offsetToVaddr(mod.segs, off)
			if !ok {
				addr = off
			}
			dst = mod.frames(addr, "fuzz", dst[:0])
			if len(dst) == 0 || dst[0].Module != "fuzz" || dst[0].Addr != addr {
				t.Fatalf("frames(%#x) = %+v", addr, dst)
			}
			// Served from the cache the second time, identically.
			again := mod.frames(addr, "fuzz", nil)
			if len(again) != len(dst) || again[0] != dst[0] {
				t.Fatalf("cached frames differ: %+v vs %+v", again, dst)
			}
		}
	})
}
