package tui

import (
	"slices"
)

// mode is one way of looking at the profile. Each mode keeps its own folds, focus and
// cursor, so flipping to bottom-up and back returns to the same place.
type mode struct {
	kind  viewKind
	split bool
}

// viewState is what the user set up in one mode. Paths are fold-key paths from the
// profile's roots, so they outlive node ids.
type viewState struct {
	fold   *foldNode   // fold state of the top-level rows' parent
	focus  []foldKey   // the focused context, nil: none
	stack  [][]foldKey // earlier focuses, for unfocus
	cursor []foldKey   // where the cursor was when the mode was left
}

// row is one visible line of the tree pane: one frame, or a chain of frames (chain.go).
type row struct {
	g     *group    // the row's frame; of a chain, its last frame, whose children follow
	links []*group  // a chain's frames, first to last; nil for a row of one frame
	pfold *foldNode // fold state of the parent row; never nil, so opening needs no walk
	depth int32
	open  bool
}

// head is the row's first frame: the one its parent row called.
func (r *row) head() *group {
	if r.links != nil {
		return r.links[0]
	}
	return r.g
}

// frames is the row's frames, first to last.
func (r *row) frames() []*group {
	if r.links != nil {
		return r.links
	}
	return []*group{r.g}
}

// treePane is the calling context tree as a list of visible rows. The rows are built
// when the profile, the mode or the focus changes, and spliced when one row is opened
// or closed; moving the cursor and drawing a frame touch only the window on screen.
type treePane struct {
	st            *Styles
	width, height int  // height includes the column title line
	padRows       bool // every line View draws is filled to the width (a panel is beside it)

	prof      *profile
	forest    *forest
	mode      mode
	states    map[mode]*viewState
	focusRoot *group // the focused group, nil: none
	search    search

	rows           []row
	cursor, offset int

	// fullNames shows names as the symbol tables give them; the default is the short
	// form (cct.ShortName). Short by default because the person reading this tree is
	// looking for which function is hot, and in C++ and Rust that is the namespace,
	// class and method: "std::vector::_M_realloc_insert" says it in any width, where
	// the full "void std::vector<long, std::allocator<long> >::_M_realloc_insert<long
	// const&>(__gnu_cxx::__normal_iterator<…>, long const&)" is cut before the method
	// name at 80 columns, and a few levels deep at 160. Go names lose only their import
	// path. The full name is one key away, for telling template instances or overloads
	// apart, and search matches both. It is the same at every width and in every view
	// (rows once switched to full names from 140 columns and with call sites split): a
	// toggle is predictable, and keeps a split row's call site on screen.
	fullNames bool

	// chains draws runs of only children as one row (chain.go); z turns it off.
	chains bool
	// showProbes shows the [cctop probes] frame as rows in every view; by default it is
	// left out: it is the profiler's cost, and the header states it.
	showProbes bool
	// byName merges the processes of a profile of several by name (forest.byName).
	byName bool
	// follow keeps the top-down view on the hot path: every new profile opens it
	// afresh, until the user moves the cursor or folds something.
	follow     bool
	followPath []foldKey // the hot path last opened, to keep near-ties steady

	rowRenders int // rows drawn since creation: tests check frames cost the window, not the tree
}

func newTreePane(st *Styles) *treePane {
	return &treePane{st: st, states: map[mode]*viewState{}, chains: true, follow: true}
}

func (t *treePane) state() *viewState {
	s := t.states[t.mode]
	if s == nil {
		s = &viewState{fold: &foldNode{open: true}}
		t.states[t.mode] = s
	}
	return s
}

// SetSize sets the pane's size, the column title included.
func (t *treePane) SetSize(w, h int) {
	t.width, t.height = max(w, 0), max(h, 0)
	t.scrollToCursor()
}

// bodyHeight is the number of tree rows on screen.
func (t *treePane) bodyHeight() int {
	if t.height >= 2 {
		return t.height - 1
	}
	return t.height
}

