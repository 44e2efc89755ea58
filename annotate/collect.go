package annotate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cctop/cctop/cct"
)

// What a tree says of one function, before any file is read: its weight
// by own source line (the logical view, as go tool pprof -list counts),
// by address of its own machine code (the physical view, as -disasm
// counts, inlined code included), and by line of each function inlined
// into it, under the chain of call sites that inlined it.
//
// The rules are pprof's, at the granularity of each view: a sample's flat
// weight goes to the position of its innermost frame; its cum weight to
// every position of the function on its stack, once per position. A
// function that recurses through one line counts a sample's cum there
// once; through two lines, once at each (pprof's line nodes are distinct).

// weight is a flat and cum pair.
type weight struct{ flat, cum float64 }

// inlKey is a line of a function inlined into the listed one, reached
// through the chain of call sites chain names (Line.Inline, joined).
type inlKey struct {
	at    int // the listed function's line the chain starts at
	chain string
	fn    cct.FuncID
	line  int
}

// addrWeight is one address of the function's physical code.
type addrWeight struct {
	weight
	line int // the function's own line there, 0 if not known
}

// collected is collect's result.
type collected struct {
	flat, cum float64 // the function's, its cum counted once a sample
	total     float64 // the tree's
	lines     map[int]*weight
	inl       map[inlKey]*weight
	addrs     map[uint64]*addrWeight
	// unplaced is the self weight of the function's physical frames that
	// no address holds (a context that never was a leaf with a pc).
	unplaced float64
	physical bool // some context runs the function's own code
}

// collector walks the tree once, keeping which positions of the function
// are on the stack above the current node.
type collector struct {
	t     *cct.Tree
	self  []float64
	fns   []cct.FuncID
	tot   []float64 // subtree totals of self
	first []int32   // children in CSR form: kids[first[id]:first[id+1]]
	kids  []cct.NodeID
	out   *collected

	lineOn map[int]int
	addrOn map[uint64]int
	inlOn  map[inlKey]int
	fnOn   int // the function's frames above the current node

}

// nodeState is what a node passes to its children.
type nodeState struct {
	phys      bool   // its frame is in the function's physical code
	outerLine int    // the function's line at that code, for inlined frames
	chain     string // the inline chain, for frames inlined into the function
	at        int    // the function's line the chain starts at
}

func collect(t *cct.Tree, self []float64, fns []cct.FuncID) *collected {
	n := t.Len()
	c := &collector{
		t: t, self: self, fns: fns,
		tot:    make([]float64, n),
		first:  make([]int32, n+1),
		kids:   make([]cct.NodeID, max(n-1, 0)),
		lineOn: map[int]int{}, addrOn: map[uint64]int{}, inlOn: map[inlKey]int{},
		out: &collected{
			lines: map[int]*weight{}, inl: map[inlKey]*weight{}, addrs: map[uint64]*addrWeight{},
		},
	}
	parents := make([]cct.NodeID, n)
	for id := 1; id < n; id++ {
		p := t.Node(cct.NodeID(id)).Parent
		parents[id] = p
		c.first[p+1]++
	}
	for i := 1; i <= n; i++ {
		c.first[i] += c.first[i-1]
	}
	fill := make([]int32, n)
	copy(fill, c.first[:n])
	for id := 1; id < n; id++ {
		p := parents[id]
		c.kids[fill[p]] = cct.NodeID(id)
		fill[p]++
	}
	// A child's id is above its parent's: one pass from the end sums
	// every subtree.
	for id := n - 1; id >= 0; id-- {
		if id < len(self) {
			c.tot[id] += self[id]
		}
		if id > 0 {
			c.tot[parents[id]] += c.tot[id]
		}
	}
	c.out.total = c.tot[0]
	c.walk(0, nodeState{})
	return c.out
}

