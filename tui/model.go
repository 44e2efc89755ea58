package tui

import (
	"github.com/cctop/cctop/annotate"
	"os"
	"strconv"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/keymap"
)

// Options configure New. The zero value is usable.
type Options struct {
	Width, Height int  // the size before the first WindowSizeMsg (default 80x24)
	NoColor       bool // plain text; NO_COLOR in the environment does the same
	Styles        *Styles
	Keys          *keymap.KeyMap
	Refresh       time.Duration // how often to take a snapshot (default: 250ms; 2s for a source that nudges)
	ExportPath    string        // the file `x` offers (default cctop.pb.gz)
	// Annotator builds the annotate view's listings (nil: one with
	// default options).
	Annotator *annotate.Annotator
}

// Model is the root of the TUI. Only it talks to the Source and only it returns a
// tea.View; the panes below it draw strings.
type Model struct {
	src  Source
	opts Options
	keys keymap.KeyMap

	styles      Styles // sub-models point here
	fixedStyles bool   // chosen by the caller or NO_COLOR: background changes don't restyle

	width, height int

	snap      Snapshot
	haveSnap  bool
	structure *structure    // of the snapshot's tree, while logical frames are shown
	phys      *physicalView // of the snapshot's tree, while physical frames are shown
	physical  bool          // inlined frames are merged into their physical frames
	threadTID uint32        // the thread filter, when filtering
	filtering bool

	// weighing is set while the thread filter shows a thread the Source has not
	// weighed yet (ThreadSelf gave nil): the rows show zeros until a snapshot has the
	// thread's weights.
	weighing    bool
	weighingTID uint32

	header    headerBar
	tree      *treePane
	panel     countersPanel
	showPanel bool
	status    statusBar
	prompt    prompt
	help      help.Model
	showHelp  bool

	ann     annotation   // the annotate view: what it shows and its builds
	annPane annotatePane // and its drawing

	// same says the last Update changed nothing the screen shows (a tick that found
	// no new snapshot): Bubble Tea calls View after every message, and the frame
	// drawn last is given again.
	same      bool
	lastFrame string
	// footLine is the footer drawn for the keys and width in footKey.
	footKey, footLine string
}

// Internal messages.
type (
	tickMsg   struct{}
	sourceMsg struct{ msg tea.Msg } // a message read from Source.Msgs
	sourceEnd struct{}              // Source.Msgs was closed
)

// New returns the root model over src. It takes the first snapshot at once so that the
// first frame shows the profile.
func New(src Source, opts Options) *Model {
	if opts.Width <= 0 {
		opts.Width = 80
	}
	if opts.Height <= 0 {
		opts.Height = 24
	}
	if opts.Refresh <= 0 && src.Msgs() != nil {
		// A source that sends SnapshotReadyMsg: the tick only catches a
		// nudge its full channel dropped. Every tick wakes the process.
		opts.Refresh = 2 * time.Second
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 250 * time.Millisecond
	}
	if opts.ExportPath == "" {
		opts.ExportPath = "cctop.pb.gz"
	}
	m := &Model{src: src, opts: opts, keys: keymap.DefaultKeyMap()}
	if opts.Keys != nil {
		m.keys = *opts.Keys
	}
	switch {
	case opts.Styles != nil:
		m.styles, m.fixedStyles = *opts.Styles, true
	case opts.NoColor || os.Getenv("NO_COLOR") != "":
		m.styles, m.fixedStyles = PlainStyles(), true
	default:
		m.styles = DefaultStyles(true)
	}
	m.header = headerBar{st: &m.styles}
	m.tree = newTreePane(&m.styles)
	m.panel = countersPanel{st: &m.styles}
	m.status = statusBar{st: &m.styles}
	m.prompt = newPrompt(&m.styles)
	m.annPane = annotatePane{st: &m.styles}
	m.help = help.New()
	m.help.Styles = m.styles.Help
	m.resize(opts.Width, opts.Height)
	m.refresh(true)
	return m
}

// Init starts the snapshot timer, listens to the Source and asks the terminal for its
// background so the colors suit it.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.tick(), m.listen(), tea.RequestBackgroundColor)
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.opts.Refresh, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *Model) listen() tea.Cmd {
	ch := m.src.Msgs()
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return sourceEnd{}
		}
		return sourceMsg{msg}
	}
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.same = false
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tickMsg:
		m.same = !m.refresh(false) && !m.ann.on
		return m, tea.Batch(m.tick(), m.annotateDue())
	case sourceMsg:
		m.handleSource(msg.msg)
		return m, tea.Batch(m.listen(), m.annotateDue())
	case annotateMsg:
		return m, m.gotAnnotation(msg)
	case sourceEnd:
	case StatusMsg, ErrorMsg, SnapshotReadyMsg:
		m.handleSource(msg)
		return m, m.annotateDue()
	case tea.BackgroundColorMsg:
		if !m.fixedStyles {
			m.styles = DefaultStyles(msg.IsDark())
			m.help.Styles = m.styles.Help
			m.footKey = ""
		}
	case tea.KeyPressMsg:
		return m, m.handleKey(msg)
	case tea.MouseWheelMsg:
		m.handleWheel(msg.Mouse())
	case tea.MouseClickMsg:
		m.handleClick(msg.Mouse())
	default:
		if m.prompt.active() { // paste, cursor blinks
			return m, m.prompt.update(msg)
		}
	}
	return m, nil
}

