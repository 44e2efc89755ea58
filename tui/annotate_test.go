package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cctop/cctop/annotate"
)

// annotateListing is a listing as annotate.Build makes it for a C
// function whose line 13 is hot, with an inlined helper and a jump.
func annotateListing() *annotate.Listing {
	l := &annotate.Listing{Func: "work", Module: "/tmp/hotline", File: "/src/hotline.c",
		Flat: 900, Cum: 1000, Total: 1000, Unit: "ns", Hot: 3}
	src := []struct {
		line      int
		text      string
		flat, cum float64
	}{
		{9, "static long work(long n)", 0, 0},
		{10, "{", 0, 0},
		{11, "\tlong s = 0;", 0, 0},
		{13, "\t\ts += i * i % 7;", 600, 600},
		{12, "\tfor (long i = 0; i < n; i++) {", 300, 300},
		{14, "\t\tif (s > 1000000) s = twice(s);", 0, 100},
		{15, "\t}", 0, 0},
		{16, "\treturn s;", 0, 0},
	}
	for _, r := range src {
		l.Lines = append(l.Lines, annotate.Line{File: l.File, Line: r.line, Text: r.text, Flat: r.flat, Cum: r.cum})
	}
	// Keep file order, the hot line's index 3 after sorting.
	l.Lines[3], l.Lines[4] = l.Lines[4], l.Lines[3]
	l.Hot = 4
	l.Lines = append(l.Lines[:6], append([]annotate.Line{{File: "/src/twice.h", Line: 3, Text: "\treturn 2 * x;",
		Flat: 100, Cum: 100, Func: "twice", Inline: []string{"work (hotline.c:14)"}}}, l.Lines[6:]...)...)
	for i := range 40 {
		in := annotate.Insn{Addr: 0x1130 + uint64(4*i), Text: fmt.Sprintf("MOVQ AX, %d(SP)", i), File: l.File, Line: 12}
		switch i {
		case 10:
			in.Text, in.Flat, in.Cum, in.Line, in.IsTarget = "IMULQ CX, AX", 600, 600, 13, true
		case 12:
			in.Text, in.Flat, in.Cum = "INCQ CX", 300, 300
		case 14:
			in.Text, in.Target = "JL 0x1158", 0x1158
		case 16:
			in.Text, in.Target, in.Call, in.Cum, in.Line = "CALL 0x1200", 0x1200, "twice", 100, 14
		}
		l.Insns = append(l.Insns, in)
	}
	return l
}

func openedAnnotate(t *testing.T, w, h int, l *annotate.Listing, err error) *Model {
	t.Helper()
	m := New(newFake(testSnapshot()), Options{Width: w, Height: h})
	cmd := m.openAnnotate()
	if cmd == nil || !m.ann.on {
		t.Fatal("a on the first row did not open the annotate view")
	}
	if !strings.Contains(screen(m), "building…") {
		t.Errorf("no building… while the listing is built:\n%s", screen(m))
	}
	send(m, annotateMsg{gen: m.ann.gen, seq: m.snap.Seq, listing: l, err: err})
	return m
}

// TestAnnotateGolden: the source and the disassembly views at 80x24 and
// 200x60.
func TestAnnotateGolden(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		m := openedAnnotate(t, sz[0], sz[1], annotateListing(), nil)
		got := screen(m)
		checkScreen(t, got, sz[0], sz[1])
		checkGolden(t, fmt.Sprintf("annotate_%dx%d", sz[0], sz[1]), got)
		send(m, keys("d")...)
		got = screen(m)
		checkScreen(t, got, sz[0], sz[1])
		checkGolden(t, fmt.Sprintf("annotate_disasm_%dx%d", sz[0], sz[1]), got)
	}
}

