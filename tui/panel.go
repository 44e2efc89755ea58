package tui

import (
	"math"
	"strconv"
	"strings"

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
// where truncated stacks stop, and then more threads; they are drawn in reading order.
func (p *countersPanel) lines() []string {
	st, c := p.st, p.c
	if c == nil {
		return []string{st.Empty.Render("no counters in this profile")}
	}
	n := p.height
	take := func() bool {
		if n > 0 {
			n--
			return true
		}
		return false
	}
	take() // the counter line
	threadLines := 0
	if take() {
		threadLines = 1
	}
	haveLat := take()
	haveParams := take()
	hist := p.histLine()
	haveHist := hist != "" && take()
	haveStops := len(c.Stops) > 0 && take()
	counted := hasPoints(c.Density)
	if counted {
		threadLines = min(threadLines+n, len(c.Density))
	}

	out := []string{p.counterLine()}
	if haveParams {
		out = append(out, p.paramsLine())
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
	if haveStops {
		out = append(out, p.stopsLine())
	}
	return out
}

// stopsLine says where the stacks that do not reach a thread's entry stop: module,
// share of all samples and reason, commonest first.
func (p *countersPanel) stopsLine() string {
	st := p.st
	var b strings.Builder
	b.WriteString(st.Label.Render(stopsLabel))
	for i, s := range p.c.Stops {
		if i > 0 {
			b.WriteString(st.Label.Render(" ·"))
		}
		b.WriteString(" " + st.Name.Render(printable(oneLine(s.Module))) + " " +
			st.Value.Render(formatPct(s.Percent)) + " " + st.Label.Render(printable(oneLine(s.Why))))
	}
	return b.String()
}

// counterLine is the call counter, its cost and its hits. A long counter name is cut
// rather than the cost and hits after it.
func (p *countersPanel) counterLine() string {
	st, c := p.st, p.c
	src := printable(oneLine(c.Source))
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
	label := "counter "
	tailW := 2 + ansi.StringWidth(cost) + 2 + len("hits ") + ansi.StringWidth(hits)
	if room := p.width - len(label) - tailW; room >= 12 {
		src = ansi.Truncate(src, room, "…")
	}
	return st.Label.Render(label) + st.Value.Render(src) + "  " + costStyle.Render(cost) +
		"  " + st.Label.Render("hits") + " " + st.Value.Render(hits)
}

// formatCost is a share (0..1) in percent, with two decimals below 1%.
func formatCost(share float64) string {
	pct := 100 * share
	if pct < 1 && pct > 0 {
		return strconv.FormatFloat(pct, 'f', 2, 64) + "%"
	}
	return formatPct(pct)
}

// paramsLine is the parameters in force and the width of a density bucket.
func (p *countersPanel) paramsLine() string {
	st, c := p.st, p.c
	params := printable(oneLine(c.Params))
	if params == "" {
		params = "none"
	}
	s := st.Label.Render("params") + " " + st.Value.Render(params)
	if c.BucketSeconds > 0 {
		s += "  " + st.Label.Render("bucket") + " " + st.Value.Render(formatTime(c.BucketSeconds*1e9))
	}
	return s
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
	// Two spaces between the figures, or one where two would cut the maximum off.
	w := len(latencyLabel) + 1 + len(n)
	for _, kv := range kvs {
		w += 2 + len(kv.k) + 1 + ansi.StringWidth(kv.v)
	}
	sep := "  "
	if w > p.width {
		sep = " "
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
