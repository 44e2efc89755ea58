package cct

import (
	"cmp"
	"slices"
)

// NodeID indexes a node of one Tree. Nodes are never removed, and a parent always has a
// smaller ID than its children, so a pass in ID order visits parents first.
type NodeID int32

// NoNode is the Parent of the root.
const NoNode NodeID = -1

// Frame is one frame of a sampled stack, as Add takes it.
type Frame struct {
	Func    FuncID
	Addr    uint64 // module-relative pc in this frame: for a non-leaf frame, the call site of the frame below it
	Line    int    // source line of Addr, when known
	Inlined bool   // inlined into the next (outer) frame, whose Addr it shares
}

// Node is one calling context: a function reached from its parent context at a call site.
type Node struct {
	Parent   NodeID
	Func     FuncID
	CallSite uint64 // Addr of the parent frame's call site (0 for children of the root)
	Line     int    // line of the call site in the parent
	Inlined  bool
	// Self counts samples whose stack ends here; Total those whose stack passes through
	// here, so Total = Self + the children's Totals.
	Self, Total Metrics
}

// node is a Node plus the links that keep Add free of allocation once a context exists:
// children and per-thread selfs are intrusive lists rather than per-node slices.
type node struct {
	Node
	firstChild, nextSibling NodeID
	firstThread             int32 // index in Tree.threads, -1 for none
	// The pc and line of this function's own frame when it was a leaf. A node's identity
	// does not include it (the call site is in the parent), but pprof locations and a
	// faithful round trip need one.
	leafAddr uint64
	leafLine int
	hasLeaf  bool
	// ident is a hash of the node's path from the root (identStep), to
	// check in one read that a node Add's cache gave is the stack's.
	ident uint64
}

// childKey is a node's identity under its parent. Inlined is part of it so that an inlined
// and an outlined copy of a function at one address stay apart.
type childKey struct {
	parent   NodeID
	fn       FuncID
	callSite uint64
	inlined  bool
}

type threadKey struct {
	node NodeID
	tid  uint32
}

type threadSelf struct {
	tid       uint32
	next      int32
	firstAddr int32 // index in Tree.addrs, -1 for none (addrs.go)
	m         Metrics
}

// Tree is a calling context tree. It is not safe for concurrent use.
type Tree struct {
	funcs       []Func
	funcIndex   map[funcKey]FuncID
	nodes       []node
	children    map[childKey]NodeID
	threads     []threadSelf
	threadIndex map[threadKey]int32
	// stacks maps a stack's hash (hashStack) to the node Add found for
	// it last; nil until the first Add.
	stacks map[uint64]cachedStack
	// addrs are the per-thread selves' samples by leaf address
	// (addrs.go); addrIndex finds them, nil in a Clone until needed.
	addrs        []addrSelf
	addrIndex    map[addrKey]int32
	addrsDropped int64
	// stale says the totals below the root lag their selves: Add adds
	// to a node's self and the root's total only, and what reads a
	// total settles them all in one pass first (settle).
	stale bool
}

// New returns a tree holding only the root.
func New() *Tree {
	t := &Tree{
		funcs:       []Func{{Name: rootName, Short: rootName}},
		funcIndex:   make(map[funcKey]FuncID),
		children:    make(map[childKey]NodeID),
		threadIndex: make(map[threadKey]int32),
	}
	t.nodes = append(t.nodes, node{
		Node:        Node{Parent: NoNode, Func: RootFunc},
		firstChild:  NoNode,
		nextSibling: NoNode,
		firstThread: -1,
		ident:       rootIdent,
	})
	return t
}

// Root is the synthetic root; its Total is the whole profile, its Self the samples with
// an empty stack.
func (t *Tree) Root() NodeID { return 0 }

// Node returns node id by value.
func (t *Tree) Node(id NodeID) Node {
	t.Settle()
	return t.nodes[id].Node
}

// Len is the number of nodes, the root included: valid IDs are [0, Len()).
func (t *Tree) Len() int { return len(t.nodes) }

// Total is the whole profile.
func (t *Tree) Total() Metrics { return t.nodes[0].Total }

