package tui

import (
	"cmp"
	"fmt"
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/keymap"
)

// wheelStep is how many rows one wheel notch scrolls.
const wheelStep = 3

// handleKey routes a key press to whatever has the focus. Only presses arrive here:
// releases (tea.KeyReleaseMsg) would otherwise act twice.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	m.status.keyPressed()
	switch {
	case m.prompt.active():
		return m.promptKey(msg)
	case m.showHelp:
		switch {
		case key.Matches(msg, m.keys.Quit):
			return tea.Quit
		case key.Matches(msg, m.keys.Help, m.keys.Prompt.Cancel):
			m.showHelp = false
			m.relayout()
		}
		return nil
	case m.ann.on:
		return m.annotateKey(msg)
	}
	return m.treeKey(msg)
}

func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys.Prompt
	switch {
	case key.Matches(msg, k.Accept):
		kind, v := m.prompt.close()
		switch kind {
		case searchPrompt:
			m.setSearch(v)
			m.tree.follow = m.tree.follow && v == ""
			if v != "" && !m.tree.jump(true) {
				m.status.setText("no match for “" + v + "”")
			}
		case exportPrompt:
			if v != "" {
				m.src.Do(Action{Kind: Export, Path: v})
				m.status.setText("exporting to " + v)
			}
		}
		return nil
	case key.Matches(msg, k.Cancel):
		if kind, _ := m.prompt.close(); kind == searchPrompt {
			m.setSearch("")
		}
		return nil
	}
	cmd := m.prompt.update(msg)
	if m.prompt.kind == searchPrompt {
		// Highlight as the query is typed; the cursor jumps on enter, so typing does not
		// unfold the tree at every letter.
		m.setSearch(m.prompt.input.Value())
	}
	return cmd
}

func (m *Model) setSearch(q string) { m.tree.search.set(q, m.tree.prof) }

// actionKeys are the keys that become Source actions unchanged.
func (m *Model) actionKeys() []struct {
	b    key.Binding
	kind ActionKind
} {
	k := m.keys
	return []struct {
		b    key.Binding
		kind ActionKind
	}{
		{k.Density, ToggleDensity}, {k.Latency, ToggleLatency}, {k.Flow, ToggleFlow},
		{k.AlphaUp, AlphaUp}, {k.AlphaDown, AlphaDown},
		{k.RateUp, RateUp}, {k.RateDown, RateDown},
		{k.Trigger, CycleTrigger}, {k.Comparison, CycleComparison},
		{k.Mode, CycleMode}, {k.Idle, ToggleIdle}, {k.SampleType, CycleSampleType},
		{k.Baseline, Baseline}, {k.Pause, Pause}, {k.Reset, Reset},
	}
}

// leavesHotPath lists the keys that end following the hot path (treePane.follow):
// those that move the cursor or change folds. Keys that change what is weighed or
// shown around the tree (metric, thread, panel, corrections) keep it.
func (m *Model) leavesHotPath(msg tea.KeyPressMsg) bool {
	k := m.keys
	return key.Matches(msg, k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End,
		k.Collapse, k.Expand, k.Toggle, k.ExpandHot, k.CollapseAll,
		k.Focus, k.Unfocus, k.NextMatch, k.PrevMatch, k.Split)
}

// cursorMove is where a moving key puts a cursor on row cursor of n rows,
// page rows a page; false for any other key. The tree and the annotate
// view move alike.
func cursorMove(k keymap.KeyMap, msg tea.KeyPressMsg, cursor, n, page int) (int, bool) {
	switch {
	case key.Matches(msg, k.Up):
		return cursor - 1, true
	case key.Matches(msg, k.Down):
		return cursor + 1, true
	case key.Matches(msg, k.PageUp):
		return cursor - page, true
	case key.Matches(msg, k.PageDown):
		return cursor + page, true
	case key.Matches(msg, k.Home):
		return 0, true
	case key.Matches(msg, k.End):
		return n - 1, true
	}
	return 0, false
}

func (m *Model) treeKey(msg tea.KeyPressMsg) tea.Cmd {
	k, t := m.keys, m.tree
	page := max(1, t.bodyHeight()-1)
	if m.leavesHotPath(msg) {
		t.follow = false
	}
	if i, ok := cursorMove(k, msg, t.cursor, len(t.rows), page); ok {
		t.moveTo(i)
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
		m.relayout()
	case key.Matches(msg, k.Collapse):
		t.collapseOrParent()
	case key.Matches(msg, k.Expand):
		t.expandOrChild()
	case key.Matches(msg, k.Toggle):
		t.toggle(t.cursor)
	case key.Matches(msg, k.ExpandHot):
		t.expandHot()
	case key.Matches(msg, k.CollapseAll):
		t.collapseAll()
	case key.Matches(msg, k.Focus):
		if !t.focus() {
			m.status.setText("focus needs a tree view (press t to leave the flat view)")
		}
	case key.Matches(msg, k.Unfocus):
		t.unfocus()
	case key.Matches(msg, k.Search):
		return m.prompt.open(searchPrompt, "/", t.search.query)
	case key.Matches(msg, k.NextMatch), key.Matches(msg, k.PrevMatch):
		switch {
		case t.search.query == "":
			m.status.setText("no search: press / first")
		case !t.jump(key.Matches(msg, k.NextMatch)):
			m.status.setText("no match for “" + t.search.query + "”")
		}
	case key.Matches(msg, k.Invert):
		m.setKind(bottomUp)
	case key.Matches(msg, k.Flat):
		m.setKind(flatView)
	case key.Matches(msg, k.Split):
		t.setSplit(!t.mode.split)
	case key.Matches(msg, k.Inline):
		m.togglePhysical()
	case key.Matches(msg, k.Names):
		m.toggleNames()
	case key.Matches(msg, k.Chains):
		t.setChains(!t.chains)
		if t.chains {
			m.status.setText("chains: a run of only children is one row")
		} else {
			m.status.setText("chains off: a row per frame")
		}
	case key.Matches(msg, k.Probes):
		m.toggleProbes()
	case key.Matches(msg, k.Processes):
		m.toggleProcesses()
	case key.Matches(msg, k.Threads):
		m.cycleThread()
	case key.Matches(msg, k.Counters):
		m.togglePanel()
	case key.Matches(msg, k.Annotate):
		return m.openAnnotate()
	case key.Matches(msg, k.Metric):
		v := 0.0
		if m.snap.Metric != "calls" {
			v = 1
		}
		m.src.Do(Action{Kind: SetMetric, Value: v})
	case key.Matches(msg, k.Export):
		return m.prompt.open(exportPrompt, "export to: ", m.opts.ExportPath)
	default:
		for _, a := range m.actionKeys() {
			if key.Matches(msg, a.b) {
				m.src.Do(Action{Kind: a.kind})
				break
			}
		}
	}
	return nil
}

