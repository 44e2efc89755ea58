package cct

import (
	"bytes"
	"slices"
	"testing"
)

// inlinedTree is main → P → A (inlined) → B (inlined) → C, plus P calling C directly
// and D from inside A, with samples ending at every level:
//
//	main;P;A+;B+;C   tid 1  5
//	main;P;A+;B+     tid 1  3
//	main;P;A+        tid 2  2
//	main;P           tid 1  1
//	main;P;C         tid 2  4   (another call site in P)
//	main;P;A+;D      tid 1  2
//
// Inlined frames share the pc of the frame they are inlined into (0x100 in P).
func inlinedTree() *Tree {
	tr := New()
	main := fr{name: "main", addr: 0x10, line: 5}
	p := fr{name: "P", addr: 0x100, line: 20}
	a := fr{name: "A", addr: 0x100, line: 30, inl: true}
	b := fr{name: "B", addr: 0x100, line: 40, inl: true}
	tr.Add(stackOf(tr, main, p, a, b, fr{name: "C", addr: 0x500, line: 50}), 1, ms(5, 50))
	tr.Add(stackOf(tr, main, p, a, b), 1, ms(3, 30))
	tr.Add(stackOf(tr, main, p, a), 2, ms(2, 20))
	tr.Add(stackOf(tr, main, fr{name: "P", addr: 0x110, line: 21}), 1, ms(1, 10))
	tr.Add(stackOf(tr, main, fr{name: "P", addr: 0x200, line: 25}, fr{name: "C", addr: 0x510, line: 51}), 2, ms(4, 40))
	tr.Add(stackOf(tr, main, fr{name: "P", addr: 0x180, line: 22}, fr{name: "A", addr: 0x180, line: 33, inl: true},
		fr{name: "D", addr: 0x600, line: 60}), 1, ms(2, 20))
	return tr
}

func TestPhysicalMergesInlinedFrames(t *testing.T) {
	tr := inlinedTree()
	before := dump(tr)
	ph, of := tr.Physical()
	if dump(tr) != before {
		t.Error("Physical changed the tree it was given")
	}
	checkInvariants(t, ph)
	if ph.Total() != tr.Total() {
		t.Errorf("physical total %v != %v", ph.Total(), tr.Total())
	}
	// P's self is its own and that of the code inlined into it: 1 + 3 + 2.
	for _, tc := range []struct {
		path        []string
		self, total Metrics
	}{
		{[]string{"main"}, ms(0, 0), ms(17, 170)},
		{[]string{"main", "P"}, ms(6, 60), ms(17, 170)},
		{[]string{"main", "P", "D"}, ms(2, 20), ms(2, 20)},
	} {
		n := mustFind(t, ph, tc.path...)
		if n.Self != tc.self || n.Total != tc.total {
			t.Errorf("%v: self %v total %v, want %v %v", tc.path, n.Self, n.Total, tc.self, tc.total)
		}
	}
	if _, ok := ph.Find("main", "P", "A"); ok {
		t.Error("the inlined A is still a node")
	}
	// P calls C from two sites: from the code inlined at 0x100 (A's line in P, 20),
	// and directly at 0x200, line 25.
	pid, _ := ph.Find("main", "P")
	type site struct {
		name string
		addr uint64
		line int
		self Metrics
	}
	var got []site
	for _, c := range ph.Children(pid) {
		n := ph.Node(c)
		if n.Inlined {
			t.Errorf("%s is still inlined", ph.Func(n.Func).Name)
		}
		got = append(got, site{ph.Func(n.Func).Name, n.CallSite, n.Line, n.Self})
	}
	want := []site{{"C", 0x100, 20, ms(5, 50)}, {"C", 0x200, 25, ms(4, 40)}, {"D", 0x180, 22, ms(2, 20)}}
	if !slices.Equal(got, want) {
		t.Errorf("children of P:\n got %+v\nwant %+v", got, want)
	}
	// Per-thread selfs are carried: P's self is 4 on thread 1 (1 + 3) and 2 on thread 2.
	if got, want := ph.Threads(pid), []ThreadSelf{{1, ms(4, 40)}, {2, ms(2, 20)}}; !slices.Equal(got, want) {
		t.Errorf("threads of P = %v, want %v", got, want)
	}
	// of maps every node to its physical frame: A and B to P, the rest to their copy.
	for id := range tr.Len() {
		n := tr.Node(NodeID(id))
		pn := ph.Node(of[id])
		wantFn := n.Func
		if n.Inlined {
			wantFn = tr.Node(n.Parent).Func
			if tr.Node(n.Parent).Inlined {
				wantFn = tr.Node(tr.Node(n.Parent).Parent).Func
			}
		}
		if pn.Func != wantFn {
			t.Errorf("node %d (%s) maps to %s", id, tr.Func(n.Func).Name, ph.Func(pn.Func).Name)
		}
	}
	// Summing a per-node weight through of gives the physical selfs.
	w := make([]int64, ph.Len())
	for id := range tr.Len() {
		w[of[id]] += tr.Node(NodeID(id)).Self.Samples
	}
	for id := range ph.Len() {
		if w[id] != ph.Node(NodeID(id)).Self.Samples {
			t.Errorf("physical node %d: weights through of sum to %d, self is %d", id, w[id], ph.Node(NodeID(id)).Self.Samples)
		}
	}
	// Functions keep their IDs; a physical tree is its own physical tree.
	for i := range tr.NumFuncs() {
		if tr.Func(FuncID(i)) != ph.Func(FuncID(i)) {
			t.Errorf("FuncID %d differs", i)
		}
	}
	if ph.HasInlined() || !tr.HasInlined() {
		t.Errorf("HasInlined: physical %v, logical %v", ph.HasInlined(), tr.HasInlined())
	}
	again, _ := ph.Physical()
	if dump(again) != dump(ph) {
		t.Errorf("Physical is not idempotent:\n%s\nvs\n%s", dump(again), dump(ph))
	}
}

