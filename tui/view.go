package tui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cctop/cctop/cct"
)

// resize gives each part its share of the screen.
func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 0), max(h, 0)
	m.relayout()
}

// relayout sizes the parts for the current window, panel and help screen.
func (m *Model) relayout() {
	l := m.layout()
	m.header.SetSize(m.width, l.header)
	m.tree.SetSize(l.treeWidth, l.tree)
	m.tree.padRows = l.side > 0
	switch {
	case l.side > 0:
		m.panel.SetSize(l.side, l.tree)
	default:
		m.panel.SetSize(m.width, l.panel)
	}
	m.annPane.SetSize(m.width, l.tree)
	m.status.SetSize(m.width, 1)
	m.prompt.SetSize(m.width, 1)
	m.help.SetWidth(m.width)
}

// layout is how many lines each part gets. Small terminals lose the header first, then
// the column titles, status line and footer, so that the tree keeps some rows.
//
// The counters panel, when open, sits below the tree and takes up to panelLines from
// it, leaving the tree at least treeMinLines; where that leaves the panel fewer than
// panelMinLines it takes header lines (the header keeps one), and where even that is
// not enough it is hidden. From sideMinWidth columns on it sits instead to the right
// of the tree, as tall as the tree, which gives every thread of a busy target a line.
// The help screen takes the tree's place and hides the panel.
type layout struct {
	header, tree, status, footer int
	panel                        int // lines of the panel below the tree
	side                         int // columns of the panel beside the tree, after the rule
	treeWidth                    int
}

func (m *Model) layout() layout {
	h := m.height
	l := layout{treeWidth: m.width}
	if h >= 3 {
		l.footer = 1
	}
	if h >= 4 {
		l.status = 1
	}
	rest := h - l.footer - l.status
	l.header = min(headerLines, max(0, (rest-4)/2))
	l.tree = rest - l.header
	if !m.showPanel || m.showHelp || m.ann.on {
		return l
	}
	if m.width >= sideMinWidth && l.tree >= panelMinLines {
		l.side = min(sideMaxWidth, m.width*9/20)
		l.treeWidth = m.width - l.side - ansi.StringWidth(sideRule)
		return l
	}
	want, least := panelLines, panelMinLines
	if m.snap.Counters == nil {
		want, least = 1, 1 // "no counters in this profile"
	}
	p := min(want, l.tree-treeMinLines)
	if need := least - p; need > 0 && l.header-need >= 1 {
		// A short terminal gives the panel header lines rather than hide it; the
		// header keeps its first line.
		l.header -= need
		l.tree += need
		p = least
	}
	if p >= least {
		l.panel = p
		l.tree -= p
	}
	return l
}

// treeTop is the screen line of the first tree row.
func (m *Model) treeTop() int {
	top := m.layout().header
	if m.tree.height >= 2 {
		top++ // column titles
	}
	return top
}

// View draws the screen. It does no I/O and no work proportional to the profile.
func (m *Model) View() tea.View {
	if !m.same || m.lastFrame == "" {
		m.lastFrame = m.render()
	}
	v := tea.NewView(m.lastFrame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "cctop"
	if m.snap.Header.Target != "" {
		v.WindowTitle = "cctop: " + printable(m.snap.Header.Target)
	}
	return v
}

func (m *Model) render() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	l := m.layout()
	lines := make([]string, 0, m.height)
	add := func(s string, n int) {
		if n <= 0 {
			return
		}
		parts := strings.Split(s, "\n")
		for i := range n {
			if i < len(parts) {
				lines = append(lines, parts[i])
			} else {
				lines = append(lines, "")
			}
		}
	}
	m.header.set(m.snap.Header, m.viewInfo())
	add(m.header.View(), l.header)
	m.panel.set(m.snap.Counters)
	switch {
	case m.showHelp:
		add(truncateLines(m.fullHelp(), m.width), l.tree)
	case m.ann.on:
		add(m.annPane.View(), l.tree)
	case l.side > 0:
		add(m.besidePanel(l), l.tree)
	default:
		add(m.tree.View(), l.tree)
		add(m.panel.View(), l.panel)
	}
	if m.prompt.active() {
		add(m.prompt.View(), l.status)
	} else {
		add(m.status.View(), l.status)
	}
	add(m.footer(), l.footer)
	return strings.Join(lines, "\n")
}

// besidePanel is the tree's lines with the panel's to their right, after the rule. The
// tree fills its lines to its width (padRows), so no line is measured here.
func (m *Model) besidePanel(l layout) string {
	tree := strings.Split(m.tree.View(), "\n")
	panel := strings.Split(m.panel.View(), "\n")
	rule := m.styles.Rule.Render(sideRule)
	blank := strings.Repeat(" ", l.treeWidth)
	var b strings.Builder
	for i := range l.tree {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(tree) && tree[i] != "" {
			b.WriteString(tree[i])
		} else {
			b.WriteString(blank)
		}
		b.WriteString(rule)
		if i < len(panel) {
			b.WriteString(panel[i])
		}
	}
	return b.String()
}

func (m *Model) viewInfo() viewInfo {
	v := viewInfo{
		view:     m.tree.mode.kind.String(),
		split:    m.tree.mode.split,
		physical: m.physical,
		thread:   "all",
		focus:    m.tree.focusNames(),
	}
	if m.filtering {
		v.thread = threadName(m.snap.Threads, m.threadTID)
	}
	if s := &m.tree.search; s.query != "" {
		v.search, v.matches = s.query, s.count
	}
	return v
}

