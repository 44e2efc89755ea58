package tui

import (
	"github.com/cctop/cctop/cct"
)

// physicalView is the snapshot's tree with inlined frames merged into the physical
// frames that hold them (cct.Tree.Physical), and the physical node of every logical
// node. The snapshot's weights (Self, Compare, ThreadSelf) are per logical node; they
// are summed through `of`, so the comparison and the thread filter get the same
// transform as the profile. It is built once per snapshot tree, only while physical
// frames are shown; thread and metric changes reuse it.
type physicalView struct {
	logical *cct.Tree
	n, nf   int // the logical tree's size when built (see structure.sameTree)
	st      *structure
	of      []cct.NodeID
}

func newPhysicalView(t *cct.Tree) *physicalView {
	ph, of := t.Physical()
	return &physicalView{logical: t, n: t.Len(), nf: t.NumFuncs(), st: newStructure(ph), of: of}
}

func (v *physicalView) sameTree(t *cct.Tree) bool {
	return v != nil && v.logical == t && v.n == t.Len() && v.nf == t.NumFuncs()
}

// weights sums per-logical-node weights onto the physical nodes; nil (no comparison)
// stays nil. Like the snapshot's slices, ws may be shorter or longer than the tree.
func (v *physicalView) weights(ws []float64) []float64 {
	if ws == nil {
		return nil
	}
	out := make([]float64, len(v.st.parent))
	for id, w := range ws {
		if id < len(v.of) {
			out[v.of[id]] += w
		}
	}
	return out
}

// carryPaths moves every mode's focus, focus history and cursor from the forests of
// old to those of p, where inlined frames came or went (see carryPath). The current
// mode's cursor is taken from the rows, the others' from what was saved when they were
// left. It returns the current mode's cursor path, carried.
func (t *treePane) carryPaths(old, p *profile) []foldKey {
	cursor := t.cursorPath()
	if old == nil || p == nil {
		return cursor
	}
	t.state() // the current mode is carried even if nothing was set up in it yet
	for md, s := range t.states {
		if s.focus == nil && s.cursor == nil && md != t.mode {
			continue
		}
		from, to := newForest(old, md.kind, md.split), newForest(p, md.kind, md.split)
		if md == t.mode && t.forest != nil && t.forest.p == old {
			from = t.forest // its groups along the cursor and focus are built already
		}
		carry := func(path []foldKey) []foldKey {
			if path == nil {
				return nil
			}
			return carryPath(from, to, path)
		}
		if s.focus != nil {
			s.focus = carry(s.focus)
			if len(s.focus) == 0 {
				s.focus = nil
			} else {
				s.fold.walk(s.focus).open = true
			}
		}
		for i := range s.stack {
			s.stack[i] = carry(s.stack[i])
			if len(s.stack[i]) == 0 {
				s.stack[i] = nil // the whole tree
			}
		}
		if md == t.mode {
			cursor = carry(cursor)
			s.cursor = cursor
		} else {
			s.cursor = carry(s.cursor)
		}
	}
	return cursor
}

// carryPath maps a path of one forest onto another of the same profile with inlined
// frames shown or merged. A step found under the same key is kept. A step that is gone
// because it was an inlined frame (now part of the row above) is dropped. A step that
// is now reached through inlined frames gets them back, the heaviest way first. Where
// a step cannot be found, the path ends at the deepest step that was.
func carryPath(from, to *forest, path []foldKey) []foldKey {
	var fg, tg *group // where the path has got to in each forest
	fromOK := true
	out := make([]foldKey, 0, len(path))
	for _, k := range path {
		wasInlined := false
		if fromOK {
			fg = childByKey(from, fg, k)
			fromOK = fg != nil
			wasInlined = fromOK && fg.inlined
		}
		if c := childByKey(to, tg, k); c != nil {
			out, tg = append(out, k), c
			continue
		}
		if wasInlined {
			continue
		}
		via := throughInlined(to, tg, k, maxInlineDepth)
		if via == nil {
			break
		}
		for _, g := range via {
			out = append(out, to.key(g))
		}
		tg = via[len(via)-1]
	}
	return out
}

// maxInlineDepth bounds the inlined frames carryPath looks through for one step; real
// inline chains are a few frames deep.
const maxInlineDepth = 16

// childByKey is the child of g (nil: the roots) with fold key k.
func childByKey(f *forest, g *group, k foldKey) *group {
	for _, c := range f.children(g) {
		if f.key(c) == k {
			return c
		}
	}
	return nil
}

// throughInlined looks below g, through inlined rows only, for a row with key k, and
// returns the rows from g's child down to it.
func throughInlined(f *forest, g *group, k foldKey, depth int) []*group {
	if depth == 0 {
		return nil
	}
	for _, c := range f.children(g) {
		if !c.inlined {
			continue
		}
		if m := childByKey(f, c, k); m != nil {
			return []*group{c, m}
		}
		if p := throughInlined(f, c, k, depth-1); p != nil {
			return append([]*group{c}, p...)
		}
	}
	return nil
}

// setProfileAt shows a new profile with the cursor on the context at path (its
// ancestors opened so that it has a row), on the same screen line. It reports false if
// the focused context is gone.
func (t *treePane) setProfileAt(p *profile, path []foldKey) bool {
	line := t.cursor - t.offset
	t.state().fold.openAlong(path[:max(len(path)-1, 0)], true)
	t.prof = p
	ok := t.rebuild()
	t.restoreCursor(path, line)
	t.search.update(p)
	return ok
}