// A leaf in inlined code is a pc in the physical frame: the physical leaf is P, at the
// line of P where the inlined chain starts.
func TestPhysicalLeaf(t *testing.T) {
	tr := New()
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x10, line: 5}, fr{name: "P", addr: 0x100, line: 20},
		fr{name: "A", addr: 0x100, line: 30, inl: true}), 1, ms(1, 1))
	ph, _ := tr.Physical()
	id, ok := ph.Find("main", "P")
	if !ok {
		t.Fatal("no main;P")
	}
	st := ph.Stack(id)
	if len(st) != 2 || st[0].Addr != 0x100 || st[0].Line != 20 || st[0].Inlined {
		t.Errorf("physical leaf frame %+v", st)
	}
}

// Children of the physical frame that come to share a key merge: C called at the same
// pc from two inlined chains (the same code, reached through A or through B) is one
// context once A and B are gone.
func TestPhysicalMergesChildren(t *testing.T) {
	tr := New()
	main, p := fr{name: "main", addr: 0x10}, fr{name: "P", addr: 0x100, line: 20}
	c := fr{name: "C", addr: 0x500}
	tr.Add(stackOf(tr, main, p, fr{name: "A", addr: 0x100, line: 30, inl: true}, c), 1, ms(1, 10))
	tr.Add(stackOf(tr, main, p, fr{name: "B", addr: 0x100, line: 30, inl: true}, c), 2, ms(2, 20))
	ph, of := tr.Physical()
	pid, _ := ph.Find("main", "P")
	kids := ph.Children(pid)
	if len(kids) != 1 || ph.Node(kids[0]).Self != ms(3, 30) {
		t.Fatalf("P's children in the physical tree: %d, want one C with both samples:\n%s", len(kids), dump(ph))
	}
	a, _ := tr.Find("main", "P", "A", "C")
	b, _ := tr.Find("main", "P", "B", "C")
	if of[a] != of[b] || of[a] != kids[0] {
		t.Errorf("of: %d, %d, want both %d", of[a], of[b], kids[0])
	}
	checkInvariants(t, ph)
}

