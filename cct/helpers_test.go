package cct

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files and generated testdata")

// fr is a frame in test notation: name, call-site/pc address, line, inlined.
type fr struct {
	name string
	addr uint64
	line int
	inl  bool
}

// stackOf interns the frames (given root first, as people read stacks) and returns them
// leaf first, as Add takes them. Every function lives in module "/bin/app".
func stackOf(t *Tree, frames ...fr) []Frame {
	out := make([]Frame, len(frames))
	for i, f := range frames {
		id := t.Intern(Func{Name: f.name, Module: "/bin/app", File: "app.c"})
		out[len(frames)-1-i] = Frame{Func: id, Addr: f.addr, Line: f.line, Inlined: f.inl}
	}
	return out
}

// names turns "main;a;b" into frames without addresses.
func names(path string) []fr {
	var out []fr
	for _, n := range strings.Split(path, ";") {
		out = append(out, fr{name: n})
	}
	return out
}

// addPath adds a sample with stack "main;a;b" (root first) and no addresses.
func addPath(t *Tree, path string, tid uint32, m Metrics) NodeID {
	return t.Add(stackOf(t, names(path)...), tid, m)
}

func mustFind(tb testing.TB, t *Tree, path ...string) Node {
	tb.Helper()
	id, ok := t.Find(path...)
	if !ok {
		tb.Fatalf("Find(%q) failed", path)
	}
	return t.Node(id)
}

// dump is a canonical description of a tree that does not depend on NodeIDs or FuncIDs:
// one line per node that has samples, with its full stack (names, modules, files,
// addresses, lines, inline marks), self, total and per-thread selfs; sorted.
func dump(t *Tree) string {
	var lines []string
	for id := 0; id < t.Len(); id++ {
		n := t.Node(NodeID(id))
		if n.Total.IsZero() && n.Self.IsZero() {
			continue
		}
		var sb strings.Builder
		st := t.Stack(NodeID(id))
		for i := len(st) - 1; i >= 0; i-- {
			f := st[i]
			fn := t.Func(f.Func)
			fmt.Fprintf(&sb, "%s[%s|%s|%#x:%d", fn.Name, fn.Module, fn.File, f.Addr, f.Line)
			if f.Inlined {
				sb.WriteString("|inl")
			}
			sb.WriteString("];")
		}
		// A thread entry that sums to zero carries nothing, and files do not keep it.
		thr := slices.DeleteFunc(t.Threads(NodeID(id)), func(ts ThreadSelf) bool { return ts.Self.IsZero() })
		fmt.Fprintf(&sb, " self=%v total=%v threads=%v", n.Self, n.Total, thr)
		lines = append(lines, sb.String())
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// checkInvariants verifies what every tree must satisfy whatever built it.
func checkInvariants(tb testing.TB, t *Tree) {
	tb.Helper()
	for id := 0; id < t.Len(); id++ {
		n := t.Node(NodeID(id))
		sum := n.Self
		for _, c := range t.Children(NodeID(id)) {
			if t.Node(c).Parent != NodeID(id) {
				tb.Errorf("node %d: child %d has parent %d", id, c, t.Node(c).Parent)
			}
			sum.Add(t.Node(c).Total)
		}
		if sum != n.Total {
			tb.Errorf("node %d (%s): total %v != self + children %v", id, t.Func(n.Func).Name, n.Total, sum)
		}
		var thr Metrics
		for _, ts := range t.Threads(NodeID(id)) {
			thr.Add(ts.Self)
		}
		if thr != n.Self {
			tb.Errorf("node %d: self %v != sum over threads %v", id, n.Self, thr)
		}
	}
}