// Add records one sample (or a batch of identical ones) with stack, leaf first, taken on
// thread tid, and returns the leaf's node. The FuncIDs must come from t.Intern. Once the
// context has been seen on that thread, Add does not allocate.
func (t *Tree) Add(stack []Frame, tid uint32, m Metrics) NodeID {
	// Most samples repeat a context already in the tree, on a thread
	// already seen there: the hash of the stack and thread finds the node
	// and the thread's self at once, where a walk down looked every level
	// up in the children map and the thread in its own (1.9 µs for depth
	// 30, BenchmarkAdd). The node's ident, a second and independent hash
	// of the same path, must match, so that a node is taken for another
	// only if both 64-bit hashes of two different paths collide.
	key, ident := stackKey(stack, tid)
	if e, ok := t.stacks[key]; ok && int(e.node) < len(t.nodes) && t.nodes[e.node].ident == ident &&
		int(e.thread) < len(t.threads) && t.threads[e.thread].tid == tid {
		t.addNode(e.node, m)
		t.threads[e.thread].m.Add(m)
		if len(stack) > 0 {
			t.addAddr(e.thread, stack[0].Addr, stack[0].Line, m.Samples)
		}
		return e.node
	}
	id := t.insert(stack)
	ti := t.addSelf(id, tid, m)
	if len(stack) > 0 {
		t.addAddr(ti, stack[0].Addr, stack[0].Line, m.Samples)
	}
	if t.stacks == nil || len(t.stacks) >= maxCachedStacks {
		t.stacks = make(map[uint64]cachedStack)
	}
	t.stacks[key] = cachedStack{id, ti}
	return id
}

// stackKey is Add's cache key for stack on thread tid, and the ident of
// the stack's node.
func stackKey(stack []Frame, tid uint32) (key, ident uint64) {
	key, ident = hashStack(stack)
	key = (key ^ uint64(tid)) * 0xd6e8feb86659fd93
	return key ^ key>>32, ident
}

// cachedStack is what Add's cache holds for a stack on a thread: its node
// and the index of the thread's self there.
type cachedStack struct {
	node   NodeID
	thread int32
}

// maxCachedStacks bounds Add's cache of stacks: past it, the cache starts
// over (what it holds is only a shortcut to nodes the tree keeps).
const maxCachedStacks = 1 << 16

// insert finds or creates the context of stack, walking down from the root.
func (t *Tree) insert(stack []Frame) NodeID {
	id := NodeID(0)
	for i := len(stack) - 1; i >= 0; i-- {
		var callSite uint64
		var line int
		if i+1 < len(stack) {
			callSite, line = stack[i+1].Addr, stack[i+1].Line
		}
		id = t.child(id, stack[i].Func, callSite, line, stack[i].Inlined)
	}
	if len(stack) > 0 {
		t.setLeaf(id, stack[0].Addr, stack[0].Line)
	}
	return id
}

// rootIdent is the root's ident.
const rootIdent = 0x6a09e667f3bcc909

// identStep is the ident of a child of a node with ident parent: what
// makes a context is each level's function, inlining and call site.
func identStep(parent uint64, fn FuncID, callSite uint64, inlined bool) uint64 {
	// One multiply on the chain from level to level: the call site's
	// is off it.
	x := (uint64(fn)<<1 | b2u(inlined)) + callSite*0xc4ceb9fe1a85ec53
	h := (parent ^ x) * 0xff51afd7ed558ccd
	return h ^ h>>32
}

