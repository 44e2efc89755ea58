package cct

import (
	"slices"
	"strings"
)

// OtherName is the node that cold contexts fold into when the tree is capped: one per
// parent, holding the samples of every context folded there as its self.
const OtherName = "[other]"

// TruncatedName is the frame above stacks that do not reach a thread's entry: their
// outermost frames are missing, and at the top level they would pass for roots.
const TruncatedName = "[truncated]"

// ProbesName is the frame that stands for the kernel's handling of a cctop
// counting probe (the int3 trap and the uprobe handlers): a sample taken
// there is time the target spent because cctop counts calls, and sits
// under the probed function as this one frame rather than as a kernel path.
const ProbesName = "[cctop probes]"

// offCPUPrefix begins the leaf frame of an off-CPU stack, which names why
// the thread was off the CPU: "[off-cpu: futex]", "[off-cpu: preempted]".
const offCPUPrefix = "[off-cpu: "

// OffCPUFrame is the name of the leaf frame of off-CPU stacks for reason.
func OffCPUFrame(reason string) string { return offCPUPrefix + reason + "]" }

// OffCPUReason is the reason an OffCPUFrame names, and whether name is one.
func OffCPUReason(name string) (string, bool) {
	r, ok := strings.CutPrefix(name, offCPUPrefix)
	if !ok || !strings.HasSuffix(r, "]") {
		return "", false
	}
	return r[:len(r)-1], true
}

// Fold bounds the tree to at most keep nodes, the root included: the contexts with the
// fewest samples (Total.Samples) fold into an [other] child of their nearest kept ancestor,
// whose self takes their samples, so every total above stays as it was. Cold means cold
// over the whole subtree, and a parent has at least its children's samples, so the kept
// nodes always form a tree from the root. Contexts with equal samples are kept or folded
// together. Node ids change: remap[old] is each old node's new id, for per-node data held
// elsewhere (a sample log, weights); folded counts the contexts folded away. A tree within
// keep is left alone and remap is nil.
func (t *Tree) Fold(keep int) (remap []NodeID, folded int) {
	keep = max(keep, 2)
	if len(t.nodes) <= keep {
		return nil, 0
	}
	t.Settle()
	score := func(id int) int64 { return t.nodes[id].Total.Samples }
	// The smallest threshold whose kept nodes plus the [other] nodes they need fit in keep:
	// raising it never adds nodes (a node leaving the tree adds at most its parent's
	// [other]), so a binary search over the distinct scores finds it.
	scores := make([]int64, 0, len(t.nodes)-1)
	for i := 1; i < len(t.nodes); i++ {
		scores = append(scores, score(i))
	}
	slices.Sort(scores)
	scores = slices.Compact(scores)
	mark := make([]int32, len(t.nodes)) // parents given an [other] in round mark
	round := int32(0)
	needs := func(min int64) int {
		round++
		n := 1 // the root
		for i := 1; i < len(t.nodes); i++ {
			if score(i) >= min {
				n++
			} else if p := t.nodes[i].Parent; (p == 0 || score(int(p)) >= min) && mark[p] != round {
				mark[p] = round
				n++
			}
		}
		return n
	}
	lo, hi := 0, len(scores) // the answer is scores[k] for the first k that fits; len: fold all
	for lo < hi {
		mid := (lo + hi) / 2
		if needs(scores[mid]) <= keep {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	threshold := int64(1<<63 - 1)
	if lo < len(scores) {
		threshold = scores[lo]
	}

	other := t.Intern(Func{Name: OtherName})
	nt := &Tree{
		funcs:       t.funcs,
		funcIndex:   t.funcIndex,
		children:    make(map[childKey]NodeID, keep),
		threadIndex: make(map[threadKey]int32),
	}
	nt.nodes = append(make([]node, 0, keep), node{
		Node:        Node{Parent: NoNode, Func: RootFunc, Self: t.nodes[0].Self, Total: t.nodes[0].Total},
		firstChild:  NoNode,
		nextSibling: NoNode,
		firstThread: -1,
		ident:       rootIdent,
	})
	remap = make([]NodeID, len(t.nodes))
	kept := make([]bool, len(t.nodes))
	kept[0] = true
	for i := 1; i < len(t.nodes); i++ {
		o := &t.nodes[i]
		parent := remap[o.Parent]
		var id NodeID
		switch {
		case !kept[o.Parent]:
			id = parent // inside a folded subtree: into the same [other]
		case score(i) >= threshold:
			kept[i] = true
			id = nt.child(parent, o.Func, o.CallSite, o.Line, o.Inlined)
			n := &nt.nodes[id]
			n.Self.Add(o.Self)
			n.Total.Add(o.Total)
			if o.hasLeaf {
				n.leafAddr, n.leafLine, n.hasLeaf = o.leafAddr, o.leafLine, true
			}
		default:
			folded++
			id = nt.child(parent, other, 0, 0, false)
		}
		remap[i] = id
		if !kept[i] {
			n := &nt.nodes[id]
			n.Self.Add(o.Self)
			n.Total.Add(o.Self)
		}
	}
	for i := range t.nodes {
		for j := t.nodes[i].firstThread; j >= 0; j = t.threads[j].next {
			ti := nt.addThread(remap[i], t.threads[j].tid, t.threads[j].m)
			if kept[i] {
				// A folded node mixes functions: no addresses.
				nt.copyAddrs(ti, t, j)
			}
		}
	}
	nt.addrsDropped += t.addrsDropped
	*t = *nt
	return remap, folded
}

// OtherSamples counts the samples folded into [other] nodes.
func (t *Tree) OtherSamples() int64 { return t.SamplesOf(OtherName) }

// SamplesOf counts the samples whose stack ends in a function named name
// (the self samples of its nodes): for frames that stand for a whole kind
// of time, as OtherName and ProbesName do.
func (t *Tree) SamplesOf(name string) int64 {
	var n int64
	for i := 1; i < len(t.nodes); i++ {
		if nd := &t.nodes[i]; t.funcs[nd.Func].Name == name {
			n += nd.Self.Samples
		}
	}
	return n
}

// indexThreads makes the index addThread finds per-thread selfs by, for a
// Clone that is added to.
func (t *Tree) indexThreads() {
	t.threadIndex = make(map[threadKey]int32, len(t.threads))
	for id := range t.nodes {
		for i := t.nodes[id].firstThread; i >= 0; i = t.threads[i].next {
			t.threadIndex[threadKey{NodeID(id), t.threads[i].tid}] = i
		}
	}
}

// addThread adds m to the self of id on thread tid only, not to the node: addSelf has
// done that, or Fold, which moves per-thread selfs onto nodes it has summed already.
func (t *Tree) addThread(id NodeID, tid uint32, m Metrics) int32 {
	k := threadKey{id, tid}
	if t.threadIndex == nil {
		t.indexThreads()
	}
	if i, ok := t.threadIndex[k]; ok {
		t.threads[i].m.Add(m)
		return i
	}
	i := int32(len(t.threads))
	t.threads = append(t.threads, threadSelf{tid: tid, next: t.nodes[id].firstThread, firstAddr: -1, m: m})
	t.nodes[id].firstThread = i
	t.threadIndex[k] = i
	return i
}

// Remap moves per-node values w of a tree before Fold onto the folded tree's n nodes,
// summing those that folded together.
func Remap(w []float64, remap []NodeID, n int) []float64 {
	out := make([]float64, n)
	for i, v := range w {
		if i < len(remap) {
			out[remap[i]] += v
		}
	}
	return out
}
