package tui

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/cctop/cctop/annotate"
)

// annotatePane is the annotate view: one function's source lines, or its
// instructions, each with its flat and cum share of the profile. It draws
// only the rows on screen: a listing of 10,000 instructions costs the
// same to draw as one of ten.
type annotatePane struct {
	st            *Styles
	width, height int

	name     string // the function, as the tree named it
	listing  *annotate.Listing
	err      error
	building bool
	disasm   bool
	// cursor and offset index the rows of the view shown (Lines or Insns).
	cursor, offset int
	// insnW is the width of the instruction column (the text and what
	// a jump or call goes to), so that the file:line after it lines up.
	insnW  int
	placed bool // the cursor was put on the hottest row once
}

func (p *annotatePane) SetSize(w, h int) {
	p.width, p.height = max(w, 0), max(h, 0)
	p.scrollToCursor()
}

// headLines is what the view shows above its rows: the title, what is
// missing when something is, the column titles.
func (p *annotatePane) headLines() int {
	n := 2
	if p.listing != nil && p.listing.Missing != "" {
		n++
	}
	return n
}

func (p *annotatePane) bodyHeight() int { return max(0, p.height-p.headLines()) }

func (p *annotatePane) rows() int {
	switch {
	case p.listing == nil:
		return 0
	case p.disasm:
		return len(p.listing.Insns)
	}
	return len(p.listing.Lines)
}

// open starts the view on a function whose listing is being built.
func (p *annotatePane) open(name string, disasm bool) {
	*p = annotatePane{st: p.st, width: p.width, height: p.height, name: name, building: true, disasm: disasm}
}

// set takes a listing built for the view. A rebuild (the live view's)
// keeps the cursor on the same line or address and the row on the same
// screen line.
func (p *annotatePane) set(l *annotate.Listing, err error) {
	p.building = false
	if err == nil && l == nil {
		err = errors.New("no listing")
	}
	if err != nil {
		p.err = err
		return
	}
	k, was := p.cursorKey(), p.cursor
	screen := p.cursor - p.offset
	had := p.listing != nil
	p.listing, p.err = l, nil
	p.insnW = 0
	for _, in := range l.Insns {
		p.insnW = max(p.insnW, len(in.Text)+ansi.StringWidth(insnNote(in)))
	}
	p.insnW = min(p.insnW, maxInsnW)
	if had {
		if p.disasm {
			p.cursor = p.findInsn(k.addr)
		} else if p.cursor = p.findLine(k, true); p.cursor < 0 {
			p.cursor = min(was, max(0, len(l.Lines)-1))
		}
		p.offset = p.cursor - screen
		p.clamp()
		return
	}
	if len(l.Insns) > 0 && !slices.ContainsFunc(l.Lines, func(r annotate.Line) bool { return r.Text != "" }) {
		// No source text to show: the instructions, with their lines.
		p.disasm = true
	}
	p.toHot()
}

// rowKey names a row across listings of one function: a source row by
// its function ("" the listed one's own lines), file and line; an
// instruction by its address, with its (innermost) file and line.
type rowKey struct {
	fn, chain, file string
	line            int
	addr            uint64
}

// cursorKey is the cursor row's key; the zero key where there is none.
func (p *annotatePane) cursorKey() rowKey {
	if p.listing == nil || p.cursor >= p.rows() {
		return rowKey{}
	}
	if p.disasm {
		in := p.listing.Insns[p.cursor]
		return rowKey{file: in.File, line: in.Line, addr: in.Addr}
	}
	r := p.listing.Lines[p.cursor]
	return rowKey{fn: r.Func, chain: strings.Join(r.Inline, "\x00"), file: r.File, line: r.Line}
}

// findInsn is the instruction at addr, else the first after it.
func (p *annotatePane) findInsn(addr uint64) int {
	ins := p.listing.Insns
	i, _ := slices.BinarySearchFunc(ins, addr, func(in annotate.Insn, a uint64) int { return cmp.Compare(in.Addr, a) })
	return min(i, max(0, len(ins)-1))
}

// findLine is, with exact, the source row of k's function, inline chain,
// file and line; else, or where there is none, the hottest row of its file
// and line (a function inlined from the same file has its lines at own
// lines' numbers too); -1 if none.
func (p *annotatePane) findLine(k rowKey, exact bool) int {
	if k.line <= 0 {
		return -1
	}
	best := -1
	for i, r := range p.listing.Lines {
		if r.File != k.file || r.Line != k.line {
			continue
		}
		if exact && r.Func == k.fn && strings.Join(r.Inline, "\x00") == k.chain {
			return i
		}
		if best < 0 || hotter(r.Flat, r.Cum, p.listing.Lines[best].Flat, p.listing.Lines[best].Cum) {
			best = i
		}
	}
	return best
}

