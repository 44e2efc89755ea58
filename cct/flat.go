package cct

import (
	"cmp"
	"slices"
)

// FuncStat is one function summed over all its contexts. Total counts a sample once even
// when the function is on its stack several times (recursion), so Total <= the tree total.
type FuncStat struct {
	Func        FuncID
	Self, Total Metrics
}

// Flat returns every function that appears in the tree, by Self.Time descending (then
// Self.Samples, Total.Time, Total.Samples descending, then name).
func (t *Tree) Flat() []FuncStat {
	t.Settle()
	stats := make([]FuncStat, len(t.funcs))
	present := make([]bool, len(t.funcs))
	// onPath counts the frames of each function between the root and the current node: a
	// node adds its Total only if it is the outermost frame of its function, and that
	// node's Total already covers every sample through the inner ones.
	onPath := make([]int32, len(t.funcs))
	stack := []NodeID{0}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id < 0 { // leaving ^id
			onPath[t.nodes[^id].Func]--
			continue
		}
		n := &t.nodes[id]
		if id != 0 {
			s := &stats[n.Func]
			s.Self.Add(n.Self)
			if onPath[n.Func] == 0 {
				s.Total.Add(n.Total)
			}
			present[n.Func] = true
			onPath[n.Func]++
			stack = append(stack, ^id)
		}
		for c := n.firstChild; c != NoNode; c = t.nodes[c].nextSibling {
			stack = append(stack, c)
		}
	}
	var out []FuncStat
	for id := range stats {
		if present[id] {
			stats[id].Func = FuncID(id)
			out = append(out, stats[id])
		}
	}
	slices.SortFunc(out, func(a, b FuncStat) int {
		if c := heavierFirst(a.Self, b.Self); c != 0 {
			return c
		}
		if c := heavierFirst(a.Total, b.Total); c != 0 {
			return c
		}
		if c := cmp.Compare(t.funcs[a.Func].Name, t.funcs[b.Func].Name); c != 0 {
			return c
		}
		return cmp.Compare(a.Func, b.Func)
	})
	return out
}
