package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// headerLines is how many lines the header wants. Each line is one concern and fits 80
// columns with typical values: the target and how sampling goes, where the stacks and
// calls come from, the correction and comparison, and the view.
const headerLines = 4

// viewInfo is what the header says about the view, besides the Source's Header.
type viewInfo struct {
	view     string
	split    bool
	physical bool     // inlined frames merged into their physical frames
	thread   string   // "all" or the filtered thread
	focus    []string // focused context, root side first
	matching string   // search summary, "" when no search
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

// item is one "label value" pair of a header line; a value alone has no label.
type item struct {
	label, value string
	warn         bool
}

func (hb *headerBar) lines() [][]item {
	h, v := hb.h, hb.v
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	target := h.Target
	if target == "" {
		target = "no target"
	}
	l1 := []item{
		{"", target, false},
		{"", h.State, strings.HasPrefix(h.State, "target ")},
		{"", strconv.Itoa(h.Threads) + " threads", false},
		{"", formatCount(h.Rate) + "/s", false},
		{"", formatCount(float64(h.Samples)) + " samples", false},
		{"lost", formatCount(float64(h.Lost)), h.Lost > 0},
		{"throttled", formatCount(float64(h.Throttled)), h.Throttled > 0},
	}
	unwound := item{"unwound", "?", false}
	if h.Unwound >= 0 {
		// Stacks that stop short of a root put their samples under [truncated]: a low
		// share of full stacks is worth a warning.
		unwound = item{"unwound", formatPct(h.Unwound), h.Unwound < 90}
	}
	counter := h.Counter
	if counter == "" {
		counter = "none"
	}
	// What the memory bounds cost goes before the counter, whose description is long
	// enough to be cut at the right edge.
	l2 := []item{unwound}
	if h.Folded > 0 {
		l2 = append(l2, item{"folded", formatCount(float64(h.Folded)) + " contexts", true})
	}
	if h.LogDropped > 0 {
		l2 = append(l2, item{"log dropped", formatCount(float64(h.LogDropped)), true})
	}
	l2 = append(l2, item{"trigger", h.Trigger, false}, item{"counter", counter, false})
	l3 := []item{
		{"alpha", strconv.FormatFloat(h.Alpha, 'g', 4, 64), false},
		{"density", onOff(h.Density), false},
		{"latency", onOff(h.Latency), false},
	}
	if h.Comparison != "" {
		l3 = append(l3, item{"vs", h.Comparison, false})
		if h.Overlap >= 0 {
			l3 = append(l3, item{"overlap", formatPct(h.Overlap), false})
		}
	}
	view := v.view
	if v.split {
		view += ", call sites split"
	}
	if v.physical {
		view += ", physical frames"
	}
	l4 := []item{{"view", view, false}, {"thread", v.thread, false}}
	if len(v.focus) > 0 {
		l4 = append(l4, item{"focus", focusText(v.focus), false})
	}
	if v.matching != "" {
		l4 = append(l4, item{"search", v.matching, false})
	}
	return [][]item{l1, l2, l3, l4}
}

// focusText shortens a focus path to its last three steps.
func focusText(names []string) string {
	if len(names) > 3 {
		names = append([]string{"…"}, names[len(names)-3:]...)
	}
	return strings.Join(names, " › ")
}

// View draws as many header lines as the height allows, each cut to the width.
func (hb *headerBar) View() string {
	if hb.width <= 0 || hb.height <= 0 {
		return ""
	}
	st := hb.st
	var out []string
	for n, line := range hb.lines() {
		if n >= hb.height {
			break
		}
		var b strings.Builder
		for i, it := range line {
			if it.value == "" && it.label == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("  ")
			}
			if it.label != "" {
				b.WriteString(st.Label.Render(it.label) + " ")
			}
			vs := st.Value
			switch {
			case it.warn:
				vs = st.Warn
			case n == 0 && i == 0:
				vs = st.Title
			}
			b.WriteString(vs.Render(printable(it.value))) // target and thread names come from the target
		}
		out = append(out, ansi.Truncate(b.String(), hb.width, "…"))
	}
	return strings.Join(out, "\n")
}