// setKind toggles between kind and the top-down view.
func (m *Model) setKind(kind viewKind) {
	if m.tree.mode.kind == kind {
		kind = topDown
	}
	m.setMode(mode{kind: kind, split: m.tree.mode.split})
}

func (m *Model) setMode(md mode) {
	if !m.tree.setMode(md) {
		m.status.setText("the focused context is gone from the profile")
	}
}

// cycleThread steps the thread filter: all threads, then each thread by TID, then all.
func (m *Model) cycleThread() {
	s := m.snap
	if s.ThreadSelf == nil || len(s.Threads) == 0 {
		m.status.setText("no per-thread data in this profile")
		return
	}
	// By process, then thread: the threads of one process follow each other.
	ts := slices.SortedFunc(slices.Values(s.Threads), func(a, b cct.Thread) int {
		return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID))
	})
	next := 0
	if m.filtering {
		next = slices.IndexFunc(ts, func(t cct.Thread) bool { return t.TID == m.threadTID }) + 1
		if next >= len(ts) {
			next = -1
		}
	}
	var tid uint32 // 0: all threads
	if next < 0 {
		m.filtering = false
		m.status.setText("all threads")
	} else {
		tid = ts[next].TID
		m.filtering, m.threadTID = true, tid
		m.status.setText(fmt.Sprintf("thread %s", threadName(ts, tid)))
	}
	// The Source weighs the chosen thread (calls need its sample log); until a snapshot
	// has its weights, ThreadSelf may give nil and the rows show zeros.
	m.src.Do(Action{Kind: SetThread, Value: float64(tid)})
	m.rebuild()
}

// togglePanel shows or hides the counters panel.
func (m *Model) togglePanel() {
	m.showPanel = !m.showPanel
	m.relayout()
	if l := m.layout(); m.showPanel && l.panel == 0 && l.side == 0 {
		m.status.setText("no room for the counters panel: the terminal is too small")
	}
}

// toggleProcesses merges the processes at the top of a profile of several by name,
// or shows each with its pid.
func (m *Model) toggleProcesses() {
	t := m.tree
	if t.prof == nil || !slices.Contains(t.prof.process, true) {
		m.status.setText("one process: nothing to merge by name")
		return
	}
	t.byName = !t.byName
	t.rebuild()
	if t.byName {
		m.status.setText("processes merged by name")
	} else {
		m.status.setText("processes by pid")
	}
}

// toggleProbes shows [cctop probes] as rows in every view, or leaves it out.
func (m *Model) toggleProbes() {
	t := m.tree
	t.showProbes = !t.showProbes
	switch {
	case t.prof == nil || t.prof.probes == noFunc:
		m.status.setText("no " + cct.ProbesName + " in this profile: nothing was counted with probes")
	case t.showProbes:
		m.status.setText(cct.ProbesName + " is shown as rows, ranked by its time")
	default:
		m.status.setText(cct.ProbesName + " is left out of the rows (the header has its share)")
	}
	abs := t.cursorPath()
	t.rebuild()
	t.restoreCursor(abs, t.cursor-t.offset)
}

func (m *Model) handleWheel(ms tea.Mouse) {
	if m.showHelp {
		return
	}
	if m.ann.on {
		switch ms.Button {
		case tea.MouseWheelUp:
			m.annPane.scroll(-wheelStep)
		case tea.MouseWheelDown:
			m.annPane.scroll(wheelStep)
		}
		return
	}
	m.tree.follow = false
	switch ms.Button {
	case tea.MouseWheelUp:
		m.tree.scroll(-wheelStep)
	case tea.MouseWheelDown:
		m.tree.scroll(wheelStep)
	}
}

// handleClick puts the cursor on the clicked row; a click on the cursor row toggles it.
func (m *Model) handleClick(ms tea.Mouse) {
	if m.showHelp || m.prompt.active() || ms.Button != tea.MouseLeft {
		return
	}
	if m.ann.on {
		m.annPane.click(ms.Y - m.layout().header)
		return
	}
	m.tree.follow = false
	y := ms.Y - m.treeTop()
	if y < 0 || y >= m.tree.bodyHeight() || ms.X >= m.tree.width {
		return // above or below the rows, or on the panel beside them
	}
	i := m.tree.offset + y
	if i >= len(m.tree.rows) {
		return
	}
	if i == m.tree.cursor {
		m.tree.toggle(i)
		return
	}
	m.tree.moveTo(i)
}
