package cct

import (
	"maps"
	"slices"
)

// Relabel gives every context the function to[f] in place of its function f, and merges
// the contexts that become equal: the same parent, function, call site and inlining, as
// Add would have found one for the other. It is for names that arrive after the samples
// they name (a JIT's perf map written late): functions that stood for one pc each become
// the function the pc is now known to be in, or merge into one name when it never will be.
//
// Merged contexts sum their metrics, per thread too; a merged context keeps the call-site
// line and the leaf pc of the first of them (the lowest id) that had one. Functions past
// len(to), RootFunc, and entries that are not functions of t (0, or past NumFuncs) keep
// their function. Functions are never removed: one relabeled away stays interned, in no
// context.
//
// Node ids change, parents still before their children: remap[old] is each old node's
// new id, as Fold returns it, for per-node data held elsewhere (a sample log, weights).
// Where no contexts merge (Len is as it was) every id stays the same. When no context's
// function changes, the tree is left alone and remap is nil.
func (t *Tree) Relabel(to []FuncID) (remap []NodeID) {
	nt, remap := t.relabeled(to, false)
	if nt != nil {
		*t = *nt
	}
	return remap
}

// Relabeled is Relabel on a copy: t is left as it is, and the tree returned, nil when no
// context's function changes, is settled and shares nothing with t, as a Clone.
func (t *Tree) Relabeled(to []FuncID) (*Tree, []NodeID) {
	return t.relabeled(to, true)
}

// relabeled builds Relabel's tree, with t's functions or a copy of them.
func (t *Tree) relabeled(to []FuncID, copyFuncs bool) (*Tree, []NodeID) {
	fn := func(f FuncID) FuncID {
		if f != RootFunc && int(f) < len(to) {
			if g := to[f]; g != RootFunc && int(g) < len(t.funcs) {
				return g
			}
		}
		return f
	}
	changed := false
	for i := 1; i < len(t.nodes); i++ {
		if f := t.nodes[i].Func; fn(f) != f {
			changed = true
			break
		}
	}
	if !changed {
		return nil, nil
	}
	nt := &Tree{
		funcs:       t.funcs,
		funcIndex:   t.funcIndex,
		children:    make(map[childKey]NodeID, len(t.children)),
		threads:     make([]threadSelf, 0, len(t.threads)),
		threadIndex: make(map[threadKey]int32, len(t.threadIndex)),
	}
	if copyFuncs {
		nt.funcs, nt.funcIndex = slices.Clone(t.funcs), maps.Clone(t.funcIndex)
	}
	root := t.nodes[0]
	root.firstChild, root.nextSibling, root.firstThread, root.ident = NoNode, NoNode, -1, rootIdent
	nt.nodes = append(make([]node, 0, len(t.nodes)), root)
	remap := make([]NodeID, len(t.nodes))
	for i := 1; i < len(t.nodes); i++ {
		o := &t.nodes[i]
		id := nt.child(remap[o.Parent], fn(o.Func), o.CallSite, o.Line, o.Inlined)
		n := &nt.nodes[id]
		n.Self.Add(o.Self)
		if o.hasLeaf && !n.hasLeaf {
			n.leafAddr, n.leafLine, n.hasLeaf = o.leafAddr, o.leafLine, true
		}
		remap[i] = id
	}
	for i := range t.nodes {
		for j := t.nodes[i].firstThread; j >= 0; j = t.threads[j].next {
			nt.copyAddrs(nt.addThread(remap[i], t.threads[j].tid, t.threads[j].m), t, j)
		}
	}
	nt.addrsDropped = t.addrsDropped
	// The totals from the selfs, t's being possibly stale.
	nt.settle()
	return nt, remap
}
