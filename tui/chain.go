package tui

import (
	"strconv"

	"github.com/charmbracelet/x/ansi"
)

// Chains. A run of frames where each is the one child of the frame above that holds
// nearly all of its time is a single line of the call path, not a branch: eight rows
// of "runtime.main › main.main › main.run › …" at 99.9% each say less than one row
// that names the first and last frame and counts the frames between. Such a run is
// drawn as one row, "runtime.goexit › … › workload.densityRounds (9)", which opens and
// closes like any row (its children are those of its last frame); `z` shows every
// frame on a row of its own.
//
// "Nearly all" is measured against the chain's first frame, so that the figures of the
// row (the first frame's total) are within chainShare of every frame in it, and the
// siblings hidden inside a chain hold less than 1-chainShare of its time together. A
// chain needs minChain frames: a two-frame chain saves one line and costs a long one.
const (
	chainShare = 0.99
	minChain   = 3
)

// heavyChild is cur's child that continues a chain that started at head, nil if none:
// the heaviest child, if it holds nearly all of head's time in the profile and in the
// comparison.
func (t *treePane) heavyChild(head, cur *group) *group {
	if head.total <= 0 && head.cmpTotal <= 0 {
		return nil
	}
	kids := t.forest.children(cur)
	if len(kids) == 0 {
		return nil
	}
	c := kids[0]
	if head.total > 0 && c.total < chainShare*head.total {
		return nil
	}
	if head.cmpTotal > 0 && c.cmpTotal < chainShare*head.cmpTotal {
		return nil
	}
	return c
}

// chainFrom is the chain that starts at g, whose parent row's fold state is pfold: the
// frames first to last (nil when g is a row of its own) and the fold state of the last
// (nil if never opened). A frame whose fold state is marked unchain ends the chain it
// is in, so that a search can put the cursor on a frame inside one.
func (t *treePane) chainFrom(g *group, pfold *foldNode) ([]*group, *foldNode) {
	fold := pfold.child(t.forest.key(g))
	if !t.chains || t.mode.kind == flatView {
		return nil, fold
	}
	var links []*group
	cur, curFold := g, fold
	for curFold == nil || !curFold.unchain {
		next := t.heavyChild(g, cur)
		if next == nil {
			break
		}
		if links == nil {
			links = []*group{g}
		}
		links = append(links, next)
		cur, curFold = next, curFold.child(t.forest.key(next))
	}
	if len(links) < minChain {
		return nil, fold
	}
	return links, curFold
}

// chainText is a chain row's name: "first › … › last (n)", cut to room cells by
// shortening the first name, then by dropping it, so the last frame (where the chain
// leads) stays readable longest. A process (keepFirst: "postgres [pid 4321]", at the
// top of a profile of several) is what the row is about: the last name is shortened
// first, down to a few cells.
func chainText(first, last string, n, room int, keepFirst bool) string {
	count := " (" + strconv.Itoa(n) + ")"
	tail := " › … › " + last + count
	tw := ansi.StringWidth(tail)
	if ansi.StringWidth(first)+tw <= room {
		return first + tail
	}
	if keepFirst {
		lastRoom := room - ansi.StringWidth(first+" › … › "+count)
		if lastRoom >= 8 {
			return first + " › … › " + truncateLeft(last, lastRoom) + count
		}
	}
	if room-tw >= 12 {
		return ansi.Truncate(first, room-tw, "…") + tail
	}
	return ansi.Truncate("… › "+last+count, room, "…")
}

// truncateLeft cuts s to w cells from the left, "…" first: of a function's name
// the end (the function, not its package) says most.
func truncateLeft(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-w+1, "")
}

// indentWidth is the indentation of a row at depth for a name column nameW cells wide:
// two cells a level near the top, one further down, and never more than two fifths of
// the column, so that a name at depth 30 keeps most of an 80-column row.
func indentWidth(depth, nameW int) int {
	const steep = 6
	w := 2*min(depth, steep) + max(0, depth-steep)
	return max(0, min(w, nameW*2/5))
}

// The first screen's path (hotPath) goes on into the heaviest child while that child
// holds at least branchShare of its parent's time (hysteresis: the child chosen last
// time needs keepShare, and a sibling must outweigh it by 1/stickShare to take its
// place), so that two callers near a tie do not swap the open path at every refresh.
// Where it stops at a branch, the branches holding openShare of it are opened a level.
const (
	branchShare = 0.5
	keepShare   = 0.45
	stickShare  = 0.95
	openShare   = 0.25
)

// hotPath is the hottest path from the view's top rows: at each step the heaviest
// child, down to where it branches (no child holds branchShare of the frame's time:
// branch is then true), or to the frame whose own time is more than any child's (the
// hottest self frame on the path), or a leaf. prefer is the path chosen last time.
func (t *treePane) hotPath(prefer []foldKey) (path []*group, branch bool) {
	earlier := func(gs []*group, depth int) *group {
		if depth < len(prefer) {
			for _, g := range gs {
				if t.forest.key(g) == prefer[depth] {
					return g
				}
			}
		}
		return nil
	}
	pick := func(gs []*group, depth int) (best *group, kept bool) {
		best = gs[0]
		if e := earlier(gs, depth); e != nil && e.total > 0 && e.total >= stickShare*best.total {
			return e, true
		}
		return best, best == earlier(gs, depth)
	}
	tops := t.topGroups()
	if len(tops) == 0 || tops[0].empty() {
		return nil, false
	}
	g, _ := pick(tops, 0)
	path = []*group{g}
	for {
		kids := t.forest.children(g)
		if len(kids) == 0 {
			return path, false
		}
		c, kept := pick(kids, len(path))
		if g.self >= c.total {
			return path, false
		}
		need := branchShare
		if kept {
			need = keepShare
		}
		if c.total < need*g.total {
			return path, true
		}
		path = append(path, c)
		g = c
	}
}

// openHot opens the hot path of the current mode from a fresh fold state and puts the
// cursor on its last frame: the first screen shows where the time goes without a key
// pressed. At a branch, the frame and its big branches are open too. It reports
// whether there was a path.
func (t *treePane) openHot() bool {
	if t.forest == nil || t.mode.kind == flatView {
		return false
	}
	path, branch := t.hotPath(t.followPath)
	if path == nil {
		return false
	}
	s := t.state()
	s.fold = &foldNode{open: true}
	if s.focus != nil {
		s.fold.walk(s.focus).open = true
	}
	keys := t.keysOf(path)
	n := s.fold.walk(t.base()).openAlong(keys, branch)
	if last := path[len(path)-1]; branch {
		for _, c := range t.forest.children(last) {
			if c.total >= openShare*last.total {
				n.ensure(t.forest.key(c)).open = true
			}
		}
	}
	t.followPath = keys
	t.flatten()
	t.cursor, t.offset = t.findRow(keys), 0
	t.scrollToCursor()
	return true
}
