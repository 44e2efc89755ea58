// Package tui owns cctop's terminal interface: the Bubble Tea root model, its panes (the
// header, the calling context tree, the counters panel, the status line, the prompt,
// help) and their styles.
// It reads profiles only through the Source contract in source.go, as immutable
// Snapshots taken on a timer, and asks for changes (toggles, parameters, export) as
// Actions. It never blocks and never does I/O while drawing: a frame costs the rows on
// screen, not the size of the tree.
package tui

import tea "charm.land/bubbletea/v2"

var _ tea.Model = (*Model)(nil)