// setProfile shows a new profile, keeping mode, folds, focus and the cursor's context and
// screen line. It reports false if the focused context is gone (focus is then dropped).
func (t *treePane) setProfile(p *profile) bool {
	abs, line := t.cursorPath(), t.cursor-t.offset
	t.prof = p
	ok := t.rebuild()
	if !t.follow || t.mode.kind != topDown || !t.openHot() {
		t.restoreCursor(abs, line)
	}
	t.search.update(p)
	return ok
}

// setMode switches the view, remembering where the cursor was in the one left.
func (t *treePane) setMode(m mode) bool {
	if m == t.mode {
		return true
	}
	t.state().cursor = t.cursorPath()
	t.mode = m
	ok := t.rebuild()
	t.restoreCursor(t.state().cursor, t.bodyHeight()/3)
	return ok
}

// setSplit shows call sites split or merged, carrying the folds, focus and cursor over
// by function name: a merged row that was open opens all its call sites, and a call site
// that was open opens its merged row.
func (t *treePane) setSplit(split bool) {
	if t.mode.split == split {
		return
	}
	old := t.state()
	cursor := namesOnly(t.cursorPath())
	t.mode.split = split
	s := t.state()
	s.fold, s.focus, s.stack = &foldNode{open: true}, nil, nil
	t.forest = nil
	if t.prof != nil {
		t.forest = t.newForest(split)
		if split {
			t.seedSplit(nil, old.fold, s.fold)
		} else {
			mergeByName(s.fold, old.fold)
		}
		if old.focus != nil {
			if _, keys := t.findGroupBy(namesOnly(old.focus), true); keys != nil {
				s.focus = keys
				s.fold.walk(keys).open = true
			}
		}
	}
	t.resolveFocus()
	t.flatten()
	t.cursor = 0
	if b := t.base(); len(cursor) >= len(b) {
		t.cursor = t.findRowBy(cursor[len(b):], true)
	}
	t.offset = t.cursor - t.bodyHeight()/3
	t.scrollToCursor()
}

// seedSplit opens, under nw, every call site of g's children whose merged row is open
// under old. It builds groups only along paths that were opened.
func (t *treePane) seedSplit(g *group, old, nw *foldNode) {
	if len(old.kids) == 0 {
		return
	}
	for _, c := range t.forest.children(g) {
		o := old.kids[foldKey{name: t.prof.names[c.fn]}]
		if o == nil {
			continue
		}
		n := nw.ensure(t.forest.key(c))
		n.open = o.open
		t.seedSplit(c, o, n)
	}
}

// mergeByName folds the call-site states of src into name states in dst: a merged row
// is open if any of its call sites was.
func mergeByName(dst, src *foldNode) {
	dst.open = dst.open || src.open
	for k, c := range src.kids {
		mergeByName(dst.ensure(foldKey{name: k.name}), c)
	}
}

// namesOnly drops the call sites from a path.
func namesOnly(path []foldKey) []foldKey {
	out := make([]foldKey, len(path))
	for i, k := range path {
		out[i] = foldKey{name: k.name}
	}
	return out
}

// newForest is a forest of the profile in the current view kind.
func (t *treePane) newForest(split bool) *forest {
	f := newForest(t.prof, t.mode.kind, split)
	f.rankProbes = t.showProbes
	f.byName = t.byName
	return f
}

// rebuild makes a fresh forest for the profile and mode and flattens it.
func (t *treePane) rebuild() bool {
	t.forest = nil
	if t.prof != nil {
		t.forest = t.newForest(t.mode.split)
	}
	ok := t.resolveFocus()
	t.flatten()
	return ok
}

// resolveFocus finds the focused group by its path. A context that left the profile
// ends the focus and its history.
func (t *treePane) resolveFocus() bool {
	s := t.state()
	t.focusRoot = nil
	if s.focus == nil || t.forest == nil {
		return true
	}
	if g := t.findGroup(s.focus); g != nil {
		t.focusRoot = g
		return true
	}
	s.focus, s.stack = nil, nil
	return false
}

// findGroup walks the forest from its roots by fold keys.
func (t *treePane) findGroup(path []foldKey) *group {
	g, _ := t.findGroupBy(path, false)
	return g
}

