package tui

import (
	"slices"
	"strings"

	"github.com/cctop/cctop/cct"
)

// search is the query and what it matches in one profile. Matching is by function name,
// full or short whichever the rows show (the full name, so that a package path or a
// template argument finds its functions; the short one, so that what is on screen
// finds itself: "Accumulator::add" is not in "Accumulator<long>::add(long)"),
// case-insensitive unless the query has an upper-case letter. The per-node flags let n/N skip every subtree without
// a match, so a jump builds only the groups on its way.
type search struct {
	query   string
	prof    *profile // what the flags below were computed for
	fn      []bool   // by FuncID
	subtree []bool   // by node: the node or a descendant matches, with weight
	anc     []bool   // by node: the node or an ancestor matches
	count   int      // matching contexts with weight
}

// set changes the query.
func (s *search) set(q string, p *profile) {
	s.query, s.prof = q, nil
	s.update(p)
}

// update recomputes the flags for a new profile.
func (s *search) update(p *profile) {
	if s.query == "" || p == nil {
		s.prof, s.fn, s.subtree, s.anc, s.count = nil, nil, nil, nil, 0
		return
	}
	if p == s.prof {
		return
	}
	s.prof = p
	q, fold := s.query, strings.ToLower(s.query) == s.query
	s.fn = make([]bool, len(p.names))
	for i := 1; i < len(p.names); i++ { // 0 is the root, never a match
		name, short := p.names[i], p.shorts[i]
		if fold {
			name, short = strings.ToLower(name), strings.ToLower(short)
		}
		s.fn[i] = strings.Contains(name, q) || strings.Contains(short, q)
	}
	n := len(p.parent)
	s.subtree, s.anc, s.count = make([]bool, n), make([]bool, n), 0
	for id := n - 1; id > 0; id-- {
		if s.fn[p.fn[id]] && (p.total[id] != 0 || at(p.cmpTot, id) != 0) {
			s.subtree[id] = true
			s.count++
		}
		if s.subtree[id] {
			s.subtree[p.parent[id]] = true
		}
	}
	for id := 1; id < n; id++ {
		s.anc[id] = s.fn[p.fn[id]] || s.anc[p.parent[id]]
	}
}

func (s *search) active() bool { return s.fn != nil }

func (s *search) matches(g *group) bool { return s.fn != nil && s.fn[g.fn] }

// contains says whether g's subtree in the view (g included) may hold a match.
func (s *search) contains(kind viewKind, g *group) bool {
	switch kind {
	case topDown:
		return slices.ContainsFunc(g.nodes, func(n cct.NodeID) bool { return s.subtree[n] })
	case bottomUp:
		// Below a bottom-up row are the callers of its contexts: their ancestors.
		return slices.ContainsFunc(g.nodes, func(n cct.NodeID) bool { return s.anc[n] })
	}
	return s.matches(g)
}

// firstIn is the path to the first match in pre-order within g's subtree, nil if none.
func (t *treePane) firstIn(g *group) []*group {
	if !t.search.contains(t.mode.kind, g) {
		return nil
	}
	if t.search.matches(g) {
		return []*group{g}
	}
	for _, c := range t.forest.children(g) {
		if p := t.firstIn(c); p != nil {
			return append([]*group{g}, p...)
		}
	}
	return nil
}

// lastIn is the path to the last match in pre-order within g's subtree.
func (t *treePane) lastIn(g *group) []*group {
	if !t.search.contains(t.mode.kind, g) {
		return nil
	}
	kids := t.forest.children(g)
	for i := len(kids) - 1; i >= 0; i-- {
		if p := t.lastIn(kids[i]); p != nil {
			return append([]*group{g}, p...)
		}
	}
	if t.search.matches(g) {
		return []*group{g}
	}
	return nil
}

// siblings is the list ch[lvl] is in: the top groups, or its parent's children.
func (t *treePane) siblings(ch []*group, lvl int) ([]*group, int) {
	sibs := t.topGroups()
	if lvl > 0 {
		sibs = t.forest.children(ch[lvl-1])
	}
	return sibs, slices.Index(sibs, ch[lvl])
}

// findNext is the first match after the cursor in display order, wrapping around.
func (t *treePane) findNext() []*group {
	ch := t.chain(t.cursor)
	if len(ch) > 0 {
		for _, c := range t.forest.children(ch[len(ch)-1]) {
			if p := t.firstIn(c); p != nil {
				return append(slices.Clone(ch), p...)
			}
		}
		for lvl := len(ch) - 1; lvl >= 0; lvl-- {
			sibs, idx := t.siblings(ch, lvl)
			for _, s := range sibs[idx+1:] {
				if p := t.firstIn(s); p != nil {
					return append(slices.Clone(ch[:lvl]), p...)
				}
			}
		}
	}
	for _, s := range t.topGroups() {
		if p := t.firstIn(s); p != nil {
			return p
		}
	}
	return nil
}

// findPrev is the last match before the cursor in display order, wrapping around.
func (t *treePane) findPrev() []*group {
	ch := t.chain(t.cursor)
	for lvl := len(ch) - 1; lvl >= 0; lvl-- {
		sibs, idx := t.siblings(ch, lvl)
		for k := idx - 1; k >= 0; k-- {
			if p := t.lastIn(sibs[k]); p != nil {
				return append(slices.Clone(ch[:lvl]), p...)
			}
		}
		if lvl > 0 && t.search.matches(ch[lvl-1]) {
			return slices.Clone(ch[:lvl])
		}
	}
	tops := t.topGroups()
	for k := len(tops) - 1; k >= 0; k-- {
		if p := t.lastIn(tops[k]); p != nil {
			return p
		}
	}
	return nil
}

// jump moves the cursor to the next (or previous) match, opening its ancestors. It
// reports whether there was one.
func (t *treePane) jump(forward bool) bool {
	if !t.search.active() || t.forest == nil {
		return false
	}
	var p []*group
	if forward {
		p = t.findNext()
	} else {
		p = t.findPrev()
	}
	if p == nil {
		return false
	}
	t.reveal(p)
	return true
}