// toHot puts the cursor on the hottest row, by flat then cum (the first
// of equals), a third of the way down the screen where it can.
func (p *annotatePane) toHot() {
	l := p.listing
	if l == nil {
		return
	}
	best := -1
	if p.disasm {
		for i, in := range l.Insns {
			if best < 0 || hotter(in.Flat, in.Cum, l.Insns[best].Flat, l.Insns[best].Cum) {
				best = i
			}
		}
	} else {
		// Every row, an inlined function's line too (l.Hot is the hottest
		// own line): the call site that inlined it is the row above.
		for i, r := range l.Lines {
			if best < 0 || hotter(r.Flat, r.Cum, l.Lines[best].Flat, l.Lines[best].Cum) {
				best = i
			}
		}
	}
	p.cursor = max(best, 0)
	p.offset = p.cursor - p.bodyHeight()/3
	p.clamp()
	p.placed = true
}

func hotter(flat, cum, bflat, bcum float64) bool {
	return flat > bflat || (flat == bflat && cum > bcum)
}

// toggle flips between source lines and instructions, keeping the
// cursor where it was: the line's hottest instruction (of its file and
// line, or at an address the profile gave that own line: a call site's
// inlined code), the instruction's line (its own row, an inlined one, or
// the own line the profile gave its address). Where there is none, the
// hottest row.
func (p *annotatePane) toggle() {
	l := p.listing
	k := p.cursorKey()
	p.disasm = !p.disasm
	if l == nil || p.rows() == 0 {
		return
	}
	screen := p.cursor - p.offset
	at := -1
	if p.disasm {
		own := map[uint64]bool{}
		if k.fn == "" {
			for _, a := range l.Addrs {
				if a.Line == k.line && k.line > 0 {
					own[a.Addr] = true
				}
			}
		}
		for i, in := range l.Insns {
			if ((in.Line == k.line && in.File == k.file && k.line > 0) || own[in.Addr]) &&
				(at < 0 || hotter(in.Flat, in.Cum, l.Insns[at].Flat, l.Insns[at].Cum)) {
				at = i
			}
		}
	} else if at = p.findLine(k, false); at < 0 {
		a, ok := slices.BinarySearchFunc(l.Addrs, k.addr, func(a annotate.Addr, x uint64) int { return cmp.Compare(a.Addr, x) })
		if ok && l.Addrs[a].Line > 0 {
			at = p.findLine(rowKey{file: l.File, line: l.Addrs[a].Line}, false)
		}
	}
	if at < 0 {
		p.toHot()
		return
	}
	p.cursor = at
	p.offset = p.cursor - screen
	p.clamp()
}

func (p *annotatePane) moveTo(i int) {
	p.cursor = min(max(i, 0), max(0, p.rows()-1))
	p.scrollToCursor()
}

// click puts the cursor on the row at line y of the pane, if one is there.
func (p *annotatePane) click(y int) {
	y -= p.headLines()
	if p.listing == nil || p.err != nil || y < 0 || y >= p.bodyHeight() || p.offset+y >= p.rows() {
		return
	}
	p.moveTo(p.offset + y)
}

func (p *annotatePane) scroll(d int) {
	p.offset += d
	p.clamp()
	p.cursor = min(max(p.cursor, p.offset), p.offset+max(0, p.bodyHeight()-1))
	p.cursor = min(max(p.cursor, 0), max(0, p.rows()-1))
}

func (p *annotatePane) scrollToCursor() {
	h := p.bodyHeight()
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if h > 0 && p.cursor >= p.offset+h {
		p.offset = p.cursor - h + 1
	}
	p.clamp()
}

func (p *annotatePane) clamp() {
	p.offset = min(p.offset, max(0, p.rows()-p.bodyHeight()))
	p.offset = max(p.offset, 0)
}