// findGroupBy walks the forest from its roots by fold keys, or by names alone (the first
// call site of each, in display order), and returns the group and its real key path.
func (t *treePane) findGroupBy(path []foldKey, byName bool) (*group, []foldKey) {
	var g *group
	keys := make([]foldKey, 0, len(path))
	for _, k := range path {
		var next *group
		for _, c := range t.forest.children(g) {
			if ck := t.forest.key(c); ck == k || byName && ck.name == k.name {
				next = c
				keys = append(keys, ck)
				break
			}
		}
		if next == nil {
			return nil, nil
		}
		g = next
	}
	return g, keys
}

// base is the path of the view's top row's parent: the focus' parent, or nothing.
func (t *treePane) base() []foldKey {
	if f := t.state().focus; len(f) > 0 {
		return f[:len(f)-1]
	}
	return nil
}

// flatten rebuilds the visible rows from the fold state.
func (t *treePane) flatten() {
	t.rows = t.rows[:0]
	if t.forest == nil {
		return
	}
	pfold := t.state().fold.walk(t.base())
	if t.focusRoot != nil {
		t.rows = t.appendRows(t.rows, t.focusRoot, pfold, 0)
		return
	}
	for _, g := range t.forest.children(nil) {
		t.rows = t.appendRows(t.rows, g, pfold, 0)
	}
}

// appendRows appends the row that starts at g (a chain, or g alone) and, if it is
// open, its visible descendants.
func (t *treePane) appendRows(rows []row, g *group, pfold *foldNode, depth int32) []row {
	links, fold := t.chainFrom(g, pfold)
	last := g
	if links != nil {
		last = links[len(links)-1]
	}
	open := fold != nil && fold.open && last.hasKids()
	rows = append(rows, row{g: last, links: links, pfold: pfold, depth: depth, open: open})
	if open {
		for _, c := range t.forest.children(last) {
			rows = t.appendRows(rows, c, fold, depth+1)
		}
	}
	return rows
}

// rowFold is the fold state of row r's frame (a chain's last), created along the
// chain when missing. Opening a chain opens its inner frames too, so that with chains
// off (z) the same context is open.
func (t *treePane) rowFold(r *row) *foldNode {
	n := r.pfold
	fs := r.frames()
	for i, g := range fs {
		n = n.ensure(t.forest.key(g))
		if i < len(fs)-1 {
			n.open = true
		}
	}
	return n
}

// open expands row i in place: its descendants are spliced in after it.
func (t *treePane) open(i int) {
	r := &t.rows[i]
	if r.open || !r.g.hasKids() {
		return
	}
	fold := t.rowFold(r)
	fold.open, r.open = true, true
	var sub []row
	for _, c := range t.forest.children(r.g) {
		sub = t.appendRows(sub, c, fold, r.depth+1)
	}
	t.rows = slices.Insert(t.rows, i+1, sub...)
	if t.cursor > i {
		t.cursor += len(sub)
	}
	t.scrollToCursor()
}

// close collapses row i; the cursor moves to it if it was inside.
func (t *treePane) close(i int) {
	r := &t.rows[i]
	if !r.open {
		return
	}
	t.rowFold(r).open = false
	r.open = false
	end := t.subtreeEnd(i)
	t.rows = slices.Delete(t.rows, i+1, end)
	switch {
	case t.cursor >= end:
		t.cursor -= end - i - 1
	case t.cursor > i:
		t.cursor = i
	}
	t.scrollToCursor()
}

func (t *treePane) toggle(i int) {
	if i < 0 || i >= len(t.rows) {
		return
	}
	if t.rows[i].open {
		t.close(i)
	} else {
		t.open(i)
	}
}

// subtreeEnd is the index after the last visible descendant of row i.
func (t *treePane) subtreeEnd(i int) int {
	j := i + 1
	for j < len(t.rows) && t.rows[j].depth > t.rows[i].depth {
		j++
	}
	return j
}

// parentRow is the row of i's parent, -1 for a top row.
func (t *treePane) parentRow(i int) int {
	for j := i - 1; j >= 0; j-- {
		if t.rows[j].depth < t.rows[i].depth {
			return j
		}
	}
	return -1
}

