package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// headerLines is how many lines the header wants; Model.layout decides how many it gets.
const headerLines = 4

// The header is items laid out on its lines. Each item is a fact with a home line, a
// priority and a place in reading order (the order items are made in). The home lines
// are one concern each:
//
//	1 the session and its sampling:   target  rate  samples  lost  throttled  state  threads
//	2 the stacks and their correction: unwound  density  latency  alpha  vs comparison  overlap  folded  log dropped
//	3 the call counter:                trigger  probe cost  counter
//	4 the view:                        view  thread  focus  search
//
// A line takes its items most important first, each whole, while they fit (a smaller,
// less important item takes the room a larger one left, unless an item went to the
// next line: none passes it there): the priorities
// (prio* below) keep the top facts (target, rate, samples, lost, unwound, the corrections,
// overlap) at 80 columns and let the rest go from the least important up. An item that
// has no room is dropped, except the top facts and the warnings (lost samples,
// throttling, folded contexts, dropped log entries, a state other than live), which flow
// to the next line: they are read there at its start, in reading order. A header given
// fewer lines (a small terminal) puts the later concerns on its last line, where they
// compete by priority.
//
// Figures are never cut. Only free text is, with "…": the target's command (never its
// pid), the counter's description, the focus path and the search query; each wants a
// few cells (least) and grows into the room the line has left, the most important
// first. Longer text (the counter's description, "vs uncorrected samples") shows where
// the width allows; the counters panel has the description in full.
//
// A live session with everything to say, at 80 columns:
//
//	cctop workload… (pid 2854)  1003/s  3592 samples  lost 12  throttled 5  live
//	unwound 97.3%  density on  latency on  alpha 0  overlap 84.2%
//	folded 1234 contexts  probe cost 0.7%  counter uprobes on 4 functions
//	view top-down  thread all
//
// and at 120, where the counter's description still does not fit (at 200 it shows up
// to the last of its clauses that does):
//
//	cctop workload density -duration… (pid 2854)  1003/s  3592 samples  lost 12  throttled 5  live  6 threads
//	unwound 97.3%  density on  latency on  alpha 0  vs uncorrected samples  overlap 84.2%  folded 1234 contexts
//	trigger time  probe cost 0.7%  counter uprobes on 4 functions
//	view top-down  thread all

// The header's home lines.
const (
	lineSession = iota
	lineStacks
	lineCounter
	lineView
)

// Header priorities, most important first: a full line lets its items go from the
// bottom of this list up.
const (
	prioTarget = iota
	prioRate
	prioSamples
	prioLost
	prioUnwound
	prioCorrection // density, latency, alpha
	prioOverlap
	prioWarning // throttled, folded, log dropped, a paused or stopped target
	prioView    // the view, a thread filter, the search
	prioProbeCost
	prioCounter
	prioTrigger
	prioFocus
	prioComparison // "vs uncorrected samples": what overlap and Δ compare with
	prioThreads
	prioState  // live, file
	prioAllThr // "thread all": no filter
)

// itemSep separates a line's items.
const itemSep = "  "

// viewInfo is what the header says about the view, besides the Source's Header.
type viewInfo struct {
	view     string
	split    bool
	physical bool     // inlined frames merged into their physical frames
	thread   string   // "all" or the filtered thread
	focus    []string // focused context, root side first
	search   string   // the search query, "" when no search
	matches  int      // contexts the search matches
}

// headerBar draws the session's state.
type headerBar struct {
	st            *Styles
	width, height int
	h             Header
	v             viewInfo
}

func (hb *headerBar) SetSize(w, h int) { hb.width, hb.height = max(w, 0), max(h, 0) }

func (hb *headerBar) set(h Header, v viewInfo) { hb.h, hb.v = h, v }

