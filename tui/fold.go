package tui

// foldKey names a row under its parent row in a way that survives refreshes: node ids
// change between snapshots (and merged rows have no single id), function names and call
// sites do not.
type foldKey struct {
	name    string
	site    uint64
	inlined bool
}

// foldNode is the fold state of one path of the view: a trie of the rows that were ever
// expanded. Collapsing keeps the subtree, so re-expanding a row restores what was open
// below it, as in lazygit's file tree. Only expanded rows have nodes, so the trie is as
// big as what the user opened, not as the profile.
type foldNode struct {
	open bool
	// unchain ends any chain at this row (see chain.go): a search that lands inside a
	// chain marks the frame above the match, so the match heads a row of its own.
	unchain bool
	kids    map[foldKey]*foldNode
}

// child returns the state of k under n, nil if it was never expanded.
func (n *foldNode) child(k foldKey) *foldNode {
	if n == nil {
		return nil
	}
	return n.kids[k]
}

// ensure returns the state of k under n, creating it closed.
func (n *foldNode) ensure(k foldKey) *foldNode {
	if c, ok := n.kids[k]; ok {
		return c
	}
	if n.kids == nil {
		n.kids = make(map[foldKey]*foldNode)
	}
	c := &foldNode{}
	n.kids[k] = c
	return c
}

// openAlong opens the nodes along path below n, creating the missing ones, and
// returns the last; the last is opened too only if last is set.
func (n *foldNode) openAlong(path []foldKey, last bool) *foldNode {
	for i, k := range path {
		n = n.ensure(k)
		if i < len(path)-1 || last {
			n.open = true
		}
	}
	return n
}

// walk returns the node at path below n, creating the missing ones.
func (n *foldNode) walk(path []foldKey) *foldNode {
	for _, k := range path {
		n = n.ensure(k)
	}
	return n
}