// View draws the title, what is missing, the column titles and the rows
// on screen.
func (p *annotatePane) View() string {
	if p.height <= 0 || p.width <= 0 {
		return ""
	}
	var lines []string
	what := "source"
	if p.disasm {
		what = "disassembly"
	}
	title := "annotate " + printable(p.name) + " · " + what
	l := p.listing
	if l != nil {
		title += fmt.Sprintf(" · flat %s cum %s", pctOf(l.Flat, l.Total), pctOf(l.Cum, l.Total))
		if l.File != "" && !p.disasm {
			title += " · " + printable(l.File)
		} else if l.Module != "" && p.disasm {
			title += " · " + printable(l.Module)
		}
	}
	lines = append(lines, p.st.Title.Render(ansi.Truncate(title, p.width, "…")))
	switch {
	case p.err != nil:
		lines = append(lines, p.st.Error.Render(ansi.Truncate("cannot annotate: "+oneLine(p.err.Error()), p.width, "…")))
		return strings.Join(lines, "\n")
	case l == nil:
		lines = append(lines, p.st.Empty.Render("building…"))
		return strings.Join(lines, "\n")
	}
	if l.Missing != "" {
		lines = append(lines, p.st.Warn.Render(ansi.Truncate(oneLine(l.Missing), p.width, "…")))
	}
	if p.disasm {
		lines = append(lines, p.st.ColumnTitle.Render(ansi.Truncate("  flat    cum  address   instruction", p.width, "…")))
	} else {
		lines = append(lines, p.st.ColumnTitle.Render(ansi.Truncate("  flat    cum   line  source", p.width, "…")))
	}
	if p.rows() == 0 {
		msg := "no source lines to show"
		if p.disasm {
			msg = "no instructions to show"
		}
		lines = append(lines, p.st.Empty.Render(msg))
		return strings.Join(lines, "\n")
	}
	end := min(p.rows(), p.offset+p.bodyHeight())
	for i := p.offset; i < end; i++ {
		var s string
		if p.disasm {
			s = p.insnRow(i)
		} else {
			s = p.lineRow(i)
		}
		s = ansi.Truncate(s, p.width, "…")
		if i == p.cursor {
			s = p.st.Cursor.Render(ansi.Strip(s) + strings.Repeat(" ", max(0, p.width-ansi.StringWidth(s))))
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// shares is the flat and cum columns of a row.
func (p *annotatePane) shares(flat, cum float64) string {
	f, c := pctOf(flat, p.listing.Total), pctOf(cum, p.listing.Total)
	if flat == 0 {
		f = "."
	}
	if cum == 0 {
		c = "."
	}
	return p.pctStyle(cum).Render(fmt.Sprintf("%6s %6s", f, c))
}

func (p *annotatePane) pctStyle(cum float64) interface{ Render(...string) string } {
	switch pc := 100 * cum / max(p.listing.Total, 1e-300); {
	case pc >= 50:
		return p.st.Hot
	case pc >= 10:
		return p.st.Warm
	}
	return p.st.Percent
}

func (p *annotatePane) lineRow(i int) string {
	r := p.listing.Lines[i]
	text := printable(strings.ReplaceAll(r.Text, "\t", "    "))
	num := strconv.Itoa(r.Line)
	if r.Func != "" {
		// An inlined function's line, under the line that inlined it.
		chain := strings.Join(r.Inline, " › ")
		if chain != "" {
			chain = " · inlined from " + chain
		}
		return fmt.Sprintf("%s %6s  %s %s", p.shares(r.Flat, r.Cum), num,
			p.st.Inlined.Render("↳ "+printable(shortFunc(r.Func))+":"), text) + p.st.CallSite.Render(printable(chain))
	}
	return fmt.Sprintf("%s %6s  %s", p.shares(r.Flat, r.Cum), num, text)
}

func (p *annotatePane) insnRow(i int) string {
	in := p.listing.Insns[i]
	mark := "  "
	if in.IsTarget {
		mark = p.st.Glyph.Render("→ ")
	}
	text, note := printable(in.Text), insnNote(in)
	where := ""
	if in.Line > 0 {
		pad := max(0, p.insnW-ansi.StringWidth(text)-ansi.StringWidth(note))
		where = strings.Repeat(" ", pad) + p.st.Label.Render(fmt.Sprintf("  %s:%d", printable(baseName(in.File)), in.Line))
	}
	if note != "" {
		note = p.st.CallSite.Render(note)
	}
	return fmt.Sprintf("%s %8x %s%s%s%s", p.shares(in.Flat, in.Cum), in.Addr, mark, text, note, where)
}

// maxInsnW bounds the instruction column: a longer instruction pushes its
// own file:line right.
const maxInsnW = 56

// insnNote is what follows an instruction: the function a call names, or
// the address a jump goes to.
func insnNote(in annotate.Insn) string {
	switch {
	case in.Call != "":
		return "  ; call " + printable(shortFunc(in.Call))
	case in.Target != 0:
		return fmt.Sprintf("  ; → %x", in.Target)
	}
	return ""
}

// pctOf is x in percent of total, as the tree's columns show it.
func pctOf(x, total float64) string { return formatPct(share(x, total)) }

func shortFunc(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 && !strings.Contains(name[i:], " ") {
		return name[i+1:]
	}
	return name
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}
