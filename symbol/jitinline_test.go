package symbol

import (
	"slices"
	"testing"
)

// TestJITDumpInlined: a pc whose code the jitdump's JIT_CODE_INLINE record
// (cctop's JVMTI agent) says runs an inlined method is named as the chain,
// innermost first, each frame but the compiled method marked Inlined, with
// their files and lines; a pc with no inlining recorded is the compiled
// method alone; the file is listed for removal.
func TestJITDumpInlined(t *testing.T) {
	w := newJD()
	// addr, 2 entries: [jdX, +0x10) run alone; from +0x10 mix in run.
	w.rec(0x63630001, 10, uint64(jdX), uint64(2),
		uint64(jdX), uint32(1), uint32(10), "long Inl.run(long)", "Inl.java",
		uint64(jdX+0x10), uint32(2), uint32(4), "long Inl.mix(long)", "Inl.java", uint32(11), "long Inl.run(long)", "Inl.java",
		[]byte{0, 0, 0, 0, 0, 0, 0, 0}[:(8-(16+16+12+4+19+9+12+4+19+9+4+19+9)%8)%8])
	w.load(10, jdX, 0x40, 1, "long Inl.run(long)")
	r, pid, path := jitDumpProc(t, w.b)
	r.SetTime(100)
	type fr struct {
		fn, file string
		line     int
		inlined  bool
	}
	frames := func(pc uint64) []fr {
		var out []fr
		for _, f := range r.Lookup(pid, pc, nil) {
			if f.Module != jitModule {
				t.Errorf("%#x: frame %+v not in %s", pc, f, jitModule)
			}
			out = append(out, fr{f.Func, f.File, f.Line, f.Inlined})
		}
		return out
	}
	if got, want := frames(jdX+4), []fr{{"long Inl.run(long)", "Inl.java", 10, false}}; !slices.Equal(got, want) {
		t.Errorf("run's own code: %v, want %v", got, want)
	}
	want := []fr{{"long Inl.mix(long)", "Inl.java", 4, true}, {"long Inl.run(long)", "Inl.java", 11, false}}
	if got := frames(jdX + 0x18); !slices.Equal(got, want) {
		t.Errorf("mix inlined: %v, want %v", got, want)
	}
	if got := r.JITDumpPaths(); !slices.Equal(got, []string{path}) {
		t.Errorf("JITDumpPaths = %v, want %v", got, []string{path})
	}
}