// walk visits id and its subtree. Recursion depth is the tree's, which
// cct bounds.
func (c *collector) walk(id cct.NodeID, st nodeState) {
	nd := c.t.Node(id)
	isFn := id != 0 && slices.Contains(c.fns, nd.Func)
	if isFn {
		c.out.flat += c.selfOf(id)
		if c.fnOn == 0 {
			c.out.cum += c.tot[id]
		}
		c.fnOn++
		defer func() { c.fnOn-- }()
	}
	if isFn && !nd.Inlined {
		st = nodeState{phys: true}
		c.out.physical = true
	}
	if s := c.selfOf(id); s != 0 && (isFn || st.phys || st.chain != "") {
		c.leaves(id, nd, s, isFn, st)
	}
	for _, k := range c.kids[c.first[id]:c.first[id+1]] {
		kn := c.t.Node(k)
		T := c.tot[k]
		var undo []func()
		if isFn {
			undo = append(undo, mark(c.lineOn, kn.Line, T, func() *float64 { return &c.line(kn.Line).cum }))
		}
		if st.phys && !kn.Inlined {
			a := c.addr(kn.CallSite)
			if a.line == 0 {
				a.line = st.outerLine
				if isFn {
					a.line = kn.Line
				}
			}
			undo = append(undo, mark(c.addrOn, kn.CallSite, T, func() *float64 { return &a.cum }))
		}
		if st.chain != "" {
			key := inlKey{st.at, st.chain, nd.Func, kn.Line}
			undo = append(undo, mark(c.inlOn, key, T, func() *float64 { return &c.inl(key).cum }))
		}
		kst := nodeState{}
		if kn.Inlined && st.phys {
			kst.phys = true
			kst.outerLine = st.outerLine
			if isFn {
				kst.outerLine = kn.Line
			}
			// The chain is of the function and what was inlined into it:
			// an inlined frame of the function itself starts over.
			if !slices.Contains(c.fns, kn.Func) {
				f := c.t.Func(nd.Func)
				kst.chain = joinChain(st.chain, f.Name, f.File, kn.Line)
				kst.at = st.at
				if isFn {
					kst.at = kn.Line
				}
			}
		}
		if T != 0 {
			c.walk(k, kst)
		}
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// mark counts weight T at position key of on, unless the position is on
// the stack already, and returns what takes the position off again.
func mark[K comparable](on map[K]int, key K, T float64, cum func() *float64) func() {
	if on[key] == 0 {
		*cum() += T
	}
	on[key]++
	return func() {
		if on[key]--; on[key] == 0 {
			delete(on, key)
		}
	}
}

// leaves shares self weight s of node id over its leaf addresses.
func (c *collector) leaves(id cct.NodeID, nd cct.Node, s float64, isFn bool, st nodeState) {
	addrs := c.t.LeafAddrs(id, nil)
	var sum int64
	for _, a := range addrs {
		sum += a.Samples
	}
	// What the tree counted under no address (past its bound of
	// addresses, or metrics without samples) is the context's first
	// leaf address's, as the pprof writer puts it.
	if rest := nd.Self.Samples - sum; rest > 0 || len(addrs) == 0 {
		leaf := c.t.Stack(id)
		first := cct.AddrCount{Samples: max(rest, 0)}
		if len(leaf) > 0 {
			first.Addr, first.Line = leaf[0].Addr, leaf[0].Line
		}
		merged := false
		for i := range addrs {
			if addrs[i].Addr == first.Addr {
				addrs[i].Samples += first.Samples
				merged = true
			}
		}
		if !merged {
			addrs = append(addrs, first)
		}
		sum += first.Samples
	}
	for _, a := range addrs {
		w := s / float64(len(addrs))
		if sum > 0 {
			w = s * float64(a.Samples) / float64(sum)
		}
		if w == 0 {
			continue
		}
		if isFn {
			l := c.line(a.Line)
			l.flat += w
			if c.lineOn[a.Line] == 0 {
				l.cum += w
			}
		}
		if st.phys {
			if a.Addr == 0 {
				c.out.unplaced += w
			} else {
				aw := c.addr(a.Addr)
				if aw.line == 0 {
					aw.line = st.outerLine
					if isFn {
						aw.line = a.Line
					}
				}
				aw.flat += w
				if c.addrOn[a.Addr] == 0 {
					aw.cum += w
				}
			}
		}
		if st.chain != "" {
			key := inlKey{st.at, st.chain, nd.Func, a.Line}
			l := c.inl(key)
			l.flat += w
			if c.inlOn[key] == 0 {
				l.cum += w
			}
		}
	}
}

func (c *collector) selfOf(id cct.NodeID) float64 {
	if int(id) < len(c.self) {
		return c.self[id]
	}
	return 0
}

func (c *collector) line(l int) *weight        { return entry(c.out.lines, l) }
func (c *collector) addr(a uint64) *addrWeight { return entry(c.out.addrs, a) }
func (c *collector) inl(k inlKey) *weight      { return entry(c.out.inl, k) }

// entry is m's value for k, made on first use.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	v := m[k]
	if v == nil {
		v = new(V)
		m[k] = v
	}
	return v
}

// chainSep joins the entries of an inline chain in an inlKey.
const chainSep = "\x00"

// joinChain appends "name (file:line)" to chain.
func joinChain(chain, name, file string, line int) string {
	e := name + " (" + file + ":" + strconv.Itoa(line) + ")"
	if file == "" {
		e = name + " (line " + strconv.Itoa(line) + ")"
	}
	if chain == "" {
		return e
	}
	return chain + chainSep + e
}

// splitChain is joinChain's entries.
func splitChain(chain string) []string { return strings.Split(chain, chainSep) }
