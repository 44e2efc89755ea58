package flow

// cycleFinder tells which nodes of a set lie on a cycle of the subgraph the
// set induces: Tarjan's strongly connected components, where a node is on
// a cycle iff its component has another node or it has an edge to itself.
// This, not loop headers, is how FDOM asks "does every cycle through y pass
// through x", so irreducible graphs need no special case.
//
// One finder serves every set of a function: stamps instead of clearing
// keep each run O(|set| + edges leaving the set's nodes), and the walk is
// iterative because a function of thousands of blocks must not recurse
// that deep.
type cycleFinder struct {
	g          digraph
	stamp      uint32
	in         []uint32 // in[v] == stamp: v is in the set
	seen       []uint32 // seen[v] == stamp: v has an index
	cyc        []uint32 // cyc[v] == stamp: v is on a cycle within the set
	index, low []int32
	onStack    []bool
	set        []int32
	stack      []int32
	frames     []sccFrame
}

type sccFrame struct{ v, i int32 }

func newCycleFinder(g digraph) *cycleFinder {
	n := g.len()
	return &cycleFinder{
		g:       g,
		in:      make([]uint32, n),
		seen:    make([]uint32, n),
		cyc:     make([]uint32, n),
		index:   make([]int32, n),
		low:     make([]int32, n),
		onStack: make([]bool, n),
	}
}

// reset starts a new, empty set.
func (c *cycleFinder) reset() {
	c.stamp++
	c.set = c.set[:0]
}

// add puts v in the set; adding it twice is harmless.
func (c *cycleFinder) add(v int32) {
	if c.in[v] != c.stamp {
		c.in[v] = c.stamp
		c.set = append(c.set, v)
	}
}

// onCycle reports v on a cycle of the set; valid after run, until reset.
func (c *cycleFinder) onCycle(v int32) bool { return c.cyc[v] == c.stamp }

func (c *cycleFinder) run() {
	next := int32(0)
	for _, root := range c.set {
		if c.seen[root] == c.stamp {
			continue
		}
		c.visit(root, &next)
		for len(c.frames) > 0 {
			f := &c.frames[len(c.frames)-1]
			v := f.v
			if s := c.g.succ(v); int(f.i) < len(s) {
				w := s[f.i]
				f.i++
				switch {
				case c.in[w] != c.stamp:
				case w == v:
					c.cyc[v] = c.stamp
				case c.seen[w] != c.stamp:
					c.visit(w, &next)
				case c.onStack[w]:
					c.low[v] = min(c.low[v], c.index[w])
				}
				continue
			}
			c.frames = c.frames[:len(c.frames)-1]
			if len(c.frames) > 0 {
				p := c.frames[len(c.frames)-1].v
				c.low[p] = min(c.low[p], c.low[v])
			}
			if c.low[v] != c.index[v] {
				continue
			}
			// v roots a component: everything above it on the stack.
			top := len(c.stack) - 1
			for c.stack[top] != v {
				top--
			}
			comp := c.stack[top:]
			for _, w := range comp {
				c.onStack[w] = false
				if len(comp) > 1 {
					c.cyc[w] = c.stamp
				}
			}
			c.stack = c.stack[:top]
		}
	}
}

func (c *cycleFinder) visit(v int32, next *int32) {
	c.seen[v] = c.stamp
	c.index[v] = *next
	c.low[v] = *next
	*next++
	c.onStack[v] = true
	c.stack = append(c.stack, v)
	c.frames = append(c.frames, sccFrame{v, 0})
}
