package cct

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRelabelMerges: placeholders of one pc each (as a JIT's unnamed code gets) become the
// function a late perf map names, or their mapping's one name; contexts that become equal
// merge with their metrics, per thread, and the first leaf pc; call sites keep contexts
// apart as Add does; remap says where each old node went.
func TestRelabelMerges(t *testing.T) {
	tr := New()
	fn := func(name, file string) FuncID { return tr.Intern(Func{Name: name, Module: "//anon", File: file}) }
	mainF := tr.Intern(Func{Name: "main", Module: "/bin/app"})
	p1, p2, p3 := fn("[anon]", "pc 0x10"), fn("[anon]", "pc 0x20"), fn("[anon]", "pc 0x30")
	named := tr.Intern(Func{Name: "hot", Module: "[jit]"})
	anon := fn("[anon]", "")
	g := tr.Intern(Func{Name: "g", Module: "/bin/app"})
	add := func(tid uint32, m Metrics, frames ...Frame) NodeID { return tr.Add(frames, tid, m) }
	at := func(f FuncID, addr uint64) Frame { return Frame{Func: f, Addr: addr} }
	m := func(n int64) Metrics { return Metrics{Samples: n, Time: 10 * n} }
	old := map[string]NodeID{
		"p1":   add(1, m(1), at(p1, 0x10), at(mainF, 0x100)),
		"p2":   add(2, m(2), at(p2, 0x20), at(mainF, 0x100)),
		"p3":   add(1, m(4), at(p3, 0x30), at(mainF, 0x100)),
		"hot":  add(1, m(8), at(named, 0x40), at(mainF, 0x100)),
		"p1g":  add(1, m(16), at(g, 0x500), at(p1, 0x11), at(mainF, 0x100)),
		"p2g":  add(2, m(32), at(g, 0x500), at(p2, 0x21), at(mainF, 0x100)),
		"p1@2": add(1, m(64), at(p1, 0x12), at(mainF, 0x200)), // another call site
	}
	old["p1"] = add(3, m(128), at(p1, 0x10), at(mainF, 0x100)) // a third thread, same context
	before := tr.Clone()
	n0 := tr.Len()

	to := make([]FuncID, tr.NumFuncs())
	for i := range to {
		to[i] = FuncID(i)
	}
	to[p1], to[p2], to[p3] = named, named, anon
	// On a copy first: the tree stays as it was.
	cp, cpRemap := tr.Relabeled(to)
	if cp == nil || dump(tr) != dump(before) || tr.Len() != n0 {
		t.Fatal("Relabeled changed the tree, or made no copy")
	}
	cp.Intern(Func{Name: "only in the copy"})
	if tr.NumFuncs() == cp.NumFuncs() {
		t.Error("the copy shares its functions with the tree")
	}
	remap := tr.Relabel(to)
	if dump(cp) != dump(tr) || fmt.Sprint(cpRemap) != fmt.Sprint(remap) {
		t.Errorf("the copy differs from the tree relabeled in place:\n%s\nwant\n%s", dump(cp), dump(tr))
	}
	if len(remap) != n0 {
		t.Fatalf("remap of %d for %d nodes", len(remap), n0)
	}
	checkConsistent(t, tr)
	checkInvariants(t, tr)
	if tr.Total() != before.Total() {
		t.Errorf("total %+v, was %+v", tr.Total(), before.Total())
	}
	// main, hot@0x100 (p1, p2, hot), [anon] (p3), g under hot at 0x11 and 0x21, hot@0x200.
	if got := tr.Len(); got != 7 {
		t.Errorf("%d nodes after the merge, want 7", got)
	}
	merged := remap[old["hot"]]
	if remap[old["p1"]] != merged || remap[old["p2"]] != merged {
		t.Errorf("remap: p1 %d, p2 %d, hot %d: want one node", remap[old["p1"]], remap[old["p2"]], merged)
	}
	if remap[old["p3"]] == merged || remap[old["p1@2"]] == merged || remap[old["p1g"]] == remap[old["p2g"]] {
		t.Errorf("contexts apart by function or call site merged: %v", remap)
	}
	n := tr.Node(merged)
	if n.Func != named || n.Self != m(1+2+8+128) || n.CallSite != 0x100 {
		t.Errorf("merged node %+v", n)
	}
	if got := fmt.Sprint(tr.Threads(merged)); got != fmt.Sprint([]ThreadSelf{{1, m(9)}, {2, m(2)}, {3, m(128)}}) {
		t.Errorf("merged threads %s", got)
	}
	// The leaf pc of the first context merged (p1's), as Stack gives it back.
	if st := tr.Stack(merged); st[0].Addr != 0x10 || st[0].Func != named {
		t.Errorf("leaf frame %+v, want hot at 0x10", st[0])
	}
	if n := tr.Node(remap[old["p3"]]); n.Func != anon || n.Self != m(4) {
		t.Errorf("unnamed placeholder: %+v", n)
	}
	for _, k := range []string{"p1g", "p2g"} {
		if n := tr.Node(remap[old[k]]); n.Parent != merged || n.Func != g {
			t.Errorf("%s: %+v, want g under the merged node", k, n)
		}
	}
	if n := tr.Node(remap[old["p1@2"]]); n.Func != named || n.CallSite != 0x200 || n.Self != m(64) {
		t.Errorf("other call site: %+v", n)
	}
	for id := 1; id < tr.Len(); id++ {
		if p := tr.Node(NodeID(id)).Parent; p >= NodeID(id) {
			t.Errorf("node %d has parent %d: parents must come first", id, p)
		}
	}
	// Add finds the merged contexts, and a stack with the old function still makes one.
	if id := add(1, m(1), at(named, 0x44), at(mainF, 0x100)); id != merged {
		t.Errorf("Add of the named stack went to %d, not the merged %d", id, merged)
	}
	if id := add(1, m(1), at(p1, 0x10), at(mainF, 0x100)); id == merged || tr.Node(id).Func != p1 {
		t.Errorf("Add of a placeholder after the merge: node %d", id)
	}
	checkConsistent(t, tr)

	// A function renamed where nothing merges: the ids stay.
	solo := tr.Intern(Func{Name: "solo"})
	to = make([]FuncID, tr.NumFuncs())
	for i := range to {
		to[i] = FuncID(i)
	}
	to[g] = solo
	n1 := tr.Len()
	again := tr.Relabel(to)
	for i, id := range again {
		if id != NodeID(i) || tr.Len() != n1 {
			t.Fatalf("no merge, yet node %d became %d (%d nodes, were %d)", i, id, tr.Len(), n1)
		}
	}
	if n := tr.Node(remap[old["p1g"]]); n.Func != solo {
		t.Errorf("g not renamed: %+v", n)
	}
	checkConsistent(t, tr)

	// Nothing changes: the tree is left alone.
	n1 = tr.Len()
	if r := tr.Relabel(to[:0]); r != nil || tr.Len() != n1 {
		t.Errorf("identity relabel: remap %v, %d nodes (was %d)", r, tr.Len(), n1)
	}
	// Entries that are no functions of the tree are ignored, not a panic.
	bad := make([]FuncID, tr.NumFuncs())
	for i := range bad {
		bad[i] = FuncID(i)
	}
	bad[RootFunc], bad[mainF], bad[p1], bad[g] = g, RootFunc, FuncID(tr.NumFuncs()+5), ^FuncID(0)
	if r := tr.Relabel(bad); r != nil {
		t.Errorf("relabel with no valid entry changed the tree: %v", r)
	}
}

// TestRelabelAsIfNamed: a random tree relabeled is the tree the same samples make when
// added with the new functions in the first place.
func TestRelabelAsIfNamed(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		type sample struct {
			path string
			tid  uint32
		}
		var samples []sample
		for range 2000 {
			depth := 1 + r.IntN(5)
			var parts []string
			for range depth {
				parts = append(parts, fmt.Sprintf("f%d", r.IntN(12)))
			}
			samples = append(samples, sample{strings.Join(parts, ";"), uint32(1 + r.IntN(3))})
		}
		// f0..f11 are interned in order: f_i -> f_(i/3*3) for the even i.
		rename := func(name string) string {
			var i int
			fmt.Sscanf(name, "f%d", &i)
			if i%2 == 0 {
				return fmt.Sprintf("f%d", i/3*3)
			}
			return name
		}
		tr, want := New(), New()
		for i := range 12 {
			stackOf(tr, fr{name: fmt.Sprintf("f%d", i)})
		}
		for _, s := range samples {
			addPath(tr, s.path, s.tid, Metrics{Samples: 1, Time: 7})
			parts := strings.Split(s.path, ";")
			for i := range parts {
				parts[i] = rename(parts[i])
			}
			addPath(want, strings.Join(parts, ";"), s.tid, Metrics{Samples: 1, Time: 7})
		}
		to := make([]FuncID, tr.NumFuncs())
		for id := 1; id < tr.NumFuncs(); id++ {
			f := tr.Func(FuncID(id))
			to[id] = tr.Intern(Func{Name: rename(f.Name), Module: f.Module, File: f.File})
		}
		n0 := tr.Len()
		remap := tr.Relabel(to)
		checkConsistent(t, tr)
		if got, w := dump(tr), dump(want); got != w {
			t.Fatalf("seed %d: relabeled tree differs from the one built with the new names:\n%s\nwant\n%s", seed, got, w)
		}
		if len(remap) != n0 || tr.Len() != want.Len() {
			t.Fatalf("seed %d: remap of %d for %d nodes; %d nodes, want %d", seed, len(remap), n0, tr.Len(), want.Len())
		}
	}
}