// ShortHelp makes the root a help.KeyMap whose bindings follow the focus: the prompt's,
// the help screen's or the tree's.
func (m *Model) ShortHelp() []key.Binding {
	switch {
	case m.prompt.active():
		return m.keys.Prompt.ShortHelp()
	case m.showHelp:
		return []key.Binding{m.closeHelpBinding(), m.keys.Quit}
	case m.ann.on:
		return m.annotateHelp()
	}
	return m.viewHelp(m.keys.ShortHelp())
}

// viewHelp fits the tree's short help to the view it is in: the key that leaves the
// view says where it goes, and the flat view, whose rows do not fold, offers ranking
// the probe cost instead of folds and chains.
func (m *Model) viewHelp(bs []key.Binding) []key.Binding {
	k := m.keys
	out := make([]key.Binding, 0, len(bs)+1)
	for _, b := range bs {
		switch kind := m.tree.mode.kind; {
		case kind == bottomUp && sameKeys(b, k.Invert):
			b.SetHelp(b.Help().Key, "top-down")
		case kind == flatView && sameKeys(b, k.Flat):
			b.SetHelp(b.Help().Key, "tree")
		case kind == flatView && sameKeys(b, k.Search):
			out = append(out, b)
			b = k.Probes
			b.SetHelp(b.Help().Key, "probe cost")
		case kind == flatView && (sameKeys(b, k.Toggle) || sameKeys(b, k.ExpandHot) || sameKeys(b, k.Chains) || sameKeys(b, k.Focus)):
			continue
		}
		out = append(out, b)
	}
	return out
}

// sameKeys says whether a and b are bound to the same keys.
func sameKeys(a, b key.Binding) bool { return slices.Equal(a.Keys(), b.Keys()) }

// footer is the short help: as many of the focus's bindings as the width has room for,
// most useful first, each whole. Bindings that do not fit go without a mark: "?" is among
// the first, and the help screen has them all.
func (m *Model) footer() string {
	var bs []key.Binding
	w, sepW := 0, ansi.StringWidth(m.help.ShortSeparator)
	for _, b := range m.ShortHelp() {
		if !b.Enabled() {
			continue
		}
		bw := ansi.StringWidth(b.Help().Key) + 1 + ansi.StringWidth(b.Help().Desc)
		if len(bs) > 0 {
			bw += sepW
		}
		if w+bw > m.width {
			break
		}
		bs, w = append(bs, b), w+bw
	}
	// The keys shown change with the focus, seldom with the frame: the line is drawn
	// again only when they do.
	key := make([]byte, 0, 256)
	key = strconv.AppendInt(key, int64(m.width), 10)
	for _, b := range bs {
		key = append(key, 0)
		key = append(key, b.Help().Key...)
		key = append(key, 1)
		key = append(key, b.Help().Desc...)
	}
	if string(key) != m.footKey {
		h := m.help
		h.SetWidth(0) // measured above
		m.footKey, m.footLine = string(key), h.ShortHelpView(bs)
	}
	return m.footLine
}

// FullHelp is the full help of whatever has the focus.
func (m *Model) FullHelp() [][]key.Binding {
	switch {
	case m.prompt.active():
		return m.keys.Prompt.FullHelp()
	case m.showHelp:
		return [][]key.Binding{m.ShortHelp()}
	case m.ann.on:
		return m.annotateFullHelp()
	}
	return m.keys.FullHelp()
}

// fullHelp is the help screen: the tree's key groups as bubbles help columns, wrapped
// into as many bands as the width needs, so that no group is cut off on 80 columns.
func (m *Model) fullHelp() string {
	groups := m.keys.FullHelp()
	if m.ann.on {
		groups = m.annotateFullHelp()
	}
	sepW := lipgloss.Width(m.help.FullSeparator)
	var bands []string
	var band [][]key.Binding
	bandW := 0
	for _, g := range groups {
		w := lipgloss.Width(m.help.FullHelpView([][]key.Binding{g}))
		if len(band) > 0 && bandW+sepW+w > m.width {
			bands = append(bands, m.help.FullHelpView(band))
			band, bandW = nil, 0
		}
		if len(band) > 0 {
			bandW += sepW
		}
		band, bandW = append(band, g), bandW+w
	}
	if len(band) > 0 {
		bands = append(bands, m.help.FullHelpView(band))
	}
	return strings.Join(bands, "\n\n")
}

func (m *Model) closeHelpBinding() key.Binding {
	b := m.keys.Help
	b.SetHelp(b.Help().Key, "close help")
	return b
}

// threadName is "tid (name)" for the header.
func threadName(ts []cct.Thread, tid uint32) string {
	s := strconv.FormatUint(uint64(tid), 10)
	i := slices.IndexFunc(ts, func(t cct.Thread) bool { return t.TID == tid })
	if i >= 0 && ts[i].Name != "" {
		s += " (" + ts[i].Name + ")"
	}
	// In a profile of several processes, the thread's: its main thread's name.
	if i >= 0 && ts[i].PID != 0 && slices.ContainsFunc(ts, func(t cct.Thread) bool { return t.PID != ts[i].PID }) {
		pid := ts[i].PID
		s += " of pid " + strconv.FormatUint(uint64(pid), 10)
		if j := slices.IndexFunc(ts, func(t cct.Thread) bool { return t.TID == pid }); j >= 0 && ts[j].Name != "" && pid != tid {
			s += " (" + ts[j].Name + ")"
		}
	}
	return s
}

// truncateLines cuts every line of s to w cells: text is cut, never wrapped.
func truncateLines(s string, w int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "")
	}
	return strings.Join(lines, "\n")
}