// TestAnnotateKeys: the view opens on the hottest line, d goes to the
// hottest instruction of that line and back, e goes back to the hottest
// row, esc returns to the tree as it was, a build for a function no
// longer shown is dropped, and an error is shown, not a crash.
func TestAnnotateKeys(t *testing.T) {
	m := openedAnnotate(t, 100, 30, annotateListing(), nil)
	p := &m.annPane
	if r := p.listing.Lines[p.cursor]; r.Line != 13 {
		t.Fatalf("opened on line %d, want the hot line 13", r.Line)
	}
	cursorRow := func() string {
		for _, l := range strings.Split(screen(m), "\n") {
			if strings.Contains(l, "s += i * i % 7") {
				return l
			}
		}
		return ""
	}
	if row := cursorRow(); !strings.Contains(row, "60.0%") || !strings.Contains(row, "13") {
		t.Errorf("hot line row %q lacks its 60.0%% and its number", row)
	}
	send(m, keys("d")...)
	if in := p.listing.Insns[p.cursor]; !p.disasm || in.Line != 13 || in.Flat != 600 {
		t.Errorf("d: on %+v, want line 13's hottest instruction", in)
	}
	if s := screen(m); !strings.Contains(s, "call twice") || !strings.Contains(s, "→ 1158") || !strings.Contains(s, "→ ") {
		t.Errorf("disassembly lacks the named call, the jump's target or the target mark:\n%s", s)
	}
	send(m, keys("j", "j", "j", "j", "j", "j")...)
	at := p.listing.Insns[p.cursor].Line
	send(m, keys("d")...)
	if p.disasm || p.listing.Lines[p.cursor].Line != at {
		t.Errorf("back to the source: on line %d, want %d", p.listing.Lines[p.cursor].Line, at)
	}
	send(m, keys("home", "e")...)
	if p.listing.Lines[p.cursor].Line != 13 {
		t.Errorf("e: on line %d, want 13", p.listing.Lines[p.cursor].Line)
	}
	cursor := m.tree.cursor
	send(m, keys("esc")...)
	if m.ann.on || m.tree.cursor != cursor || strings.Contains(screen(m), "annotate work") {
		t.Errorf("esc did not return to the tree as it was:\n%s", screen(m))
	}
	// A listing of the function shown before is not taken.
	gen := m.ann.gen
	m.openAnnotate()
	send(m, annotateMsg{gen: gen - 1, listing: annotateListing()})
	if m.annPane.listing != nil {
		t.Error("a listing built for an earlier view was shown")
	}
	m2 := openedAnnotate(t, 80, 24, nil, errors.New("open /tmp/hotline: no such file or directory\nmore"))
	if s := screen(m2); !strings.Contains(s, "cannot annotate: open /tmp/hotline: no such file or directory") || strings.Contains(s, "more") {
		t.Errorf("the error is not shown in one line:\n%s", s)
	}
	send(m2, keys("?")...)
	if s := screen(m2); !strings.Contains(s, "source/disassembly") {
		t.Errorf("help does not follow the annotate view:\n%s", s)
	}
}

// TestAnnotateMissing: what a listing misses is one line above its rows;
// with no source text the view opens on the instructions, and d still
// shows the lines' shares by number.
func TestAnnotateMissing(t *testing.T) {
	l := annotateListing()
	l.Missing = "no source file: /src/hotline.c: no such file or directory"
	for i := range l.Lines {
		l.Lines[i].Text = ""
	}
	m := openedAnnotate(t, 80, 24, l, nil)
	s := screen(m)
	if !strings.Contains(s, "no source file: /src/hotline.c") {
		t.Errorf("the missing source is not said:\n%s", s)
	}
	if !m.annPane.disasm || !strings.Contains(s, "IMULQ CX, AX") {
		t.Errorf("no source text, and the view did not open on the instructions:\n%s", s)
	}
	send(m, keys("d")...)
	if s := screen(m); !strings.Contains(s, "60.0%") || !strings.Contains(s, " 13 ") {
		t.Errorf("the lines' shares are not shown without their text:\n%s", s)
	}
}
