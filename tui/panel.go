package tui

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The counters panel's place on the screen (see Model.layout).
const (
	// panelLines is what the panel wants below the tree: the counter, the parameters,
	// up to five threads (four when stacks are truncated), the latency, its histogram
	// and where truncated stacks stop.
	panelLines = 9
	// panelMinLines is the smallest panel worth showing; below it the panel is hidden.
	panelMinLines = 3
	// treeMinLines is what the tree keeps when the panel is below it: the column titles
	// and three rows.
	treeMinLines = 4
	// sideMinWidth is the width from which the panel sits to the right of the tree, as
	// tall as the tree, rather than below it.
	sideMinWidth = 150
	// sideMaxWidth is the widest the panel gets beside the tree.
	sideMaxWidth = 72
	// sideRule separates the tree from the panel beside it.
	sideRule = "│ "
)

// Limits of the thread lines.
const (
	threadNameWidth = 16 // a thread name is cut to this many cells
	minSparkWidth   = 4  // narrower than this, a thread line has no sparkline
	histLabel       = "hist"
	latencyLabel    = "latency"
	stopsLabel      = "truncated"
)

// sparkRunes are the eight levels of a sparkline, lowest first.
var sparkRunes = [...]rune{'▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// countersPanel draws the Snapshot's Counters: where call counts come from and what they
// cost, the parameters, each thread's call density over time as a sparkline, and the
// sampling latency. A frame costs the lines shown and the points on them.
type countersPanel struct {
	st            *Styles
	width, height int
	c             *Counters
}

func (p *countersPanel) SetSize(w, h int) { p.width, p.height = max(w, 0), max(h, 0) }

func (p *countersPanel) set(c *Counters) { p.c = c }

// View draws as many lines as the height allows, each cut to the width.
func (p *countersPanel) View() string {
	if p.width <= 0 || p.height <= 0 {
		return ""
	}
	lines := p.lines()
	if len(lines) > p.height {
		lines = lines[:p.height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, p.width, "…")
	}
	return strings.Join(lines, "\n")
}

// lines are the panel's lines, uncut. The height is shared out by importance: the
// counter first, then the busiest thread, the latency, the parameters, the histogram,
// where truncated stacks stop; then the rest of the counter's description (the header
// has only a brief of it), more threads, and the rest of the parameters and of the
// stops. They are drawn in reading order.
func (p *countersPanel) lines() []string {
	st, c := p.st, p.c
	if c == nil {
		return []string{st.Empty.Render("no counters in this profile")}
	}
	n := p.height
	take := func() int {
		if n > 0 {
			n--
			return 1
		}
		return 0
	}
	// more gives a part that has lines up to want of them in all.
	more := func(have, want int) int {
		if have == 0 {
			return 0
		}
		k := max(0, min(n, want-have))
		n -= k
		return have + k
	}
	take()
	counterLines := 1 // View draws nothing in no lines: there is this one
	threadLines := take()
	haveLat := take() > 0
	paramsLines := take()
	hist := p.histLine()
	haveHist := hist != "" && take() > 0
	stopsLines := 0
	if len(c.Stops) > 0 {
		stopsLines = take()
	}
	offLines := 0
	if c.OffCPU != "" {
		offLines = take()
	}
	memLines := 0
	if c.Memory != "" {
		memLines = take()
	}
	jitLines := 0
	if c.JIT != "" {
		jitLines = take()
	}
	pyLines := 0
	if c.Python != "" {
		pyLines = take()
	}
	counterLines = more(counterLines, len(p.counterLines(0)))
	counted := hasPoints(c.Density)
	if counted {
		threadLines = more(threadLines, len(c.Density))
	}
	paramsLines = more(paramsLines, len(p.paramsLines(0)))
	stopsLines = more(stopsLines, len(p.stopsLines(0)))
	offLines = more(offLines, len(p.offCPULines(0)))
	memLines = more(memLines, len(p.memoryLines(0)))
	jitLines = more(jitLines, len(p.labelled("JIT", c.JIT, 0)))
	pyLines = more(pyLines, len(p.labelled("python", c.Python, 0)))

	out := p.counterLines(counterLines)
	if paramsLines > 0 {
		out = append(out, p.paramsLines(paramsLines)...)
	}
	if threadLines > 0 {
		if counted {
			out = append(out, p.threadLines(threadLines)...)
		} else {
			out = append(out, st.Empty.Render("no call counts yet"))
		}
	}
	if haveLat {
		out = append(out, p.latencyLine())
	}
	if haveHist {
		out = append(out, hist)
	}
	if stopsLines > 0 {
		out = append(out, p.stopsLines(stopsLines)...)
	}
	if offLines > 0 {
		out = append(out, p.offCPULines(offLines)...)
	}
	if memLines > 0 {
		out = append(out, p.memoryLines(memLines)...)
	}
	if jitLines > 0 {
		out = append(out, p.labelled("JIT", c.JIT, jitLines)...)
	}
	if pyLines > 0 {
		out = append(out, p.labelled("python", c.Python, pyLines)...)
	}
	return out
}

// memoryLines are what the profile holds in memory, wrapped between its parts in at
// most most lines.
func (p *countersPanel) memoryLines(most int) []string {
	return p.labelled("memory", p.c.Memory, most)
}

// offCPULines are the context switches: their rate, how their stacks are taken, the
// time off the CPU and what was lost, wrapped between clauses in at most most lines.
func (p *countersPanel) offCPULines(most int) []string {
	return p.labelled("off-CPU", p.c.OffCPU, most)
}

// labelled is label and the comma-separated parts of text, wrapped between parts in
// at most most lines.
func (p *countersPanel) labelled(label, text string, most int) []string {
	st := p.st
	cells := []cell{p.cell(st.Label, label, "")}
	for i, part := range strings.Split(printable(oneLine(text)), ", ") {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		cells = append(cells, p.cell(st.Value, part, sep))
	}
	return p.wrap(cells, len(label)+1, most)
}

// stopsLines say where the stacks that do not reach a thread's entry stop: module,
// share of all samples and reason, commonest first, in at most most lines (0: as many as
// it takes).
func (p *countersPanel) stopsLines(most int) []string {
	st := p.st
	cells := []cell{p.cell(st.Label, stopsLabel, "")}
	for i, s := range p.c.Stops {
		sep := " · "
		if i == 0 {
			sep = " "
		}
		cells = append(cells, cell{
			s: st.Name.Render(printable(oneLine(s.Module))) + " " + st.Value.Render(formatPct(s.Percent)) +
				" " + st.Label.Render(printable(oneLine(s.Why))),
			w:   ansi.StringWidth(printable(oneLine(s.Module)) + " " + formatPct(s.Percent) + " " + printable(oneLine(s.Why))),
			sep: sep,
		})
	}
	return p.wrap(cells, len(stopsLabel)+1, most)
}

// counterLines are the call counter, its cost and hits first, then its description
// wrapped under them: in at most most lines (0: as many as it takes), the last ending
// in "…" when the description goes on.
func (p *countersPanel) counterLines(most int) []string {
	st, c := p.st, p.c
	// The label says what "call counter: " would.
	src := strings.TrimPrefix(printable(oneLine(c.Source)), "call counter: ")
	if src == "" {
		src = "none"
	}
	var cost string
	costStyle := st.Value
	switch {
	case c.Cost < 0 || math.IsNaN(c.Cost):
		cost = "cost unknown"
		costStyle = st.Label
	default:
		cost = "cost " + formatCost(c.Cost) + " of target CPU"
		if c.Cost >= 0.05 { // counting this much slows the target enough to bias it
			costStyle = st.Warn
		}
	}
	hits := formatCount(float64(c.Hits))
	cells := []cell{
		p.cell(st.Label, "counter", ""),
		p.cell(costStyle, cost, " "),
		{s: st.Label.Render("hits") + " " + st.Value.Render(hits), w: len("hits ") + ansi.StringWidth(hits), sep: "  "},
	}
	for i, word := range strings.Fields(src) {
		sep := " "
		if i == 0 {
			sep = "  "
		}
		cells = append(cells, p.cell(st.Value, word, sep))
	}
	return p.wrap(cells, len("counter "), most)
}

// formatCost is a share (0..1) in percent, with two decimals below 1%.
func formatCost(share float64) string {
	pct := 100 * share
	if pct < 1 && pct > 0 {
		return strconv.FormatFloat(pct, 'f', 2, 64) + "%"
	}
	return formatPct(pct)
}

// paramsLines are the parameters in force and the width of a density bucket, wrapped
// between parameters in at most most lines (0: as many as it takes).
func (p *countersPanel) paramsLines(most int) []string {
	st, c := p.st, p.c
	params := printable(oneLine(c.Params))
	if params == "" {
		params = "none"
	}
	cells := []cell{p.cell(st.Label, "params", "")}
	for i, param := range strings.Split(params, " · ") {
		sep := " · "
		if i == 0 {
			sep = " "
		}
		cells = append(cells, p.cell(st.Value, param, sep))
	}
	if c.BucketSeconds > 0 {
		b := formatTime(c.BucketSeconds * 1e9)
		cells = append(cells, cell{s: st.Label.Render("bucket") + " " + st.Value.Render(b), w: len("bucket ") + ansi.StringWidth(b), sep: "  "})
	}
	return p.wrap(cells, len("params "), most)
}

// cell is a piece of a panel line that is never cut: a figure and its label, a word, a
// parameter. sep goes before it unless it starts a line.
type cell struct {
	s   string // styled
	w   int    // its width
	sep string
}

// cell is s in style, after sep.
func (p *countersPanel) cell(style lipgloss.Style, s, sep string) cell {
	return cell{s: style.Render(s), w: ansi.StringWidth(s), sep: sep}
}

// wrap lays cells out on lines of the panel's width, whole, lines after the first
// indented by indent cells; in at most most lines (0: as many as it takes), the last of
// which ends in "…" when cells are left over. A cell wider than a line has one to itself
// (and View cuts it).
func (p *countersPanel) wrap(cells []cell, indent, most int) []string {
	var lines [][]cell
	var widths []int
	for _, c := range cells {
		if k := len(lines) - 1; k >= 0 && widths[k]+ansi.StringWidth(c.sep)+c.w <= p.width {
			lines[k] = append(lines[k], c)
			widths[k] += ansi.StringWidth(c.sep) + c.w
			continue
		}
		w := c.w
		if len(lines) > 0 {
			w += indent
		}
		c.sep = ""
		lines, widths = append(lines, []cell{c}), append(widths, w)
	}
	if most > 0 && len(lines) > most {
		k := most - 1
		lines, widths = lines[:most], widths[:most]
		for len(lines[k]) > 1 && widths[k]+len(" …") > p.width {
			last := lines[k][len(lines[k])-1]
			lines[k] = lines[k][:len(lines[k])-1]
			widths[k] -= ansi.StringWidth(last.sep) + last.w
		}
		lines[k] = append(lines[k], cell{s: p.st.Label.Render("…"), w: 1, sep: " "})
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		var b strings.Builder
		if i > 0 {
			b.WriteString(strings.Repeat(" ", indent))
		}
		for _, c := range l {
			if strings.TrimSpace(c.sep) != "" {
				b.WriteString(p.st.Label.Render(c.sep))
			} else {
				b.WriteString(c.sep)
			}
			b.WriteString(c.s)
		}
		out[i] = b.String()
	}
	return out
}

// hasPoints reports whether any series has a density to show.
func hasPoints(ds []ThreadSeries) bool {
	for _, d := range ds {
		for _, v := range d.Points {
			if finite(v) {
				return true
			}
		}
	}
	return false
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// threadLines draws k lines of threads, busiest first: all of them if they fit, else
// k-1 and a line saying how many more there are.
func (p *countersPanel) threadLines(k int) []string {
	st, c := p.st, p.c
	shown, more := c.Density, 0
	if len(shown) > k {
		if k >= 2 {
			shown = shown[:k-1]
		} else {
			shown = shown[:k]
		}
		more = len(c.Density) - len(shown)
	}
	names := make([]string, len(shown))
	tids := make([]string, len(shown))
	vals := make([]string, len(shown))
	nameW, tidW, valW := 0, 0, 0
	for i, d := range shown {
		names[i] = ansi.Truncate(printable(d.Name), threadNameWidth, "…")
		tids[i] = strconv.FormatUint(uint64(d.TID), 10)
		nameW = max(nameW, ansi.StringWidth(names[i]))
		tidW = max(tidW, len(tids[i]))
		vals[i] = "–"
		if v, ok := latest(d.Points); ok {
			vals[i] = formatRate(v)
			if c.DensityUnit != "" {
				vals[i] += " " + printable(oneLine(c.DensityUnit))
			}
		}
		valW = max(valW, ansi.StringWidth(vals[i]))
	}
	labelW := tidW // the name, then the TID right-aligned
	if nameW > 0 {
		labelW += nameW + 1
	}
	sparkW := p.width - labelW - valW - 2
	if sparkW < minSparkWidth {
		sparkW = 0
	}
	// One scale for every thread shown, over the points on screen, so that the
	// threads compare.
	windows := make([][]float64, len(shown))
	for i, d := range shown {
		windows[i] = newest(d.Points, sparkW)
	}
	sc := scaleOf(windows...)
	out := make([]string, 0, k)
	for i := range shown {
		var b strings.Builder
		if nameW > 0 {
			b.WriteString(st.Name.Render(names[i]) + strings.Repeat(" ", nameW-ansi.StringWidth(names[i])+1))
		}
		b.WriteString(st.Label.Render(padLeft(tids[i], tidW)) + " ")
		if sparkW > 0 {
			b.WriteString(st.Spark.Render(sparkline(windows[i], sparkW, sc)) + " ")
		}
		b.WriteString(st.Metric.Render(padLeft(vals[i], valW)))
		out = append(out, b.String())
	}
	if more > 0 && len(out) < k {
		word := " more threads"
		if more == 1 {
			word = " more thread"
		}
		out = append(out, st.Label.Render("+"+strconv.Itoa(more)+word))
	}
	return out
}

// latest is the newest point that has a value.
func latest(pts []float64) (float64, bool) {
	for i := len(pts) - 1; i >= 0; i-- {
		if finite(pts[i]) {
			return pts[i], true
		}
	}
	return 0, false
}

// newest is the last n points (all of them if there are fewer).
func newest(pts []float64, n int) []float64 {
	if n <= 0 {
		return nil
	}
	return pts[max(0, len(pts)-n):]
}

// sparkScale maps values onto the eight levels: lo (the smallest positive value) and
// below to the lowest, hi (the largest) to the highest.
type sparkScale struct{ lo, hi float64 }

// scaleOf is the scale of all the points of every series together.
func scaleOf(series ...[]float64) sparkScale {
	lo, hi := math.Inf(1), 0.0
	for _, s := range series {
		for _, v := range s {
			if !finite(v) {
				continue
			}
			hi = max(hi, v)
			if v > 0 {
				lo = min(lo, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo = 0
	}
	return sparkScale{lo: lo, hi: hi}
}

// glyph is v's level; a missing value (NaN) is a space.
func (s sparkScale) glyph(v float64) rune {
	switch {
	case !finite(v):
		return ' '
	case v >= s.hi && s.hi > 0:
		return sparkRunes[len(sparkRunes)-1]
	case v <= s.lo || s.hi <= s.lo:
		return sparkRunes[0]
	}
	i := int(math.Round((v - s.lo) / (s.hi - s.lo) * float64(len(sparkRunes)-1)))
	return sparkRunes[max(0, min(i, len(sparkRunes)-1))]
}

// sparkline draws the newest width points of pts under sc, right-aligned: the newest
// point is in the last cell, and a series shorter than width starts with spaces.
func sparkline(pts []float64, width int, sc sparkScale) string {
	if width <= 0 {
		return ""
	}
	pts = newest(pts, width)
	var b strings.Builder
	b.Grow(width + 3*len(pts))
	b.WriteString(strings.Repeat(" ", width-len(pts)))
	for _, v := range pts {
		b.WriteRune(sc.glyph(v))
	}
	return b.String()
}

// latencyLine is the latency distribution's summary.
func (p *countersPanel) latencyLine() string {
	st, l := p.st, p.c.Latency
	n := "n=" + formatCount(float64(l.N))
	if l.N == 0 {
		return st.Label.Render(latencyLabel) + " " + st.Value.Render(n)
	}
	kvs := []struct{ k, v string }{
		{"min", formatDuration(l.Min)}, {"median", formatDuration(l.Median)},
		{"mean", formatDuration(l.Mean)}, {"max", formatDuration(l.Max)},
	}
	// Two spaces between the figures, or one where two would leave one out; where even
	// one does, the minimum goes, then the mean, then the maximum: never a figure cut.
	width := func(sep int) int {
		w := len(latencyLabel) + 1 + len(n)
		for _, kv := range kvs {
			w += sep + len(kv.k) + 1 + ansi.StringWidth(kv.v)
		}
		return w
	}
	sep := "  "
	if width(2) > p.width {
		sep = " "
	}
	for _, k := range []string{"min", "mean", "max", "median"} {
		if width(len(sep)) <= p.width {
			break
		}
		kvs = slices.DeleteFunc(kvs, func(kv struct{ k, v string }) bool { return kv.k == k })
	}
	var b strings.Builder
	b.WriteString(st.Label.Render(latencyLabel) + " " + st.Value.Render(n))
	for _, kv := range kvs {
		b.WriteString(sep + st.Label.Render(kv.k) + " " + st.Value.Render(kv.v))
	}
	return b.String()
}

// histLine is the latency histogram as one sparkline between its lowest and highest
// edge, or "" if there is none or it does not fit the width.
func (p *countersPanel) histLine() string {
	st, l := p.st, p.c.Latency
	if len(l.Hist) == 0 || len(l.Edges) != len(l.Hist)+1 {
		return ""
	}
	lo, hi := formatDuration(l.Edges[0]), formatDuration(l.Edges[len(l.Edges)-1])
	prefix := histLabel + strings.Repeat(" ", len(latencyLabel)-len(histLabel)+1)
	room := p.width - ansi.StringWidth(prefix) - ansi.StringWidth(lo) - ansi.StringWidth(hi) - 2
	if room < min(minSparkWidth, len(l.Hist)) {
		return ""
	}
	bars := histBars(l.Hist, room)
	return st.Label.Render(prefix) + st.Value.Render(lo) + " " + st.Spark.Render(bars) + " " + st.Value.Render(hi)
}

// histBars draws counts in at most room cells: adjacent buckets are summed when there
// are more than fit, and each bucket is widened (up to 3 cells) when there is room.
// Bars are proportional to the counts; an empty bucket is a space.
func histBars(counts []uint64, room int) string {
	n := len(counts)
	if n == 0 || room <= 0 {
		return ""
	}
	per, rep := 1, 1
	if n > room {
		per = (n + room - 1) / room
	} else {
		rep = min(room/n, 3)
	}
	vals := make([]float64, 0, (n+per-1)/per)
	for i := 0; i < n; i += per {
		var sum uint64
		for _, c := range counts[i:min(i+per, n)] {
			sum += c
		}
		v := float64(sum)
		if sum == 0 {
			v = math.NaN()
		}
		vals = append(vals, v)
	}
	hi := 0.0
	for _, v := range vals {
		if finite(v) {
			hi = max(hi, v)
		}
	}
	var b strings.Builder
	for _, v := range vals {
		g := ' '
		if finite(v) && hi > 0 {
			// Each level is an eighth of the highest bar.
			l := int(math.Ceil(v/hi*float64(len(sparkRunes)))) - 1
			g = sparkRunes[max(0, min(l, len(sparkRunes)-1))]
		}
		for range rep {
			b.WriteRune(g)
		}
	}
	return b.String()
}

// formatDuration is a latency in ns: "0ns", "850ns", "4.20µs", "12.0ms"; "?" if unknown.
func formatDuration(ns float64) string {
	switch {
	case !finite(ns):
		return "?"
	case ns == 0:
		return "0ns"
	}
	return formatTime(ns)
}

// formatRate is a density with three significant digits: "0.125", "12.3", "4.56k".
func formatRate(x float64) string {
	switch a := math.Abs(x); {
	case !finite(x):
		return "?"
	case a == 0:
		return "0"
	case a >= 999.5:
		return formatCount(x)
	case a >= 0.9995:
		return sig3(x)
	case a >= 0.0005:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return "<0.001"
}