// chain is the groups from the top row down to row i.
func (t *treePane) chain(i int) []*group {
	if i < 0 || i >= len(t.rows) {
		return nil
	}
	var rows [][]*group
	n := 0
	for j := i; j >= 0; j = t.parentRow(j) {
		fs := t.rows[j].frames()
		rows = append(rows, fs)
		n += len(fs)
	}
	out := make([]*group, 0, n)
	for k := len(rows) - 1; k >= 0; k-- {
		out = append(out, rows[k]...)
	}
	return out
}

// cursorPath is the cursor's context as a path from the profile's roots.
func (t *treePane) cursorPath() []foldKey {
	if t.forest == nil || t.cursor >= len(t.rows) {
		return nil
	}
	ch := t.chain(t.cursor)
	out := slices.Clone(t.base())
	for _, g := range ch {
		out = append(out, t.forest.key(g))
	}
	return out
}

// restoreCursor puts the cursor on the context at abs, or its nearest visible ancestor,
// on screen line `line` if the rows allow it.
func (t *treePane) restoreCursor(abs []foldKey, line int) {
	i := 0
	if b := t.base(); len(abs) >= len(b) && slices.Equal(abs[:len(b)], b) {
		i = t.findRow(abs[len(b):])
	}
	t.cursor = i
	t.offset = i - line
	t.scrollToCursor()
}

// findRow returns the row at rel (a path from the top rows), or the deepest visible row
// on the way there; 0 if not even the first step is visible.
func (t *treePane) findRow(rel []foldKey) int { return t.findRowBy(rel, false) }

// findRowBy is findRow matching keys exactly or by name alone. A chain row takes as
// many steps of rel as its frames match; a path that ends inside a chain, or leaves it
// for a sibling the chain hides, finds the chain's row.
func (t *treePane) findRowBy(rel []foldKey, byName bool) int {
	same := func(g *group, k foldKey) bool {
		rk := t.forest.key(g)
		return rk == k || byName && rk.name == k.name
	}
	found, start, end, depth := 0, 0, len(t.rows), int32(0)
	for pos := 0; pos < len(rel); {
		hit := -1
		for j := start; j < end; j++ {
			if t.rows[j].depth == depth && same(t.rows[j].head(), rel[pos]) {
				hit = j
				break
			}
		}
		if hit < 0 {
			break
		}
		found = hit
		fs := t.rows[hit].frames()
		k := 1
		for k < len(fs) && pos+k < len(rel) && same(fs[k], rel[pos+k]) {
			k++
		}
		if k < len(fs) {
			break // the path ends in the chain or leaves it
		}
		pos += k
		start, end, depth = hit+1, t.subtreeEnd(hit), depth+1
	}
	return found
}

// moveTo puts the cursor on row i (clamped) and scrolls it into view.
func (t *treePane) moveTo(i int) {
	t.cursor = max(0, min(i, len(t.rows)-1))
	t.scrollToCursor()
}

func (t *treePane) scrollToCursor() {
	h := t.bodyHeight()
	t.cursor = max(0, min(t.cursor, len(t.rows)-1))
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if h > 0 && t.cursor >= t.offset+h {
		t.offset = t.cursor - h + 1
	}
	t.clampOffset()
}

func (t *treePane) clampOffset() {
	t.offset = max(0, min(t.offset, len(t.rows)-t.bodyHeight()))
}

// scroll moves the window by d rows (the mouse wheel), dragging the cursor along only as
// far as needed to keep it on screen.
func (t *treePane) scroll(d int) {
	t.offset += d
	t.clampOffset()
	if h := t.bodyHeight(); h > 0 {
		t.cursor = max(t.offset, min(t.cursor, t.offset+h-1))
	}
	t.cursor = max(0, min(t.cursor, len(t.rows)-1))
}

// collapseOrParent closes the cursor row, or goes to its parent if it is closed.
func (t *treePane) collapseOrParent() {
	if t.cursor >= len(t.rows) {
		return
	}
	if t.rows[t.cursor].open {
		t.close(t.cursor)
		return
	}
	if p := t.parentRow(t.cursor); p >= 0 {
		t.moveTo(p)
	}
}

// expandOrChild opens the cursor row, or steps into its first child if it is open.
func (t *treePane) expandOrChild() {
	if t.cursor >= len(t.rows) {
		return
	}
	if !t.rows[t.cursor].open {
		t.open(t.cursor)
		return
	}
	t.moveTo(t.cursor + 1)
}