// hashStack returns the key of Add's cache for stack and the ident its
// node has. The key is another hash of the same path, with other
// constants and shifts, so that the two are independent.
func hashStack(stack []Frame) (key, ident uint64) {
	const k = 0x9e3779b97f4a7c15
	key, ident = uint64(len(stack))*k, rootIdent
	for i := len(stack) - 1; i >= 0; i-- {
		f := &stack[i]
		var callSite uint64
		if i+1 < len(stack) {
			callSite = stack[i+1].Addr
		}
		ident = identStep(ident, f.Func, callSite, f.Inlined)
		x := (uint64(f.Func)<<1|b2u(f.Inlined))*0x94d049bb133111eb + callSite
		key = (key ^ x) * k
		key ^= key >> 29
	}
	return key, ident
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (t *Tree) setLeaf(id NodeID, addr uint64, line int) {
	if n := &t.nodes[id]; !n.hasLeaf {
		n.leafAddr, n.leafLine, n.hasLeaf = addr, line, true
	}
}

// child returns the child of parent for (fn, callSite, inlined), creating it. line is
// recorded on creation only: it is a property of the call site.
func (t *Tree) child(parent NodeID, fn FuncID, callSite uint64, line int, inlined bool) NodeID {
	k := childKey{parent, fn, callSite, inlined}
	if t.children == nil {
		t.indexChildren()
	}
	if id, ok := t.children[k]; ok {
		return id
	}
	t.checkFunc(fn)
	id := NodeID(len(t.nodes))
	t.nodes = append(t.nodes, node{
		Node:        Node{Parent: parent, Func: fn, CallSite: callSite, Line: line, Inlined: inlined},
		firstChild:  NoNode,
		nextSibling: t.nodes[parent].firstChild,
		firstThread: -1,
		ident:       identStep(t.nodes[parent].ident, fn, callSite, inlined),
	})
	t.nodes[parent].firstChild = id
	t.children[k] = id
	return id
}

// indexChildren makes the index of the nodes by parent and key that child
// looks them up in, for a Clone that is added to.
func (t *Tree) indexChildren() {
	t.children = make(map[childKey]NodeID, len(t.nodes))
	for id := 1; id < len(t.nodes); id++ {
		n := &t.nodes[id].Node
		t.children[childKey{n.Parent, n.Func, n.CallSite, n.Inlined}] = NodeID(id)
	}
}

// AddSelf adds m to the self of an existing context on thread tid, and to
// the totals above it. The call estimates come this way: they are weights of
// samples already in the tree.
func (t *Tree) AddSelf(id NodeID, tid uint32, m Metrics) { t.addSelf(id, tid, m) }

// ClearCalls zeroes the call estimates everywhere (the flow-corrected ones
// too, which derive from them), before they are set again under new weights.
func (t *Tree) ClearCalls() {
	for i := range t.nodes {
		n := &t.nodes[i]
		n.Self.Calls, n.Self.CallsAdj, n.Total.Calls, n.Total.CallsAdj = 0, 0, 0, 0
		n.Self.CallsFlow, n.Total.CallsFlow = 0, 0
	}
	for i := range t.threads {
		m := &t.threads[i].m
		m.Calls, m.CallsAdj, m.CallsFlow = 0, 0, 0
	}
}

// addSelf adds m as self of id on thread tid, and to the root's total; the
// totals between wait for settle. Adding to every ancestor's total was
// half of Add's time at depth 30, for totals read only when the tree is
// shown, cut or written.
func (t *Tree) addSelf(id NodeID, tid uint32, m Metrics) int32 {
	t.addNode(id, m)
	return t.addThread(id, tid, m)
}

// addNode adds m to the self of id and to the root's total, and leaves
// the totals between stale.
func (t *Tree) addNode(id NodeID, m Metrics) {
	t.nodes[id].Self.Add(m)
	t.nodes[0].Total.Add(m)
	if id != 0 {
		t.stale = true
	}
}

// Settle brings the totals Add deferred up to date. A tree read by other
// goroutines must be settled first (Clone's copy is): a read of a stale
// tree settles it, which writes.
func (t *Tree) Settle() {
	if t.stale {
		t.settle()
	}
}

// settle sets every total to its self plus its children's totals. A
// child's id is always above its parent's (a node is appended after its
// parent, by Add and by Fold), so one pass from the last node down does it.
func (t *Tree) settle() {
	t.stale = false
	for i := range t.nodes {
		t.nodes[i].Total = t.nodes[i].Self
	}
	for i := len(t.nodes) - 1; i > 0; i-- {
		n := &t.nodes[i]
		t.nodes[n.Parent].Total.Add(n.Total)
	}
}

// Children returns the children of id in display order: Total.Time, then Total.Samples,
// descending; ties by name, call site and ID so that the order is the same on every run.
func (t *Tree) Children(id NodeID) []NodeID {
	t.Settle()
	var out []NodeID
	for c := t.nodes[id].firstChild; c != NoNode; c = t.nodes[c].nextSibling {
		out = append(out, c)
	}
	slices.SortFunc(out, t.compareNodes)
	return out
}

// heavierFirst orders weights by time, then samples, the heavier first.
func heavierFirst(a, b Metrics) int {
	if c := cmp.Compare(b.Time, a.Time); c != 0 {
		return c
	}
	return cmp.Compare(b.Samples, a.Samples)
}

func (t *Tree) compareNodes(a, b NodeID) int {
	na, nb := &t.nodes[a], &t.nodes[b]
	if c := heavierFirst(na.Total, nb.Total); c != 0 {
		return c
	}
	if c := cmp.Compare(t.funcs[na.Func].Name, t.funcs[nb.Func].Name); c != 0 {
		return c
	}
	if c := cmp.Compare(na.CallSite, nb.CallSite); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// Path returns the functions from the root's child down to id; empty for the root.
func (t *Tree) Path(id NodeID) []FuncID {
	var out []FuncID
	for x := id; x > 0; x = t.nodes[x].Parent {
		out = append(out, t.nodes[x].Func)
	}
	slices.Reverse(out)
	return out
}

// Stack returns a leaf-first stack that Add maps to id: the inverse of Add. The leaf frame
// carries the pc first seen when id was a leaf (0 if never).
func (t *Tree) Stack(id NodeID) []Frame { return t.appendStack(nil, id) }

// appendStack appends id's stack, as Stack returns it, to dst.
func (t *Tree) appendStack(dst []Frame, id NodeID) []Frame {
	if id <= 0 {
		return dst
	}
	n := &t.nodes[id]
	dst = append(dst, Frame{Func: n.Func, Addr: n.leafAddr, Line: n.leafLine, Inlined: n.Inlined})
	for c := id; n.Parent > 0; {
		p := n.Parent
		n = &t.nodes[p]
		dst = append(dst, Frame{Func: n.Func, Addr: t.nodes[c].CallSite, Line: t.nodes[c].Line, Inlined: n.Inlined})
		c = p
	}
	return dst
}

// Find walks from the root by function names (Name or Short), root side first. Call sites
// are merged: every child with a matching name is tried, in Children order, and the first
// complete match wins. Find() is the root.
func (t *Tree) Find(path ...string) (NodeID, bool) {
	return t.find(0, path)
}

func (t *Tree) find(id NodeID, path []string) (NodeID, bool) {
	if len(path) == 0 {
		return id, true
	}
	for _, c := range t.Children(id) {
		f := &t.funcs[t.nodes[c].Func]
		if f.Name != path[0] && f.Short != path[0] {
			continue
		}
		if r, ok := t.find(c, path[1:]); ok {
			return r, true
		}
	}
	return NoNode, false
}

// ThreadSelf is the self metrics of one context on one thread.
type ThreadSelf struct {
	TID  uint32
	Self Metrics
}

// Threads returns the per-thread self metrics of id, by TID.
func (t *Tree) Threads(id NodeID) []ThreadSelf {
	var out []ThreadSelf
	for i := t.nodes[id].firstThread; i >= 0; i = t.threads[i].next {
		out = append(out, ThreadSelf{t.threads[i].tid, t.threads[i].m})
	}
	slices.SortFunc(out, func(a, b ThreadSelf) int { return cmp.Compare(a.TID, b.TID) })
	return out
}

// ThreadTotals is each thread's self metrics summed over the tree: the
// whole profile of each thread.
func (t *Tree) ThreadTotals() map[uint32]Metrics {
	out := make(map[uint32]Metrics)
	for i := range t.threads {
		m := out[t.threads[i].tid]
		m.Add(t.threads[i].m)
		out[t.threads[i].tid] = m
	}
	return out
}

// SelfOfThreads is one self metric of every node, summed over the threads
// keep accepts.
func (t *Tree) SelfOfThreads(metric func(Metrics) int64, keep func(tid uint32) bool) []float64 {
	w := make([]float64, len(t.nodes))
	for id := range t.nodes {
		for i := t.nodes[id].firstThread; i >= 0; i = t.threads[i].next {
			if th := &t.threads[i]; keep(th.tid) {
				w[id] += float64(metric(th.m))
			}
		}
	}
	return w
}

// TIDs returns every thread that has samples in the tree, ascending.
func (t *Tree) TIDs() []uint32 {
	seen := make(map[uint32]bool)
	var out []uint32
	for i := range t.threads {
		if tid := t.threads[i].tid; !seen[tid] {
			seen[tid] = true
			out = append(out, tid)
		}
	}
	slices.Sort(out)
	return out
}

// Clone returns a deep copy, for handing a snapshot to another goroutine.
func (t *Tree) Clone() *Tree {
	// Settled here, so that the copy, read by another goroutine, never
	// writes its totals.
	t.Settle()
	c := &Tree{
		funcs: slices.Clone(t.funcs),
		nodes: slices.Clone(t.nodes),
		// The indexes Add and Intern find children, per-thread selfs,
		// functions and addresses by are made again if the copy is added
		// to (indexChildren, indexThreads, indexFuncs, addrs.go): a
		// snapshot a second only reads, and they were half of what each
		// clone allocated.
		threads:      slices.Clone(t.threads),
		addrs:        slices.Clone(t.addrs),
		addrsDropped: t.addrsDropped,
	}
	return c
}