func (m *Model) handleSource(msg tea.Msg) {
	switch msg := msg.(type) {
	case StatusMsg:
		m.status.setText(msg.Text)
	case ErrorMsg:
		if msg.Err != nil {
			m.status.setErr(msg.Err)
		}
	case SnapshotReadyMsg:
		m.refresh(false)
	}
}

// refresh takes the latest snapshot, and rebuilds the rows only if it changed: it says
// whether it did.
func (m *Model) refresh(force bool) bool {
	s := m.src.Snapshot()
	if !force && m.haveSnap && s.Seq == m.snap.Seq {
		return false
	}
	hadCounters := m.snap.Counters != nil
	m.snap, m.haveSnap = s, true
	if m.showPanel && hadCounters != (s.Counters != nil) {
		m.relayout() // the panel's lines depend on whether there are counters
	}
	m.rebuild()
	return true
}

// rebuild derives the profile from the snapshot, the thread filter and the frames shown.
func (m *Model) rebuild() {
	p := m.profile()
	ok := m.tree.setProfile(p)
	if p != nil {
		m.setWeighing(p.pending && m.snap.ThreadSelf != nil)
	}
	if !ok {
		m.status.setText("the focused context is gone from the profile")
	}
}

// profile is the snapshot's tree (or its physical tree) weighed under the thread
// filter. The structures are kept across snapshots of the same tree, so a thread or
// metric change costs a pass over the weights, not a new structure.
func (m *Model) profile() *profile {
	s := m.snap
	if s.Tree == nil {
		m.structure, m.phys = nil, nil
		return nil
	}
	self, cmp := s.Self, s.Compare
	pending := false
	if m.filtering {
		// The comparison is of the whole profile: against one thread its deltas would
		// mislead, so the thread view has none.
		self, cmp = nil, nil
		if s.ThreadSelf != nil {
			self = s.ThreadSelf(m.threadTID)
		}
		if self == nil {
			// Not weighed yet: the thread's contexts, by its samples in the tree, shown
			// with zero weights.
			self, pending = threadShape(s.Tree, m.threadTID), true
		}
	}
	// Only the structure shown is kept: the other is rebuilt when the view flips back,
	// rather than holding an old snapshot's tree meanwhile.
	var st *structure
	if m.physical {
		m.structure = nil
		if !m.phys.sameTree(s.Tree) {
			m.phys = newPhysicalView(s.Tree)
		}
		st = m.phys.st
		self, cmp = m.phys.weights(self), m.phys.weights(cmp)
	} else {
		m.phys = nil
		if !m.structure.sameTree(s.Tree) {
			m.structure = newStructure(s.Tree)
		}
		st = m.structure
	}
	p := newProfile(st, s.Metric, self, cmp)
	p.unit, p.diff = s.Unit, s.Diff && cmp != nil
	p.pending = pending
	return p
}

// togglePhysical flips between logical frames (inlined functions are rows of their
// own) and physical frames (they are part of the row of the function they were inlined
// into), keeping the cursor and focus on the same contexts as far as they still exist.
func (m *Model) togglePhysical() {
	m.physical = !m.physical
	old := m.tree.prof
	p := m.profile()
	cursor := m.tree.carryPaths(old, p)
	if !m.tree.setProfileAt(p, cursor) {
		m.status.setText("the focused context is gone from the profile")
		return
	}
	switch {
	case !m.physical:
		m.status.setText("logical frames: inlined functions are rows of their own")
	case m.snap.Tree != nil && !m.snap.Tree.HasInlined():
		m.status.setText("physical frames (this profile has no inlined frames)")
	default:
		m.status.setText("physical frames: inlined functions are part of their callers")
	}
}

// toggleNames flips the rows between short and full function names.
func (m *Model) toggleNames() {
	m.tree.fullNames = !m.tree.fullNames
	if m.tree.fullNames {
		m.status.setText("full names")
	} else {
		m.status.setText("short names")
	}
}

// setWeighing says on the status line that the filtered thread is being weighed, once
// when that starts, and says which thread is shown when its weights arrive (unless
// something else was said meanwhile).
func (m *Model) setWeighing(on bool) {
	text := func(tid uint32) string { return "weighing thread " + strconv.FormatUint(uint64(tid), 10) + "…" }
	switch {
	case on && (!m.weighing || m.weighingTID != m.threadTID):
		m.weighing, m.weighingTID = true, m.threadTID
		m.status.setText(text(m.threadTID))
	case !on && m.weighing:
		if m.status.text == text(m.weighingTID) {
			m.status.setText("thread " + threadName(m.snap.Threads, m.weighingTID))
		}
		m.weighing = false
	}
}

// threadShape is a self weight per node that is non-zero where tid has samples: it
// shapes the rows of a thread that has no weights yet. Like the totals it is a pass
// over the tree, made only while a thread is being weighed.
func threadShape(t *cct.Tree, tid uint32) []float64 {
	out := make([]float64, t.Len())
	for id := range out {
		for _, ts := range t.Threads(cct.NodeID(id)) {
			if ts.TID == tid && !ts.Self.IsZero() {
				out[id] = float64(max(ts.Self.Samples, 1))
			}
		}
	}
	return out
}