// An inlined frame with nothing above it (a stack cut short) has no physical frame to
// merge into: it stays, and what was inlined into it merges into it.
func TestPhysicalInlinedAtRoot(t *testing.T) {
	tr := New()
	tr.Add(stackOf(tr, fr{name: "A", addr: 0x100, inl: true}, fr{name: "B", addr: 0x100, inl: true}), 1, ms(1, 1))
	tr.Add(stackOf(tr, fr{name: "A", addr: 0x100, inl: true}), 1, ms(2, 2))
	ph, _ := tr.Physical()
	a := mustFind(t, ph, "A")
	if a.Self != ms(3, 3) || !a.Inlined || ph.Len() != 2 {
		t.Errorf("A: %+v, %d nodes\n%s", a, ph.Len(), dump(ph))
	}
	// The same under [truncated], which stands for the frames that are missing.
	tr = New()
	tr.Add(stackOf(tr, fr{name: TruncatedName}, fr{name: "A", addr: 0x100, inl: true}, fr{name: "B", addr: 0x100, inl: true}), 1, ms(1, 1))
	ph, _ = tr.Physical()
	if a := mustFind(t, ph, TruncatedName, "A"); a.Self != ms(1, 1) || !a.Inlined {
		t.Errorf("[truncated];A: %+v\n%s", a, dump(ph))
	}
}

// Bottom-up of the physical tree: leaves are physical frames, the inlined code's samples
// end in the function it was inlined into.
func TestPhysicalBottomUp(t *testing.T) {
	ph, _ := inlinedTree().Physical()
	bu := ph.BottomUp()
	checkInvariants(t, bu)
	for _, tc := range []struct {
		path  []string
		total Metrics
	}{
		{[]string{"C"}, ms(9, 90)},
		{[]string{"P"}, ms(6, 60)},
		{[]string{"P", "main"}, ms(6, 60)},
		{[]string{"D", "P", "main"}, ms(2, 20)},
	} {
		if n := mustFind(t, bu, tc.path...); n.Total != tc.total {
			t.Errorf("bottom-up %v total %v, want %v", tc.path, n.Total, tc.total)
		}
	}
	for _, name := range []string{"A", "B"} {
		if _, ok := bu.Find(name); ok {
			t.Errorf("%s is a leaf of the physical bottom-up tree", name)
		}
	}
	// C's two call sites in P are two callers in the bottom-up tree, as in top-down.
	c, _ := bu.Find("C")
	var callers []Metrics
	for _, k := range bu.Children(c) {
		if bu.Func(bu.Node(k).Func).Name == "P" {
			callers = append(callers, bu.Node(k).Total)
		}
	}
	if !slices.Equal(callers, []Metrics{ms(5, 50), ms(4, 40)}) {
		t.Errorf("C's callers: %v, want P twice (one per call site), 5 and 4", callers)
	}
	// Flat of the physical tree: A and B are gone; P's self holds their samples.
	for _, s := range ph.Flat() {
		switch name := ph.Func(s.Func).Name; name {
		case "A", "B":
			t.Errorf("%s in the physical flat view", name)
		case "P":
			if s.Self != ms(6, 60) || s.Total != ms(17, 170) {
				t.Errorf("flat P: self %v total %v", s.Self, s.Total)
			}
		}
	}
}

// Export writes the logical tree whatever view was derived from it: the inlined frames
// are lines of their physical frame's location, and Physical does not touch the tree.
func TestPhysicalLeavesExportAlone(t *testing.T) {
	tr := inlinedTree()
	var before, after bytes.Buffer
	if err := tr.Profile(Meta{}).WriteUncompressed(&before); err != nil {
		t.Fatal(err)
	}
	tr.Physical()
	if err := tr.Profile(Meta{}).WriteUncompressed(&after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Error("the profile written after Physical differs")
	}
	p := tr.Profile(Meta{})
	inline := false
	for _, l := range p.Location {
		if len(l.Line) > 1 {
			inline = true
		}
		for _, ln := range l.Line {
			if ln.Function.Name != tr.Func(mustFuncID(t, tr, ln.Function.Name)).Name {
				t.Errorf("function %q", ln.Function.Name)
			}
		}
	}
	if !inline {
		t.Error("the profile has no inlined frames")
	}
	back, _, err := FromProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	if dump(back) != dump(tr) {
		t.Errorf("round trip:\n%s\nvs\n%s", dump(back), dump(tr))
	}
}

func mustFuncID(tb testing.TB, t *Tree, name string) FuncID {
	tb.Helper()
	for i := 1; i < t.NumFuncs(); i++ {
		if t.Func(FuncID(i)).Name == name {
			return FuncID(i)
		}
	}
	tb.Fatalf("no function %q", name)
	return 0
}
