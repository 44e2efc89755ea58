package tui

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// columns is which columns fit the pane's width. Narrow terminals lose the self, Δ and
// metric columns before the name loses its last characters.
type columns struct {
	self, metric, delta bool
	metricW, nameW      int
}

// Widths below which a column is dropped.
const (
	minWidthMetric = 36
	minWidthAll    = 60
)

func (t *treePane) columns() columns {
	c := columns{}
	used := pctWidth
	if t.width >= minWidthMetric {
		c.metric, c.metricW = true, metricWidth
		if t.prof != nil && t.prof.diff {
			c.metricW = diffWidth
		}
		used += 1 + c.metricW
	}
	if t.width >= minWidthAll {
		c.self, c.delta = true, true
		used += 2 + pctWidth + deltaWidth
	}
	c.nameW = max(0, t.width-used-2)
	return c
}

// View draws the column titles and the rows in the window: the cost of a frame is the
// window's height, whatever the size of the tree.
func (t *treePane) View() string {
	if t.width <= 0 || t.height <= 0 {
		return ""
	}
	c := t.columns()
	var b strings.Builder
	if t.height >= 2 {
		b.WriteString(t.titleLine(c))
		b.WriteByte('\n')
	}
	h := t.bodyHeight()
	switch {
	case t.prof == nil:
		b.WriteString(t.st.Empty.Render(t.pad(ansi.Truncate("waiting for the first profile…", t.width, "…"))))
		h--
	case len(t.rows) == 0:
		b.WriteString(t.st.Empty.Render(t.pad(ansi.Truncate("no samples yet", t.width, "…"))))
		h--
	}
	end := min(t.offset+h, len(t.rows))
	for i := t.offset; i < end; i++ {
		b.WriteString(t.renderRow(i, c))
		if i+1 < end {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (t *treePane) titleLine(c columns) string {
	metric := "calls"
	if t.prof != nil {
		metric = metricTitle(t.prof.metric, t.prof.unit)
		if t.prof.diff {
			metric = "±" + metric
		}
	}
	var b strings.Builder
	b.WriteString(padLeft("total", pctWidth))
	if c.self {
		b.WriteString(" " + padLeft("self", pctWidth))
	}
	if c.metric {
		b.WriteString(" " + padLeft(metric, c.metricW))
	}
	if c.delta {
		b.WriteString(" " + padLeft("Δ", deltaWidth))
	}
	title := "function"
	switch {
	case t.mode.kind == bottomUp:
		title = "function ← callers"
	case t.mode.kind == flatView:
		title = "function (flat)"
	}
	b.WriteString("  " + title)
	return t.st.ColumnTitle.Render(t.pad(ansi.Truncate(b.String(), t.width, "…")))
}

// renderRow draws row i.
func (t *treePane) renderRow(i int, c columns) string {
	t.rowRenders++
	r := &t.rows[i]
	g, p := r.g, t.prof
	st := t.st
	cursor := i == t.cursor

	// A chain row's figures are its first frame's (the chain holds nearly all of it),
	// its self the time of all its frames.
	head := r.head()
	total, selfW, cmpTotal, grand := head.total, g.self, head.cmpTotal, p.grand
	if r.links != nil {
		selfW = 0
		for _, l := range r.links {
			selfW += l.self
		}
	}
	if p.pending {
		total, selfW = 0, 0
	}
	totalPct := share(total, grand)
	tot := padLeft(formatPct(totalPct), pctWidth)
	var self, met, delta string
	if c.self {
		// A bottom-up row's self would be the samples whose whole stack is its path
		// (the outermost caller's share), which reads as nonsense next to a function's
		// total; the column stays blank there.
		if t.mode.kind != bottomUp {
			self = formatPct(share(selfW, grand))
		}
		self = padLeft(self, pctWidth)
	}
	if c.metric {
		switch {
		case p.diff:
			// As pprof's -diff_base: the weight here minus the base's.
			met = formatSigned(formatMetric(p.metric, p.unit, total-cmpTotal), total-cmpTotal)
		case p.metric != "calls" || !p.noCalls[g.fn]:
			met = formatMetric(p.metric, p.unit, total)
		}
		met = padLeft(met, c.metricW)
	}
	var d float64
	if c.delta {
		if p.cmpSelf != nil {
			d = totalPct - share(cmpTotal, p.cmpGrand)
			delta = formatDelta(d)
		}
		delta = padLeft(delta, deltaWidth)
	}

	// The name cell: indentation (capped so deep rows keep a readable name), the fold
	// glyph, the name, the inline marker and the call site, cut to what fits.
	indent := indentWidth(int(r.depth), c.nameW)
	glyph := "  "
	switch {
	case r.open:
		glyph = "▾ "
	case g.hasKids():
		glyph = "▸ "
	}
	names := p.shorts
	if t.fullNames {
		names = p.fulls
	}
	name := rowName(p, g, names)
	var marker, site string
	if g.inlined {
		marker = " [inl]"
	}
	if t.mode.split {
		site = siteText(p, g)
	}
	room := c.nameW
	cut := func(s string) string {
		if room <= 0 || s == "" {
			return ""
		}
		if w := cellWidth(s); w <= room {
			room -= w
			return s
		}
		s = ansi.Truncate(s, room, "…")
		room -= ansi.StringWidth(s)
		return s
	}
	indentS := cut(strings.Repeat(" ", indent))
	glyphS := cut(glyph)
	if r.links != nil && room > 0 {
		name = chainText(rowName(p, head, names), name, len(r.links), room, p.process[head.fn])
	}
	nameS := cut(name)
	markerS := cut(marker)
	siteS := cut(site)

	if cursor {
		var b strings.Builder
		b.WriteString(tot)
		for _, s := range []string{self, met, delta} {
			if s != "" {
				b.WriteString(" " + s)
			}
		}
		b.WriteString("  " + indentS + glyphS + nameS + markerS + siteS)
		line := ansi.Truncate(b.String(), t.width, "")
		if w := ansi.StringWidth(line); w < t.width {
			line += strings.Repeat(" ", t.width-w)
		}
		return st.Cursor.Render(line)
	}

	rs := st.reduced()
	var b strings.Builder
	b.Grow(t.width + 64)
	pctStyle := rs.percent
	switch {
	case totalPct >= 50:
		pctStyle = rs.hot
	case totalPct >= 10:
		pctStyle = rs.warm
	}
	pctStyle.write(&b, tot)
	if self != "" {
		b.WriteByte(' ')
		rs.percent.write(&b, self)
	}
	if met != "" {
		b.WriteByte(' ')
		rs.metric.write(&b, met)
	}
	if delta != "" {
		ds := rs.percent
		switch {
		case d >= 0.05:
			ds = rs.deltaUp
		case d <= -0.05:
			ds = rs.deltaDn
		}
		b.WriteByte(' ')
		ds.write(&b, delta)
	}
	b.WriteString("  ")
	b.WriteString(indentS)
	rs.glyph.write(&b, glyphS)
	if nameS != "" {
		ns := rs.name
		if t.search.matches(g) || slices.ContainsFunc(r.links, t.search.matches) {
			ns = rs.match
		}
		ns.write(&b, nameS)
	}
	rs.inlined.write(&b, markerS)
	rs.callSite.write(&b, siteS)
	// The width is known from the parts, without measuring the styled line.
	w := cellWidth(tot) + 2 + c.nameW - room
	for _, s := range []string{self, met, delta} {
		if s != "" {
			w += 1 + cellWidth(s)
		}
	}
	line := b.String()
	if w > t.width {
		// The fixed columns alone can be wider than a very narrow pane.
		line = ansi.Truncate(line, t.width, "")
	} else if t.padRows && w < t.width {
		line += strings.Repeat(" ", t.width-w)
	}
	return line
}

// pad fills s (unstyled) to the pane's width when rows are padded.
func (t *treePane) pad(s string) string {
	if !t.padRows {
		return s
	}
	if w := ansi.StringWidth(s); w < t.width {
		s += strings.Repeat(" ", t.width-w)
	}
	return s
}

// cellWidth is the width of s in cells, quickly for ASCII.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// siteText is where the row's call was made: file:line when known, else the address.
func siteText(p *profile, g *group) string {
	switch {
	case g.line > 0 && p.files[g.siteFn] != "":
		return " @" + printable(path.Base(p.files[g.siteFn])) + ":" + strconv.Itoa(int(g.line))
	case g.line > 0:
		return " @line " + strconv.Itoa(int(g.line))
	case g.site != 0:
		return " @0x" + strconv.FormatUint(g.site, 16)
	}
	return ""
}

// padLeft right-aligns s in w cells.
func padLeft(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// rowName is g's name in a row: its function's, or for processes merged by name
// their comm and how many they are.
func rowName(p *profile, g *group, names []string) string {
	switch {
	case g.procs == 1:
		return p.comms[g.fn]
	case g.procs > 1:
		return p.comms[g.fn] + " (" + strconv.Itoa(g.procs) + " processes)"
	case g.proc != 0 && g.byName:
		return names[g.fn] + " · " + p.comms[g.proc]
	case g.proc != 0:
		return names[g.fn] + " · " + p.shorts[g.proc]
	}
	return names[g.fn]
}
