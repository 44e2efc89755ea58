package tui

import (
	"cmp"
	"slices"
	"strings"
	"unicode"

	"github.com/cctop/cctop/cct"
)

// structure is one cct.Tree as flat arrays: parents, functions, call sites and a
// children index. Views walk these instead of calling Tree methods per node (Node copies a
// whole struct, Children sorts and allocates). It depends on the tree alone, so snapshots
// that share a tree share it.
type structure struct {
	tree     *cct.Tree
	parent   []cct.NodeID
	fn       []cct.FuncID
	site     []uint64
	line     []int32
	inlined  []bool
	kidStart []int32 // the children of id are kids[kidStart[id]:kidStart[id+1]]
	kids     []cct.NodeID
	names    []string // by FuncID: full name, the fold key and what search matches
	fulls    []string // names fit for a terminal (see printable)
	shorts   []string // short names fit for a terminal
	files    []string
	// noCalls marks, by FuncID, the frames whose call count means nothing: kernel
	// frames (what a clock sample interrupts there was not called by the target),
	// [truncated] and [cctop probes].
	noCalls []bool
	// process marks, by FuncID, the process frames at the top of a profile of
	// several (cct.ProcessModule).
	process []bool
	// byComm is, for a process frame, the first process frame of its comm (the
	// row that stands for them all when processes are merged by name); comms their
	// comms.
	byComm []cct.FuncID
	comms  []string
	// procOf is, by node, the process frame at the top of its path (0: none, a profile
	// of one process).
	procOf []cct.FuncID
	probes cct.FuncID // the [cctop probes] frame, noFunc if the profile has none

	byName map[string]cct.FuncID // full name to function, built on first use (see display)
}

func newStructure(t *cct.Tree) *structure {
	n := t.Len()
	s := &structure{
		tree:     t,
		parent:   make([]cct.NodeID, n),
		fn:       make([]cct.FuncID, n),
		site:     make([]uint64, n),
		line:     make([]int32, n),
		inlined:  make([]bool, n),
		kidStart: make([]int32, n+1),
		kids:     make([]cct.NodeID, max(n-1, 0)),
	}
	for id := range n {
		nd := t.Node(cct.NodeID(id))
		s.parent[id], s.fn[id], s.site[id], s.line[id], s.inlined[id] = nd.Parent, nd.Func, nd.CallSite, int32(nd.Line), nd.Inlined
		if id > 0 {
			s.kidStart[nd.Parent+1]++
		}
	}
	for i := 1; i <= n; i++ {
		s.kidStart[i] += s.kidStart[i-1]
	}
	next := make([]int32, n)
	copy(next, s.kidStart[:n])
	for id := 1; id < n; id++ {
		p := s.parent[id]
		s.kids[next[p]] = cct.NodeID(id)
		next[p]++
	}
	nf := t.NumFuncs()
	s.names, s.fulls, s.shorts, s.files = make([]string, nf), make([]string, nf), make([]string, nf), make([]string, nf)
	s.noCalls, s.probes = make([]bool, nf), noFunc
	s.process = make([]bool, nf)
	s.byComm, s.comms = make([]cct.FuncID, nf), make([]string, nf)
	firstOf := map[string]cct.FuncID{}
	for i := range nf {
		f := t.Func(cct.FuncID(i))
		s.names[i], s.fulls[i], s.shorts[i], s.files[i] = f.Name, printable(f.Name), printable(f.Short), f.File
		s.noCalls[i] = f.Module == kernelModule || f.Name == cct.TruncatedName || f.Name == cct.ProbesName || f.IsProcess()
		s.process[i] = f.IsProcess()
		s.byComm[i] = cct.FuncID(i)
		if f.IsProcess() {
			s.comms[i] = printable(cmp.Or(f.Comm(), f.Short))
			if first, ok := firstOf[s.comms[i]]; ok {
				s.byComm[i] = first
			} else {
				firstOf[s.comms[i]] = cct.FuncID(i)
			}
		}
		if f.Name == cct.ProbesName && s.probes == noFunc {
			s.probes = cct.FuncID(i)
		}
	}
	if slices.Contains(s.process, true) {
		s.procOf = make([]cct.FuncID, n)
		for id := 1; id < n; id++ { // parents come before their children
			switch par := s.parent[id]; {
			case par == 0 && s.process[s.fn[id]]:
				s.procOf[id] = s.fn[id]
			case par > 0:
				s.procOf[id] = s.procOf[par]
			}
		}
	}
	return s
}

const (
	noFunc = ^cct.FuncID(0)
	// kernelModule is the kernel's module as the symbol layer and pprof files name it.
	kernelModule = "[kernel.kallsyms]"
)

// printable replaces control characters: a symbol name comes from the target's binary,
// and an escape sequence or newline in it must not reach the terminal or break a row.
func printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, s)
}

// display is the full name of a function as the rows show it: fit for a terminal, full
// or short. Fold keys hold full names; the header shows a focus path with this.
func (s *structure) display(name string, full bool) string {
	if s.byName == nil {
		s.byName = make(map[string]cct.FuncID, len(s.names))
		for i := len(s.names) - 1; i >= 0; i-- { // the first of equal names wins
			s.byName[s.names[i]] = cct.FuncID(i)
		}
	}
	fn, ok := s.byName[name]
	switch {
	case !ok:
		return printable(name)
	case full:
		return s.fulls[fn]
	}
	return s.shorts[fn]
}

// sameTree reports whether s still describes t: snapshots are immutable, so the same
// pointer with the same size is the same tree.
func (s *structure) sameTree(t *cct.Tree) bool {
	return s != nil && s.tree == t && len(s.parent) == t.Len() && len(s.names) == t.NumFuncs()
}

func (s *structure) children(id cct.NodeID) []cct.NodeID {
	return s.kids[s.kidStart[id]:s.kidStart[id+1]]
}

// profile is a structure with weights: the shown profile and the comparison, self and
// total per node. It is rebuilt when the snapshot or the thread filter changes, never per
// frame.
type profile struct {
	*structure
	metric          string
	unit            string // of the time metric: a sample type's
	diff            bool   // the metric column is the weight minus the comparison's
	self, total     []float64
	cmpSelf, cmpTot []float64 // nil: no comparison
	grand, cmpGrand float64   // the root totals: 100%
	// pending: the weights are only the shape of a thread not weighed yet (its samples
	// per context), which orders the rows; rows show zero.
	pending bool
}

// newProfile sums self weights into totals. self and cmp may be shorter than the tree
// (a missing node weighs 0) or longer (the excess is ignored).
func newProfile(st *structure, metric string, self, cmp []float64) *profile {
	p := &profile{structure: st, metric: metric}
	p.self, p.total = totals(len(st.parent), st.parent, self)
	p.grand = at(p.total, 0)
	if cmp != nil {
		p.cmpSelf, p.cmpTot = totals(len(st.parent), st.parent, cmp)
		p.cmpGrand = at(p.cmpTot, 0)
	}
	return p
}

// totals returns self resized to n and the totals it implies. Parents have smaller ids
// than their children, so one pass from the end adds every node into its parent after
// its own children have been added into it.
func totals(n int, parent []cct.NodeID, self []float64) (s, t []float64) {
	s = make([]float64, n)
	copy(s, self)
	t = make([]float64, n)
	copy(t, s)
	for id := n - 1; id > 0; id-- {
		t[parent[id]] += t[id]
	}
	return s, t
}

func at(xs []float64, i int) float64 {
	if i < len(xs) {
		return xs[i]
	}
	return 0
}

// share is x as a percentage of total (0 for an empty profile).
func share(x, total float64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * x / total
}