// item is one fact of the header: "label value", or a value alone.
type item struct {
	line, prio int
	label      string
	value      string // in full
	title      bool   // the target
	warn       bool   // biases the profile
	flows      bool   // goes to the next line rather than away when its line is full
	// room is the cells the value is measured at when more than its width, so that a
	// figure whose width changes from frame to frame (999/s, 1003/s) moves nothing.
	room int
	// fit is, for free text, the value cut to at most w cells ("" when w is too few
	// to say anything); nil for a value shown whole or not at all. least is the
	// fewest cells fit wants.
	fit   func(w int) string
	least int
}

// fact is an item shown whole or not at all.
func fact(line, prio int, label, value string) item {
	return item{line: line, prio: prio, label: label, value: value}
}

// text is an item of free text, cut to fit in as few as least cells.
func text(line, prio int, label, value string, least int, fit func(int) string) item {
	return item{line: line, prio: prio, label: label, value: value, least: least, fit: fit}
}

// warnIf marks the item a warning when b: drawn in the warning style, and flowing to the
// next line rather than dropped, so that it stays on screen.
func (it item) warnIf(b bool) item {
	it.warn = b
	it.flows = it.flows || b
	return it
}

func (it item) flowing() item { it.flows = true; return it }

func (it item) measured(room int) item { it.room = room; return it }

func (it item) labelWidth() int {
	if it.label == "" {
		return 0
	}
	return ansi.StringWidth(it.label) + 1
}

// wants is the fewest cells the value takes; full is the most.
func (it item) wants() int {
	if it.fit != nil {
		return min(it.least, it.full())
	}
	return max(ansi.StringWidth(it.value), it.room)
}

func (it item) full() int { return ansi.StringWidth(it.value) }

