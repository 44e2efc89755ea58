package symbol

import (
	"bytes"
	"testing"
)

// seed reads a []byte seed of FuzzELF's corpus.
func seed(t *testing.T, name string) []byte { return seedFile(t, "FuzzELF", name) }

// TestLoadELFBytes loads the small ELF images of the fuzz corpus from
// memory. tiny-static is a static binary (gcc -nostdlib -static) with one
// PT_LOAD at offset 0, vaddr 0x400000:
//
//	40010c  6 FUNC GLOBAL visible
//	400112  4 FUNC WEAK   weakfn
//	400116 13 FUNC GLOBAL _start
func TestLoadELFBytes(t *testing.T) {
	want := map[uint64]string{
		0x10c: "visible", 0x111: "visible", 0x112: "weakfn", 0x116: "_start", 0x122: "_start",
		0x123: "", // past _start's 13 bytes
		0x10b: "",
	}
	for _, c := range []struct {
		seed  string
		names bool
	}{
		{"tiny-static", true},
		{"tiny-corrupt-gopclntab", true}, // a corrupt .gopclntab must not hide ELF names
		{"tiny-stripped", false},
	} {
		data := seed(t, c.seed)
		mod := loadELF(bytes.NewReader(data), int64(len(data)), "", nil, true)
		if len(mod.buildID) != 20 {
			t.Errorf("%s: build id %x", c.seed, mod.buildID)
		}
		for off, name := range want {
			addr, ok := offsetToVaddr(mod.segs, off)
			if off == 0x123 {
				// The segment ends with _start: the offset is in no
				// segment, but the address still must not be named.
				addr, ok = 0x400123, !ok
			}
			if !ok || addr != 0x400000+off {
				t.Errorf("%s: offset %#x -> %#x, %v", c.seed, off, addr, ok)
			}
			if !c.names {
				name = ""
			}
			if f := mod.frames(addr, "m", nil); f[0].Func != name {
				t.Errorf("%s: %#x -> %q, want %q", c.seed, addr, f[0].Func, name)
			}
		}
	}

	data := seed(t, "vdso")
	mod := loadELF(bytes.NewReader(data), int64(len(data)), "", nil, true)
	names := map[string]bool{}
	for _, s := range mod.sources[0].(symtab) {
		names[s.name] = true
	}
	if !names["__vdso_clock_gettime"] || names["clock_gettime"] {
		t.Errorf("vdso names %v: want __vdso_clock_gettime chosen over its weak alias", names)
	}
}
