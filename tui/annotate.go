package tui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/annotate"
	"github.com/cctop/cctop/cct"
)

// The annotate view's side of the root model: which function it shows,
// building its listing off the Update goroutine (the module and the
// sources are files to read), and building it again as the live profile
// changes, at most once a rebuildEvery.

// annotateRebuild is how often a live annotate view takes the newer
// samples.
const annotateRebuild = time.Second

// annotateMsg is a listing built for the annotate view.
type annotateMsg struct {
	gen     uint64 // the annotation it was built for (annotation.gen)
	seq     uint64 // the snapshot it was built from
	listing *annotate.Listing
	err     error
}

// annotation is what the root keeps of the annotate view.
type annotation struct {
	on   bool
	gen  uint64 // counts the functions opened: a listing of an earlier one is dropped
	name string
	// module and file pick the function in the snapshot's tree, whose
	// FuncIDs change from one tree to another only by being added to.
	module, file string
	seq          uint64 // the snapshot the shown listing was built from
	busy         bool   // a build is running: the Annotator is one goroutine's
	built        time.Time
	annotator    *annotate.Annotator
}

// openAnnotate opens the annotate view on the cursor row's function.
func (m *Model) openAnnotate() tea.Cmd {
	t := m.tree
	if t.prof == nil || t.cursor >= len(t.rows) || m.snap.Tree == nil {
		m.status.setText("no function to annotate")
		return nil
	}
	g := t.rows[t.cursor].g
	st := t.prof.structure
	if int(g.fn) >= len(st.names) || st.tree == nil {
		m.status.setText("no function to annotate")
		return nil
	}
	f := st.tree.Func(g.fn)
	if f.IsProcess() {
		m.status.setText("a process has no code of its own: annotate one of its functions")
		return nil
	}
	if _, ok := m.annotatedFunc(f.Name, f.Module, f.File); !ok {
		m.status.setText("no function to annotate")
		return nil
	}
	a := &m.ann
	a.on, a.gen = true, a.gen+1
	a.name, a.module, a.file = f.Name, f.Module, f.File
	a.seq = 0
	m.annPane.open(st.shorts[g.fn], m.annPane.disasm)
	m.relayout()
	return m.buildAnnotation()
}

// annotatedFunc is the function's id in the snapshot's tree (the
// physical view's tree is another).
func (m *Model) annotatedFunc(name, module, file string) (cct.FuncID, bool) {
	return m.snap.Tree.Lookup(name, module, file)
}

// buildAnnotation builds the shown function's listing from the latest
// snapshot, unless a build is running (its result is followed by another
// when it is due).
func (m *Model) buildAnnotation() tea.Cmd {
	a := &m.ann
	if !a.on || a.busy || m.snap.Tree == nil {
		return nil
	}
	fn, ok := m.annotatedFunc(a.name, a.module, a.file)
	if !ok {
		return nil
	}
	if a.annotator == nil {
		a.annotator = m.opts.Annotator
		if a.annotator == nil {
			a.annotator = annotate.New(annotate.Options{})
		}
		if fi := m.snap.Header.File; fi != nil && fi.Main != "" && fi.BuildID != "" {
			a.annotator.ExpectBuildID(fi.Main, fi.BuildID)
		}
	}
	s := m.snap
	self := s.Self
	if m.filtering && s.ThreadSelf != nil {
		if ts := s.ThreadSelf(m.threadTID); ts != nil {
			self = ts
		}
	}
	unit := s.Unit
	if s.Metric == "calls" {
		unit = "calls"
	}
	a.annotator.SetCodeReader(nil)
	if s.ReadCode != nil {
		pid := processOf(s.Tree, fn)
		a.annotator.SetCodeReader(func(addr uint64, buf []byte) bool { return s.ReadCode(pid, addr, buf) })
	}
	a.busy, a.built = true, time.Now()
	gen, an, tree := a.gen, a.annotator, s.Tree
	return func() tea.Msg {
		l, err := an.Build(tree, self, fn)
		if l != nil && l.Unit == "" {
			l.Unit = unit
		}
		return annotateMsg{gen: gen, seq: s.Seq, listing: l, err: err}
	}
}

// processOf is the process fn's first context runs in, where the tree has
// a level of processes; 0 (the target) where it has none.
func processOf(t *cct.Tree, fn cct.FuncID) uint32 {
	for id := range t.Len() {
		if t.Node(cct.NodeID(id)).Func != fn {
			continue
		}
		for p := cct.NodeID(id); p != 0; p = t.Node(p).Parent {
			if f := t.Func(t.Node(p).Func); f.IsProcess() {
				return f.ProcessPID()
			}
		}
		return 0
	}
	return 0
}

// gotAnnotation takes a built listing.
func (m *Model) gotAnnotation(msg annotateMsg) tea.Cmd {
	a := &m.ann
	a.busy = false
	if msg.gen != a.gen {
		// A view opened since this build started has had none of its
		// own (the Annotator was busy): it is due now.
		return m.buildAnnotation()
	}
	a.seq = msg.seq
	m.annPane.set(msg.listing, msg.err)
	m.relayout()
	return nil
}

// annotateDue rebuilds the listing when the profile has changed since it
// was built and the last build is old enough.
func (m *Model) annotateDue() tea.Cmd {
	a := &m.ann
	if !a.on || a.busy || m.snap.Seq == a.seq || time.Since(a.built) < annotateRebuild {
		return nil
	}
	return m.buildAnnotation()
}

func (m *Model) closeAnnotate() {
	m.ann.on = false
	m.ann.gen++
	m.relayout()
}

// annotateKey handles a key while the annotate view has the focus.
func (m *Model) annotateKey(msg tea.KeyPressMsg) tea.Cmd {
	k, p := m.keys, &m.annPane
	if i, ok := cursorMove(k, msg, p.cursor, p.rows(), max(1, p.bodyHeight()-1)); ok {
		p.moveTo(i)
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.AnnotateView.Back):
		m.closeAnnotate()
	case key.Matches(msg, k.Help):
		m.showHelp = true
		m.relayout()
	case key.Matches(msg, k.AnnotateView.Disasm):
		p.toggle()
	case key.Matches(msg, k.AnnotateView.Hot):
		p.toHot()
	}
	return nil
}

// annotateHelp is the annotate view's footer: its own keys, help and quit,
// then the moving keys as room allows.
func (m *Model) annotateHelp() []key.Binding {
	k := m.keys
	return append(k.AnnotateView.ShortHelp(), k.Help, k.Quit, k.Up, k.Down, k.PageUp, k.PageDown)
}

// annotateFullHelp is the annotate view's `?` screen: its own keys, and
// the moving keys it shares with the tree.
func (m *Model) annotateFullHelp() [][]key.Binding {
	k := m.keys
	return [][]key.Binding{k.AnnotateView.FullHelp(), {k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End, k.Help, k.Quit}}
}