// items are the header's facts in reading order. An item added here needs a home line
// and a priority; the layout does the rest.
func (hb *headerBar) items() []item {
	h, v := hb.h, hb.v
	count := func(x uint64) string { return formatCount(float64(x)) }

	target := printable(cmp.Or(h.Target, "no target"))
	keep := 24 // the command's first words; on a header of one line, the figures come first
	if hb.height == 1 {
		keep = hb.width / 5
	}
	fitT, leastT := targetFit(target, keep)
	// A saved profile says what it holds; the live-only facts (rate,
	// threads, unwound, the corrections, the counter) only where it
	// carries them.
	f := h.File
	live := f == nil
	its := []item{text(lineSession, prioTarget, "", target, leastT, fitT)}
	its[0].title = true
	if live {
		its = append(its, fact(lineSession, prioRate, "", formatCount(h.Rate)+"/s").measured(len("1003/s")).flowing())
	} else {
		its = append(its, fileItems(f)...)
	}
	its = append(its, fact(lineSession, prioSamples, "", count(h.Samples)+" samples").flowing())
	if live || h.Lost > 0 {
		its = append(its, fact(lineSession, prioLost, "lost", count(h.Lost)).warnIf(h.Lost > 0).flowing())
	}
	if h.Throttled > 0 {
		its = append(its, fact(lineSession, prioWarning, "throttled", count(h.Throttled)).warnIf(true))
	}
	if h.Waiting > 0 {
		its = append(its, fact(lineSession, prioWarning, "loading symbols", count(h.Waiting)+" samples wait"))
	}
	switch h.State {
	case "":
	case "live", "file":
		its = append(its, fact(lineSession, prioState, "", h.State))
	default:
		// Paused or stopped, the numbers stand still: a reason to keep it on screen.
		it := fact(lineSession, prioWarning, "", printable(h.State)).flowing()
		its = append(its, it.warnIf(strings.HasPrefix(h.State, "target ")))
	}
	if live || h.Threads > 0 {
		its = append(its, fact(lineSession, prioThreads, "", strconv.Itoa(h.Threads)+" threads"))
	}

	unwound := fact(lineStacks, prioUnwound, "unwound", "?").flowing()
	if h.Unwound >= 0 {
		// Stacks that stop short of a root put their samples under [truncated]: a low
		// share of full stacks is worth a warning.
		unwound = fact(lineStacks, prioUnwound, "unwound", formatPct(h.Unwound)).
			measured(len("100.0%")).warnIf(h.Unwound < 90).flowing()
	}
	if live || h.Unwound >= 0 {
		its = append(its, unwound)
	}
	if live || f.Corrections {
		its = append(its,
			densityFact(h),
			fact(lineStacks, prioCorrection, "latency", onOff(h.Latency)).flowing(),
			fact(lineStacks, prioCorrection, "flow", onOff(h.Flow)).flowing(),
			fact(lineStacks, prioCorrection, "alpha", strconv.FormatFloat(h.Alpha, 'g', 4, 64)).flowing(),
		)
	}
	if !live {
		its = append(its, fileTextItems(f)...)
	}
	if h.Mode != "" {
		its = append(its, fact(lineStacks, prioCorrection, "mode", printable(h.Mode)).flowing())
		if h.OnCPU >= 0 {
			its = append(its, fact(lineStacks, prioCorrection, "on-CPU", formatPct(h.OnCPU)).measured(len("100.0%")).flowing())
		}
		if h.IdleHidden > 0 {
			its = append(its, fact(lineStacks, prioCorrection, "idle hidden", strconv.Itoa(h.IdleHidden)).flowing())
		}
	}
	if h.Comparison != "" {
		its = append(its, fact(lineStacks, prioComparison, "vs", printable(h.Comparison)))
		if h.Overlap >= 0 {
			its = append(its, fact(lineStacks, prioOverlap, "overlap", formatPct(h.Overlap)).flowing())
		}
	}
	// What the memory bounds cost.
	if h.Folded > 0 {
		its = append(its, fact(lineStacks, prioWarning, "folded", count(h.Folded)+" contexts").warnIf(true))
	}
	if h.LogDropped > 0 {
		its = append(its, fact(lineStacks, prioWarning, "log dropped", count(h.LogDropped)).warnIf(true))
	}

	if h.Runtime != "" {
		rt := printable(h.Runtime)
		fit := func(w int) string {
			if ansi.StringWidth(rt) <= w {
				return rt
			}
			if s := cutClauses(rt, ';', w); s != "" {
				return s
			}
			return cutFree(rt, w)
		}
		// At least its first clause ("python 3.12: perf trampolines
		// on"), or nothing: the summary says it too, and a line it
		// flowed to would hold back the facts after it.
		first, _, _ := strings.Cut(rt, "; ")
		its = append(its, text(lineStacks, prioCorrection, "", rt, ansi.StringWidth(first)+1, fit))
	}
	if h.Trigger != "" {
		tr := printable(h.Trigger)
		if h.TriggerLost > 0 {
			tr += " (a lower bound: " + count(h.TriggerLost) + " lost)"
		}
		its = append(its, fact(lineCounter, prioTrigger, "trigger", tr).warnIf(h.TriggerLost > 0))
	}
	if h.ProbeCost >= 0 {
		// The share of the samples that counting took: as the counters panel's cost, a
		// warning from 5% on.
		its = append(its, fact(lineCounter, prioProbeCost, "probe cost", formatPct(h.ProbeCost)).warnIf(h.ProbeCost >= 5))
	}
	if h.Counted > 0 && h.Density && h.DensityWhy == "" {
		// What density weighs: the samples that carry a count (the coverage rule).
		its = append(its, fact(lineCounter, prioProbeCost, "counted", formatPct(h.Counted)))
	}
	if live || h.Counter != "" || h.CounterBrief != "" {
		its = append(its, counterItem(printable(h.Counter), printable(h.CounterBrief)))
	}
	if h.Export != "" {
		prio := prioState
		if h.ExportWarn {
			prio = prioWarning
		}
		its = append(its, fact(lineSession, prio, "", printable(h.Export)).warnIf(h.ExportWarn).flowing())
	}

	its = append(its, viewItem(v))
	if v.thread == "all" || v.thread == "" {
		its = append(its, fact(lineView, prioAllThr, "thread", cmp.Or(v.thread, "all")))
	} else {
		its = append(its, fact(lineView, prioView, "thread", printable(v.thread)))
	}
	if len(v.focus) > 0 {
		its = append(its, focusItem(v.focus))
	}
	if v.search != "" {
		its = append(its, searchItem(printable(v.search), v.matches))
	}
	return its
}

