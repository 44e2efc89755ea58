package tui

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

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
		case 18:
			// twice's code inlined at line 14: its own line there.
			in.Text, in.File, in.Line, in.Flat, in.Cum = "SHLQ $1, AX", "/src/twice.h", 3, 50, 50
			l.Addrs = append(l.Addrs, annotate.Addr{Addr: in.Addr, Line: 14, File: l.File, Flat: 50, Cum: 50})
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
	// Inlined code: twice's line and its instruction, both ways; line
	// 14's hottest instruction is twice's code inlined there.
	send(m, keys("down")...)
	if r := p.listing.Lines[p.cursor]; r.Func != "twice" {
		t.Fatalf("down from line 14: on %+v, want twice's inlined line", r)
	}
	send(m, keys("d")...)
	if in := p.listing.Insns[p.cursor]; !p.disasm || in.File != "/src/twice.h" || in.Line != 3 {
		t.Errorf("d on twice's line: on %+v, want its instruction", in)
	}
	send(m, keys("d")...)
	if r := p.listing.Lines[p.cursor]; p.disasm || r.Func != "twice" || r.Line != 3 {
		t.Errorf("d back from twice's instruction: on %+v, want its inlined line", r)
	}
	send(m, keys("up", "d")...)
	if in := p.listing.Insns[p.cursor]; in.Text != "SHLQ $1, AX" {
		t.Errorf("d on line 14: on %+v, want the hottest code of the line, twice's inlined there", in)
	}
	send(m, keys("d")...)
	if r := p.listing.Lines[p.cursor]; r.Func != "twice" {
		t.Errorf("d back: on %+v, want twice's line", r)
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
	foot := screen(m2)[strings.LastIndexByte(screen(m2), '\n')+1:]
	if !strings.Contains(foot, "d/tab source/disasm") || !strings.Contains(foot, "? help") || !strings.Contains(foot, "q quit") {
		t.Errorf("the footer at 80 columns lacks the view's keys, help or quit: %q", foot)
	}
	send(m2, keys("?")...)
	if s := screen(m2); !strings.Contains(s, "source/disassembly") || !strings.Contains(s, "first row") || strings.Contains(s, "callers") {
		t.Errorf("help does not follow the annotate view:\n%s", s)
	}
	send(m2, keys("?")...)
	if s := screen(m2); !strings.Contains(s, "cannot annotate") {
		t.Errorf("? again did not return to the annotate view:\n%s", s)
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

// TestAnnotateRowFunction: a annotates the function the cursor row names:
// a chain row's last frame (the one it leads to), a flat view's row; a
// process row has no code and is refused; esc leaves the tree's folds and
// cursor as they were.
func TestAnnotateRowFunction(t *testing.T) {
	m := New(newFake(demoSnapshot(660, 330)), Options{Width: 80, Height: 24})
	send(m, keys("home")...)
	if m.tree.rows[0].links == nil {
		t.Fatal("the first row is not a chain")
	}
	rows, cursor := visible(m), m.tree.cursor
	send(m, keys("a")...)
	if want := "github.com/cctop/cctop/workload.densityRounds"; !m.ann.on || m.ann.name != want {
		t.Errorf("a on the chain row annotates %q (on %v), want its last frame %q", m.ann.name, m.ann.on, want)
	}
	if s := screen(m); !strings.Contains(s, "annotate workload.densityRounds") || !strings.Contains(s, "building…") {
		t.Errorf("the view does not name the function or say it is building:\n%s", s)
	}
	send(m, keys("esc")...)
	if got := visible(m); m.ann.on || m.tree.cursor != cursor || !slices.Equal(got, rows) {
		t.Errorf("esc: cursor %d rows %q, want %d %q", m.tree.cursor, got, cursor, rows)
	}

	send(m, keys("t", "home")...)
	send(m, keys("a")...)
	if want := "github.com/cctop/cctop/workload.densityLeaf"; !m.ann.on || m.ann.name != want {
		t.Errorf("a in the flat view annotates %q, want %q", m.ann.name, want)
	}
	send(m, keys("esc")...)

	samples := []sample{{[]string{"exec", "pg1"}, 101, 40, 40, 0}, {[]string{"main", "bench"}, 200, 25, 25, 0}}
	m = New(newFake(buildTreeOf(pgFuncs, samples, inOrder(len(samples)))), Options{Width: 100, Height: 24})
	send(m, keys("home", "a")...)
	if s := screen(m); m.ann.on || !strings.Contains(s, "a process has no code") {
		t.Errorf("a on a process row opened %v:\n%s", m.ann.on, s)
	}
}

// bigListing is a function of 2,000 source lines and 10,000
// instructions, hottest at line 1500 and its instruction 7,500.
func bigListing() *annotate.Listing {
	l := &annotate.Listing{Func: "big", Module: "/bin/big", File: "big.c", Flat: 100, Cum: 100, Total: 100, Hot: -1}
	for i := range 2000 {
		r := annotate.Line{File: l.File, Line: i + 1, Text: fmt.Sprintf("row_%d();", i+1), Cum: 0.01}
		if i == 1499 {
			r.Flat, r.Cum = 40, 40
		}
		l.Lines = append(l.Lines, r)
	}
	for i := range 10000 {
		in := annotate.Insn{Addr: 0x400000 + 4*uint64(i), Text: fmt.Sprintf("NOP // %d", i), File: l.File, Line: i/5 + 1}
		if i == 7500 {
			in.Flat, in.Cum = 40, 40
		}
		l.Insns = append(l.Insns, in)
	}
	return l
}

// TestAnnotateScroll: the keys move the cursor through a listing of
// 10,000 instructions and the cursor row stays on the screen, which
// holds only the rows that fit; taking and drawing it stays within
// issue 33's 50 ms.
func TestAnnotateScroll(t *testing.T) {
	m := openedAnnotate(t, 80, 24, bigListing(), nil)
	p := &m.annPane
	onScreen := func(step string) {
		t.Helper()
		s, want := screen(m), ""
		if p.disasm {
			want = p.listing.Insns[p.cursor].Text
		} else {
			want = p.listing.Lines[p.cursor].Text
		}
		if !regexp.MustCompile(regexp.QuoteMeta(want) + `(\s|$)`).MatchString(s) {
			t.Errorf("%s: the cursor row %q is not on the screen:\n%s", step, want, s)
		}
		if n := strings.Count(p.View(), "\n") + 1; n != p.height {
			t.Errorf("%s: the pane drew %d lines in %d", step, n, p.height)
		}
	}
	if p.listing.Lines[p.cursor].Line != 1500 {
		t.Errorf("opened on line %d, want the hottest, 1500", p.listing.Lines[p.cursor].Line)
	}
	onScreen("open")
	page := p.bodyHeight() - 1
	for _, c := range []struct {
		key  string
		want int
	}{{"home", 0}, {"down", 1}, {"pgdown", 1 + page}, {"pgdown", 1 + 2*page}, {"up", 2 * page},
		{"pgup", page}, {"end", 1999}, {"up", 1998}, {"down", 1999}, {"down", 1999}, {"pgdown", 1999}, {"home", 0}, {"up", 0}} {
		send(m, press(c.key))
		if p.cursor != c.want {
			t.Errorf("%s: cursor %d, want %d", c.key, p.cursor, c.want)
		}
		onScreen(c.key)
	}
	// The mouse: the wheel scrolls, a click puts the cursor on its row.
	send(m, keys("home")...)
	send(m, tea.MouseWheelMsg{Button: tea.MouseWheelDown}, tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if p.offset != 2*wheelStep || p.cursor != p.offset {
		t.Errorf("two notches down: offset %d cursor %d, want %d", p.offset, p.cursor, 2*wheelStep)
	}
	top := m.layout().header + p.headLines()
	send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: top + 4})
	if want := p.offset + 4; p.cursor != want {
		t.Errorf("a click on the 5th row: cursor %d, want %d", p.cursor, want)
	}
	if l := strings.Split(screen(m), "\n")[top+4]; !strings.Contains(l, p.listing.Lines[p.cursor].Text+" ") {
		t.Errorf("the clicked screen line %q is not the cursor row %q", l, p.listing.Lines[p.cursor].Text)
	}
	send(m, tea.MouseClickMsg{Button: tea.MouseLeft, Y: top - 1}, tea.MouseClickMsg{Button: tea.MouseLeft, Y: 0})
	if want := p.offset + 4; p.cursor != want || !m.ann.on {
		t.Errorf("a click above the rows moved the cursor to %d (view on %v)", p.cursor, m.ann.on)
	}
	onScreen("click")
	send(m, keys("d", "e")...)
	if in := p.listing.Insns[p.cursor]; !p.disasm || in.Flat != 40 {
		t.Errorf("d, e: on %+v, want the hottest instruction", in)
	}
	onScreen("d e")
	send(m, keys("end")...)
	if p.cursor != 9999 {
		t.Errorf("end: cursor %d, want 9999", p.cursor)
	}
	onScreen("end")

	best := time.Hour
	for range 3 {
		l := bigListing()
		start := time.Now()
		p.open("big", true)
		p.set(l, nil)
		_ = m.View()
		best = min(best, time.Since(start))
	}
	if best > 50*time.Millisecond {
		t.Errorf("taking and drawing 10,000 instructions took %v, over 50 ms", best)
	}
}

// TestAnnotateLive: in the live view a newer snapshot is annotated again
// once the last build is a second old, not sooner; the rebuilt listing
// keeps the cursor on its line at its place on the screen; a rebuild's
// error is shown and the next listing replaces it.
func TestAnnotateLive(t *testing.T) {
	src := newFake(testSnapshot())
	m := New(src, Options{Width: 100, Height: 30})
	m.openAnnotate()
	send(m, annotateMsg{gen: m.ann.gen, seq: m.snap.Seq, listing: bigListing()})
	p := &m.annPane
	send(m, keys("down")...) // line 1501
	line, row := p.listing.Lines[p.cursor].Line, p.cursor-p.offset
	if cmd := m.annotateDue(); cmd != nil {
		t.Error("a rebuild of the same snapshot")
	}
	s := src.Snapshot()
	s.Seq++
	src.set(s)
	send(m, tickMsg{})
	if m.snap.Seq != s.Seq {
		t.Fatal("the tick did not take the new snapshot")
	}
	if cmd := m.annotateDue(); cmd != nil {
		t.Error("a rebuild within a second of the last")
	}
	m.ann.built = time.Now().Add(-annotateRebuild)
	if cmd := m.annotateDue(); cmd == nil || !m.ann.busy {
		t.Fatal("no rebuild of a newer snapshot a second on")
	}
	if cmd := m.annotateDue(); cmd != nil {
		t.Error("a second build while one runs")
	}
	l := bigListing()
	l.Lines = append([]annotate.Line{{File: l.File, Line: 0, Text: "#include <x.h>"}}, l.Lines...)
	send(m, annotateMsg{gen: m.ann.gen, seq: s.Seq, listing: l})
	if got := p.listing.Lines[p.cursor].Line; got != line || p.cursor-p.offset != row || m.ann.seq != s.Seq {
		t.Errorf("after the rebuild on line %d at row %d (seq %d), want line %d at row %d (seq %d)",
			got, p.cursor-p.offset, m.ann.seq, line, row, s.Seq)
	}
	send(m, annotateMsg{gen: m.ann.gen, seq: s.Seq, err: errors.New("module gone")})
	if sc := screen(m); !strings.Contains(sc, "cannot annotate: module gone") {
		t.Errorf("a rebuild's error is not shown:\n%s", sc)
	}
	send(m, annotateMsg{gen: m.ann.gen, seq: s.Seq, listing: annotateListing()})
	if sc := screen(m); strings.Contains(sc, "cannot annotate") || !strings.Contains(sc, "s += i * i % 7") {
		t.Errorf("the next listing did not replace the error:\n%s", sc)
	}
	// In the disassembly a rebuild keeps the cursor's address.
	send(m, annotateMsg{gen: m.ann.gen, seq: s.Seq, listing: bigListing()})
	send(m, keys("d", "down", "down")...)
	addr, row := p.listing.Insns[p.cursor].Addr, p.cursor-p.offset
	l = bigListing()
	l.Insns = append([]annotate.Insn{{Addr: 0x3ffff0, Text: "PUSHQ BP"}}, l.Insns...)
	send(m, annotateMsg{gen: m.ann.gen, seq: s.Seq, listing: l})
	if in := p.listing.Insns[p.cursor]; !p.disasm || in.Addr != addr || p.cursor-p.offset != row {
		t.Errorf("after the rebuild on %x at row %d, want %x at row %d", in.Addr, p.cursor-p.offset, addr, row)
	}
	send(m, annotateMsg{gen: m.ann.gen, seq: s.Seq})
	if sc := screen(m); !strings.Contains(sc, "cannot annotate: no listing") {
		t.Errorf("a build with neither listing nor error:\n%s", sc)
	}
}

// TestAnnotateReopenWhileBuilding: a view opened while the build of an
// earlier one runs gets its own build as soon as that one returns, not a
// second later; one closed gets none.
func TestAnnotateReopenWhileBuilding(t *testing.T) {
	m := New(newFake(testSnapshot()), Options{Width: 100, Height: 30})
	if m.openAnnotate() == nil {
		t.Fatal("no build")
	}
	old := m.ann.gen
	send(m, keys("esc", "a")...)
	if !m.ann.on || !m.ann.busy || m.ann.gen == old {
		t.Fatalf("reopened: on %v busy %v gen %d", m.ann.on, m.ann.busy, m.ann.gen)
	}
	_, cmd := m.Update(annotateMsg{gen: old, listing: annotateListing()})
	if cmd == nil || !m.ann.busy || m.annPane.listing != nil {
		t.Errorf("the earlier build's return: cmd %v busy %v listing %v, want the new view's build", cmd != nil, m.ann.busy, m.annPane.listing != nil)
	}
	old = m.ann.gen
	send(m, keys("esc")...)
	if _, cmd := m.Update(annotateMsg{gen: old, listing: annotateListing()}); cmd != nil || m.ann.busy {
		t.Error("a build started for a closed view")
	}
}

// TestAnnotateBuildsOffUpdate: the command a runs is annotate's Build on
// the snapshot's tree; whatever it makes of a profile of binaries that
// are not there arrives as a message and is drawn, never a crash.
func TestAnnotateBuildsOffUpdate(t *testing.T) {
	m := New(newFake(testSnapshot()), Options{Width: 100, Height: 30})
	cmd := m.openAnnotate()
	msg, ok := cmd().(annotateMsg)
	if !ok {
		t.Fatalf("the build returned %T", cmd())
	}
	send(m, msg)
	s := screen(m)
	if strings.Contains(s, "building…") || m.ann.busy {
		t.Errorf("the built listing was not taken:\n%s", s)
	}
	if msg.err == nil && msg.listing.Missing != "" && !strings.Contains(s, oneLine(msg.listing.Missing)[:20]) {
		t.Errorf("what is missing (%q) is not said:\n%s", msg.listing.Missing, s)
	}
}

// sameFileInlined is left of testdata/inlined.c: mix, a static inline
// function of the same file, inlined at line 14, where all the time is:
// mix's line 9 is also an own row of left's listing, without weight.
func sameFileInlined() *annotate.Listing {
	const f = "/src/inlined.c"
	chain := []string{"left (inlined.c:14)"}
	return &annotate.Listing{Func: "left", Module: "/bin/inlined", File: f, Flat: 0, Cum: 50, Total: 100, Hot: 2,
		Lines: []annotate.Line{
			{File: f, Line: 9, Text: "s = s * 0.999999;"},
			{File: f, Line: 13, Text: "double left(int n) {"},
			{File: f, Line: 14, Text: "double a = mix(1.5, n);", Cum: 50},
			{File: f, Line: 8, Text: "for (int i = 1; i < n; i++)", Flat: 13, Cum: 13, Func: "mix", Inline: chain},
			{File: f, Line: 9, Text: "s = s * 0.999999;", Flat: 37, Cum: 37, Func: "mix", Inline: chain},
			{File: f, Line: 15, Text: "return a * 2;"},
		},
		Insns: []annotate.Insn{
			{Addr: 0x10, Text: "MULSD X4, X2", File: f, Line: 9},
			{Addr: 0x14, Text: "ADDL $0x1, AX", File: f, Line: 8, Flat: 13, Cum: 13},
			{Addr: 0x18, Text: "ADDSD X1, X2", File: f, Line: 9, Flat: 28, Cum: 28},
			{Addr: 0x1c, Text: "MOVAPD X2, X0", File: f, Line: 9, Flat: 9, Cum: 9},
			{Addr: 0x20, Text: "RET", File: f, Line: 15},
		},
		Addrs: []annotate.Addr{{Addr: 0x14, Line: 14, File: f, Flat: 13, Cum: 13}, {Addr: 0x18, Line: 14, File: f, Flat: 28, Cum: 28},
			{Addr: 0x1c, Line: 14, File: f, Flat: 9, Cum: 9}},
	}
}

// TestAnnotateInlinedSameFile: the view opens on the hottest row, the
// inlined line, not the own line that inlined it; d goes to its hottest
// instruction and back to it, not to the own row of the same number; a
// rebuild keeps it; the own line that inlined it goes to its hottest code.
func TestAnnotateInlinedSameFile(t *testing.T) {
	m := openedAnnotate(t, 80, 24, sameFileInlined(), nil)
	p := &m.annPane
	onMix9 := func(step string) {
		t.Helper()
		if r := p.listing.Lines[p.cursor]; p.disasm || r.Func != "mix" || r.Line != 9 {
			t.Errorf("%s: on %+v, want mix's line 9 inlined at 14", step, r)
		}
	}
	onMix9("open")
	send(m, keys("d")...)
	if in := p.listing.Insns[p.cursor]; in.Addr != 0x18 {
		t.Errorf("d: on %+v, want line 9's hottest instruction", in)
	}
	send(m, keys("d")...)
	onMix9("d d")
	l := sameFileInlined()
	l.Lines = append([]annotate.Line{{File: l.File, Line: 8, Text: "double s = x;"}}, l.Lines...)
	send(m, annotateMsg{gen: m.ann.gen, listing: l})
	onMix9("rebuild")
	send(m, keys("up", "up")...)
	if r := p.listing.Lines[p.cursor]; r.Line != 14 || r.Func != "" {
		t.Fatalf("up up: on %+v, want own line 14", r)
	}
	send(m, keys("d")...)
	if in := p.listing.Insns[p.cursor]; in.Addr != 0x18 {
		t.Errorf("d on the call site: on %+v, want the hottest code inlined there", in)
	}
	send(m, keys("end", "d")...)
	if r := p.listing.Lines[p.cursor]; r.Line != 15 || r.Func != "" {
		t.Errorf("d on RET: on %+v, want own line 15", r)
	}
}

// TestAnnotateResize: any size, however small, draws without a panic in
// the lines it has, and the cursor row stays on the screen where it fits.
func TestAnnotateResize(t *testing.T) {
	m := openedAnnotate(t, 80, 24, bigListing(), nil)
	p := &m.annPane
	for _, sz := range [][2]int{{0, 0}, {1, 1}, {10, 3}, {20, 8}, {200, 60}, {40, 12}, {80, 24}} {
		send(m, tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		s := screen(m)
		if n := strings.Count(s, "\n") + 1; sz[1] > 0 && n > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], n)
		}
		if p.bodyHeight() > 0 && (p.cursor < p.offset || p.cursor >= p.offset+p.bodyHeight()) {
			t.Errorf("%dx%d: cursor %d off the rows %d..%d", sz[0], sz[1], p.cursor, p.offset, p.offset+p.bodyHeight())
		}
	}
	if r := p.listing.Lines[p.cursor]; r.Line != 1500 {
		t.Errorf("after resizing on line %d, want 1500", r.Line)
	}
}
