package symbol

import (
	"path/filepath"
	"testing"

	"github.com/cctop/cctop/internal/elftest"
)

// buildInlined compiles ../testdata/inlined.c (mix inlined into left and
// right) at -O2 -g into dir.
func buildInlined(t *testing.T, dir string) string {
	t.Helper()
	needTool(t, "gcc")
	src, err := filepath.Abs("../testdata/inlined.c")
	if err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, "gcc", "-O2", "-g", "-o", "inlined", src)
	return filepath.Join(dir, "inlined")
}

// TestOpenFramesInline: every address of left that DWARF says runs mix
// has the chain mix (inlined) then left, with mix's lines; the file's
// line source is DWARF.
func TestOpenFramesInline(t *testing.T) {
	bin := buildInlined(t, t.TempDir())
	ff, err := OpenFrames(bin)
	if err != nil {
		t.Fatal(err)
	}
	if ff.Lines != LinesDWARF || ff.Broken {
		t.Fatalf("Lines %q Broken %v; want dwarf, not broken", ff.Lines, ff.Broken)
	}
	code, err := OpenCode(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer code.Close()
	fc, ok := code.Func(elfSymbol(t, bin, "left"))
	if !ok {
		t.Fatal("no code for left")
	}
	inlined := 0
	for a := fc.Start; a < fc.Start+uint64(len(fc.Code)); a++ {
		fs := ff.Frames(a, nil)
		if len(fs) == 0 || fs[len(fs)-1].Func != "left" {
			t.Fatalf("%#x: frames %+v; want left outermost", a, fs)
		}
		if len(fs) == 2 {
			if fs[0].Func != "mix" || !fs[0].Inlined || fs[0].Line < 6 || fs[0].Line > 11 || fs[1].Line != 14 {
				t.Fatalf("%#x: %+v; want mix (lines 6-11) inlined at left:14", a, fs)
			}
			inlined++
		}
	}
	if inlined == 0 {
		t.Fatal("no address of left runs mix")
	}
}

// TestOpenFramesMissing: a stripped copy has no line source and is not
// Broken; a copy whose .debug_info claims more bytes than the file has is
// Broken; a file that is not ELF is an error.
func TestOpenFramesMissing(t *testing.T) {
	dir := t.TempDir()
	bin := buildInlined(t, dir)
	stripped := filepath.Join(dir, "stripped")
	run(t, dir, nil, "strip", "-g", "-o", stripped, bin)
	if ff, err := OpenFrames(stripped); err != nil || ff.Lines != "" || ff.Broken {
		t.Fatalf("stripped: %+v, %v; want no lines, not broken", ff, err)
	}
	broken := filepath.Join(dir, "broken")
	elftest.PatchSectionSize(t, bin, broken, ".debug_info", 1<<40)
	if ff, err := OpenFrames(broken); err != nil || ff.Lines != "" || !ff.Broken {
		t.Fatalf("broken: %+v, %v; want no lines, broken", ff, err)
	}
	if _, err := OpenFrames("../testdata/inlined.c"); err == nil {
		t.Fatal("a C source opened as ELF")
	}
	if _, err := OpenFrames(dir); err == nil {
		t.Fatal("a directory opened")
	}
}