// counterItem is the call counter: its description in full where the line has room for
// it, else as many of its clauses as fit, else the brief.
func counterItem(long, brief string) item {
	switch {
	case long == "" && brief == "":
		return fact(lineCounter, prioCounter, "counter", "none")
	case long == "":
		long = brief
	case brief == "":
		brief = long
	}
	least := ansi.StringWidth(brief)
	if brief == long {
		least = min(least, 24) // no brief: the description is cut
	}
	return text(lineCounter, prioCounter, "counter", long, least, func(w int) string {
		if ansi.StringWidth(long) <= w {
			return long
		}
		if s := cutClauses(long, ';', w); s != "" && brief != long {
			return s
		}
		return cutFree(brief, w)
	})
}

// viewItem is the view: its kind and how frames are shown.
func viewItem(v viewInfo) item {
	s := v.view
	if v.split {
		s += ", call sites split"
	}
	if v.physical {
		s += ", physical frames"
	}
	// Whole where the line has room, cut only where it is alone on its line.
	return text(lineView, prioView, "view", s, ansi.StringWidth(s), func(w int) string {
		if ansi.StringWidth(s) <= w {
			return s
		}
		return cmp.Or(cutClauses(s, ',', w), cutFree(v.view, w))
	})
}

// focusItem is the focused context: its last three steps where they fit, fewer where
// they do not.
func focusItem(focus []string) item {
	names := make([]string, len(focus))
	for i, n := range focus {
		names[i] = printable(n)
	}
	path := func(k int) string {
		s := strings.Join(names[len(names)-k:], " › ")
		if k < len(names) {
			s = "… › " + s
		}
		return s
	}
	full := path(min(3, len(names)))
	return text(lineView, prioFocus, "focus", full, min(ansi.StringWidth(full), 24), func(w int) string {
		for k := min(3, len(names)); k >= 1; k-- {
			if s := path(k); ansi.StringWidth(s) <= w {
				return s
			}
		}
		return cutFree(path(1), w)
	})
}

// searchItem is the search: the query, cut if need be, and how many contexts match.
func searchItem(query string, n int) item {
	tail := "” " + formatCount(float64(n)) + " contexts"
	s := "“" + query + tail
	least := min(ansi.StringWidth(s), 10+ansi.StringWidth(tail)) // "“" and 8 cells of query
	return text(lineView, prioView, "search", s, least, func(w int) string {
		q := cutFree(query, w-ansi.StringWidth("“"+tail))
		if q == "" {
			return ""
		}
		return "“" + q + tail
	})
}