// expandHot opens the heaviest path below the cursor: each row's first child is its
// heaviest, so the path is row, row+1, ... as long as each row has children. It goes
// down to a leaf, past the hottest self frame where the first screen stops (hotPath):
// asked for, the whole path is shown.
func (t *treePane) expandHot() {
	for i := t.cursor; i < len(t.rows) && t.rows[i].g.hasKids(); i++ {
		t.open(i)
		if !t.rows[i].open || i+1 >= len(t.rows) || t.rows[i+1].depth != t.rows[i].depth+1 {
			return
		}
	}
}

// setChains shows runs of only children as one row, or a row per frame, keeping the
// cursor on its context (on a chain's row when it was inside one).
func (t *treePane) setChains(on bool) {
	abs, line := t.cursorPath(), t.cursor-t.offset
	if !on {
		// Each chain's frames become rows down to its last, which keeps its own fold.
		for i := range t.rows {
			if t.rows[i].links != nil {
				t.rowFold(&t.rows[i])
			}
		}
	}
	t.chains = on
	t.flatten()
	t.restoreCursor(abs, line)
}

// collapseAll closes everything (a focused row stays open: it is the view).
func (t *treePane) collapseAll() {
	s := t.state()
	abs := t.cursorPath()
	s.fold = &foldNode{open: true}
	if s.focus != nil {
		s.fold.walk(s.focus).open = true
	}
	t.flatten()
	t.restoreCursor(abs, t.cursor-t.offset)
}

// focus re-roots the view at the cursor row. It reports false in the flat view, where
// rows have no subtree.
func (t *treePane) focus() bool {
	if t.mode.kind == flatView || t.cursor >= len(t.rows) {
		return false
	}
	s := t.state()
	abs := t.cursorPath()
	s.stack = append(s.stack, s.focus)
	s.focus = abs
	s.fold.walk(abs).open = true
	t.focusRoot = t.rows[t.cursor].g
	t.flatten()
	t.cursor, t.offset = 0, 0
	return true
}

// unfocus returns to the previous focus, with the cursor on the context that was focused.
func (t *treePane) unfocus() bool {
	s := t.state()
	if s.focus == nil {
		return false
	}
	left := s.focus
	s.focus = nil
	if n := len(s.stack); n > 0 {
		s.focus, s.stack = s.stack[n-1], s.stack[:n-1]
	}
	t.resolveFocus()
	t.flatten()
	t.restoreCursor(left, t.bodyHeight()/3)
	return true
}

// focusNames is the focused context as the rows name functions, for the header.
func (t *treePane) focusNames() []string {
	if t.focusRoot == nil {
		return nil
	}
	s := t.state()
	out := make([]string, 0, len(s.focus))
	for _, k := range s.focus {
		out = append(out, t.prof.display(k.name, t.fullNames))
	}
	return out
}

// keysOf is the fold keys of a path of groups.
func (t *treePane) keysOf(path []*group) []foldKey {
	keys := make([]foldKey, len(path))
	for i, g := range path {
		keys[i] = t.forest.key(g)
	}
	return keys
}

// reveal opens the ancestors of path (groups from a top row down) and puts the cursor on
// its last group. A group inside a chain ends the chain above it, so it heads a row.
func (t *treePane) reveal(path []*group) {
	if len(path) == 0 {
		return
	}
	keys := t.keysOf(path)
	n := t.state().fold.walk(t.base()).openAlong(keys[:len(keys)-1], true)
	if len(path) > 1 {
		n.unchain = true
	}
	t.flatten()
	t.moveTo(t.findRow(keys))
	// Show the match a third of the way down rather than on the last line.
	if h := t.bodyHeight(); t.cursor == t.offset+h-1 && h > 3 {
		t.offset = t.cursor - h/3
		t.clampOffset()
	}
}

// topGroups is the view's top level: the roots, or the focused group.
func (t *treePane) topGroups() []*group {
	if t.forest == nil {
		return nil
	}
	if t.focusRoot != nil {
		return []*group{t.focusRoot}
	}
	return t.forest.children(nil)
}