// targetFit cuts a target as its kind allows: the command of "cmd args (pid 2854)", the
// name of "pid 1234 (python3)", the start of a file name (its directories), never the
// pid. least is the fewest cells worth showing: keep cells of the command (or of the
// file name, 16 at least) and the pid.
func targetFit(s string, keep int) (fit func(int) string, least int) {
	full := ansi.StringWidth(s)
	// The pid and its parentheses stay whole; free is cut.
	pre, free, post := "", s, ""
	switch {
	case strings.HasSuffix(s, ")") && strings.LastIndex(s, " (pid ") > 0:
		i := strings.LastIndex(s, " (pid ")
		if isDigits(s[i+len(" (pid ") : len(s)-1]) {
			free, post = s[:i], s[i:]
		}
	case strings.HasPrefix(s, "pid "):
		i := len("pid ")
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		pre, free = s[:i], s[i:]
	default:
		// A file: its name says more than its directories.
		return func(w int) string { return cutPath(s, w) }, min(full, max(16, keep))
	}
	kept := ansi.StringWidth(pre) + ansi.StringWidth(post)
	return func(w int) string {
		if full <= w {
			return s
		}
		if f := cutFree(free, w-kept); f != "" {
			return pre + f + post
		}
		if kept <= w {
			return strings.TrimSpace(pre + post)
		}
		return ""
	}, min(full, kept+keep)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func hasDigit(s string) bool { return strings.ContainsFunc(s, unicode.IsDigit) }

// cutFree cuts free text to at most w cells at a word's end, with "…", or "" if w is too
// few to say anything. A word with a digit in it is never left cut, nor last before the
// "…": a figure shows whole or not at all. A single word too long for w is cut before
// its first digit.
func cutFree(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w < 2 {
		return ""
	}
	head := ansi.Truncate(s, w-1, "")
	cutWord := !strings.HasPrefix(s[len(head):], " ")
	if i := strings.LastIndexByte(head, ' '); i >= 0 && cutWord {
		head, cutWord = head[:i], false // the word cut in two goes
	}
	for {
		head = strings.TrimRight(head, " ")
		i := strings.LastIndexByte(head, ' ') + 1
		if !hasDigit(head[i:]) {
			break
		}
		if i == 0 && cutWord {
			head = head[:strings.IndexFunc(head, unicode.IsDigit)]
			break
		}
		head = head[:i]
	}
	if head = strings.TrimRightFunc(head, unicode.IsPunct); head == "" {
		return ""
	}
	return head + "…"
}

// cutClauses is s up to the last clause boundary (sep and a space, outside parentheses)
// that fits w cells with " …" after it, or "" if not even its first clause fits.
func cutClauses(s string, sep rune, w int) string {
	best, depth := "", 0
	for i, r := range s {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case sep:
			if depth != 0 || !strings.HasPrefix(s[i+1:], " ") {
				continue
			}
			c := s[:i+1] + " …"
			if ansi.StringWidth(c) > w {
				return best
			}
			best = c
		}
	}
	return best
}

// cutPath keeps the end of a file name: "…/runs/3.pb.gz", cut at a "/" so that no name
// is left cut; the name alone where that is too long, and the name cut from its end
// where even that is.
func cutPath(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	for i := range len(s) {
		if s[i] == '/' && ansi.StringWidth(s[i:])+1 <= w {
			return "…" + s[i:]
		}
	}
	return cutFree(s[strings.LastIndexByte(s, '/')+1:], w)
}

// placed is an item on a line and the cells its value gets.
type placed struct {
	at int // the item's index, its place in reading order
	w  int
}

// layoutHeader lays its out on n lines of width cells (see the top of this file).
func layoutHeader(its []item, n, width int) [][]placed {
	if n <= 0 || width <= 0 {
		return nil
	}
	out := make([][]placed, n)
	var carried []int
	for ln := range n {
		cands := carried
		carried = nil
		for i, it := range its {
			if min(it.line, n-1) == ln {
				cands = append(cands, i)
			}
		}
		slices.SortStableFunc(cands, func(a, b int) int {
			return cmp.Or(cmp.Compare(its[a].prio, its[b].prio), cmp.Compare(a, b))
		})
		var line []placed
		used, blocked := 0, false
		for _, i := range cands {
			it := its[i]
			sep := 0
			if len(line) > 0 {
				sep = len(itemSep)
			}
			w := it.wants()
			if it.fit != nil {
				if len(line) == 0 {
					w = min(w, width-it.labelWidth()) // free text alone on its line is cut to it
				}
				w = ansi.StringWidth(it.fit(w)) // cut at a word, it may take fewer
			}
			// Once an item has gone to the next line, no later one passes it.
			if !blocked && w > 0 && used+sep+it.labelWidth()+w <= width {
				line = append(line, placed{at: i, w: w})
				used += sep + it.labelWidth() + w
				continue
			}
			if it.flows {
				blocked = true
				if ln < n-1 {
					carried = append(carried, i)
				}
			}
		}
		// Free text grows into the room left, the most important first.
		left := width - used
		for k := range line {
			if it := its[line[k].at]; it.fit != nil && left > 0 {
				w := ansi.StringWidth(it.fit(line[k].w + left))
				left -= w - line[k].w
				line[k].w = w
			}
		}
		slices.SortFunc(line, func(a, b placed) int { return cmp.Compare(a.at, b.at) })
		out[ln] = line
	}
	return out
}

// View draws as many header lines as the height allows.
func (hb *headerBar) View() string {
	if hb.width <= 0 || hb.height <= 0 {
		return ""
	}
	rs := hb.st.reduced()
	its := hb.items()
	var out []string
	for _, line := range layoutHeader(its, min(hb.height, headerLines), hb.width) {
		var b strings.Builder
		for _, p := range line {
			it := its[p.at]
			val := it.value
			if it.fit != nil {
				val = it.fit(p.w)
			}
			if val == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteString(itemSep)
			}
			if it.label != "" {
				rs.label.write(&b, it.label)
				b.WriteByte(' ')
			}
			vs := rs.value
			switch {
			case it.warn:
				vs = rs.warn
			case it.title:
				vs = rs.title
			}
			vs.write(&b, val)
		}
		out = append(out, b.String())
	}
	return strings.Join(out, "\n")
}

// fileItems are a saved profile's figures: the sample type shown (and how many there
// are to cycle through), the sampling period, how long the profile ran and when.
func fileItems(f *FileInfo) []item {
	typ := printable(f.SampleType)
	if f.Unit != "" {
		typ += "/" + printable(f.Unit)
	}
	if f.Types > 1 {
		typ += " (" + strconv.Itoa(f.Types) + " types)"
	}
	its := []item{fact(lineSession, prioRate, "type", typ)}
	if f.Period > 0 {
		p := formatValue(f.PeriodUnit, float64(f.Period))
		if f.PeriodType != "" && f.PeriodType != f.SampleType {
			p += " " + printable(f.PeriodType)
		}
		its = append(its, fact(lineSession, prioThreads, "period", p))
	}
	if f.DurationNanos > 0 {
		its = append(its, fact(lineSession, prioThreads, "over", formatTime(float64(f.DurationNanos))))
	}
	if f.TimeNanos > 0 {
		at := time.Unix(0, f.TimeNanos).Format("2006-01-02 15:04:05")
		its = append(its, fact(lineSession, prioState, "at", at))
	}
	return its
}

// fileTextItems are a saved profile's free text: its main binary with its build ID, and
// its comments.
func fileTextItems(f *FileInfo) []item {
	var its []item
	if f.Main != "" {
		s := printable(f.Main)
		if f.BuildID != "" {
			s += " build-id " + printable(f.BuildID)
		}
		its = append(its, text(lineStacks, prioComparison, "binary", s, min(ansi.StringWidth(s), 16), func(w int) string {
			return cutFree(s, w)
		}))
	}
	if len(f.Comments) > 0 {
		s := printable(strings.Join(f.Comments, "; "))
		its = append(its, text(lineCounter, prioCounter, "", s, min(ansi.StringWidth(s), 16), func(w int) string {
			return cutFree(s, w)
		}))
	}
	return its
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// densityFact is the header's density: on, off, or on but not applied for
// want of counts, with why, as a warning that keeps its place.
func densityFact(h Header) item {
	if h.Density && h.DensityWhy != "" {
		return fact(lineStacks, prioCorrection, "density", "no counts: "+printable(h.DensityWhy)).warnIf(true)
	}
	return fact(lineStacks, prioCorrection, "density", onOff(h.Density)).flowing()
}
