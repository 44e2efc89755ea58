package cct

import (
	"slices"
	"testing"
)

func ms(samples, time int64) Metrics { return Metrics{Samples: samples, Time: time} }

func TestAddTotalsAndSelfs(t *testing.T) {
	tr := New()
	for range 3 {
		addPath(tr, "main;a;b", 1, ms(1, 10))
	}
	addPath(tr, "main;a", 1, ms(2, 20))
	addPath(tr, "main;c", 2, ms(1, 5))

	if got, want := tr.Total(), ms(6, 55); got != want {
		t.Errorf("Total = %v, want %v", got, want)
	}
	for _, tc := range []struct {
		path        []string
		self, total Metrics
	}{
		{[]string{"main"}, ms(0, 0), ms(6, 55)},
		{[]string{"main", "a"}, ms(2, 20), ms(5, 50)},
		{[]string{"main", "a", "b"}, ms(3, 30), ms(3, 30)},
		{[]string{"main", "c"}, ms(1, 5), ms(1, 5)},
	} {
		n := mustFind(t, tr, tc.path...)
		if n.Self != tc.self || n.Total != tc.total {
			t.Errorf("%v: self %v total %v, want %v %v", tc.path, n.Self, n.Total, tc.self, tc.total)
		}
	}
	if tr.Len() != 5 {
		t.Errorf("Len = %d, want 5 (root, main, a, b, c)", tr.Len())
	}
	checkInvariants(t, tr)
}

func TestAddReturnsLeafAndEmptyStackIsRootSelf(t *testing.T) {
	tr := New()
	id := addPath(tr, "main;a", 0, ms(1, 1))
	if got := tr.Func(tr.Node(id).Func).Name; got != "a" {
		t.Errorf("Add returned node of %q, want a", got)
	}
	if got := tr.Add(nil, 7, ms(1, 3)); got != tr.Root() {
		t.Errorf("Add(empty) = %d, want root", got)
	}
	root := tr.Node(tr.Root())
	if root.Self != ms(1, 3) || root.Total != ms(2, 4) || root.Parent != NoNode {
		t.Errorf("root = %+v", root)
	}
	if tr.Func(root.Func).Name != "[root]" {
		t.Errorf("root func = %q", tr.Func(root.Func).Name)
	}
	checkInvariants(t, tr)
}

func TestRecursion(t *testing.T) {
	tr := New()
	addPath(tr, "main;f;f;f", 1, ms(1, 10))
	addPath(tr, "main;f;g;f", 1, ms(1, 10))
	addPath(tr, "main;f", 1, ms(1, 10))

	// In the tree each occurrence is its own context, counted along its own path.
	if n := mustFind(t, tr, "main", "f"); n.Total != ms(3, 30) || n.Self != ms(1, 10) {
		t.Errorf("main;f = %+v", n)
	}
	if n := mustFind(t, tr, "main", "f", "f"); n.Total != ms(1, 10) {
		t.Errorf("main;f;f total %v", n.Total)
	}
	// Flat counts f once per sample although it is on a stack up to three times.
	flat := tr.Flat()
	byName := map[string]FuncStat{}
	for _, s := range flat {
		byName[tr.Func(s.Func).Name] = s
	}
	if s := byName["f"]; s.Self != ms(3, 30) || s.Total != ms(3, 30) {
		t.Errorf("flat f = %+v, want self=total=3 samples", s)
	}
	if s := byName["g"]; s.Self != ms(0, 0) || s.Total != ms(1, 10) {
		t.Errorf("flat g = %+v", s)
	}
	if s := byName["main"]; s.Total != tr.Total() {
		t.Errorf("flat main total %v != tree total %v", s.Total, tr.Total())
	}
	if len(flat) != 3 {
		t.Errorf("flat has %d functions, want 3", len(flat))
	}
	checkInvariants(t, tr)
}

func TestFlatOrder(t *testing.T) {
	tr := New()
	addPath(tr, "main;a", 0, ms(1, 10))
	addPath(tr, "main;b", 0, ms(1, 30))
	addPath(tr, "main;c", 0, ms(2, 30))
	addPath(tr, "main;d", 0, ms(1, 10))
	var got []string
	for _, s := range tr.Flat() {
		got = append(got, tr.Func(s.Func).Name)
	}
	// c and b tie on self time, c has more samples; a and d tie on everything but name;
	// main has no self.
	want := []string{"c", "b", "a", "d", "main"}
	if !slices.Equal(got, want) {
		t.Errorf("Flat order %v, want %v", got, want)
	}
}

func TestCallSiteSplitting(t *testing.T) {
	tr := New()
	// g called from main at two call sites: two contexts.
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x10, line: 5}, fr{name: "g", addr: 0x100}), 0, ms(1, 10))
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x20, line: 6}, fr{name: "g", addr: 0x100}), 0, ms(3, 30))
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x10, line: 5}, fr{name: "g", addr: 0x104}), 0, ms(1, 10))

	main, _ := tr.Find("main")
	kids := tr.Children(main)
	if len(kids) != 2 {
		t.Fatalf("main has %d children, want 2 (one per call site)", len(kids))
	}
	first, second := tr.Node(kids[0]), tr.Node(kids[1])
	if first.CallSite != 0x20 || first.Line != 6 || first.Total != ms(3, 30) {
		t.Errorf("first child %+v, want call site 0x20 line 6 with 3 samples", first)
	}
	if second.CallSite != 0x10 || second.Line != 5 || second.Total != ms(2, 20) {
		t.Errorf("second child %+v, want call site 0x10 line 5 with 2 samples (leaf pc does not split)", second)
	}
	if tr.Node(main).CallSite != 0 {
		t.Errorf("child of the root has call site %#x", tr.Node(main).CallSite)
	}
	// Find merges call sites and takes the first in display order.
	if id, _ := tr.Find("main", "g"); id != kids[0] {
		t.Errorf("Find(main, g) = %d, want %d", id, kids[0])
	}
	checkInvariants(t, tr)
}

func TestFindMergesCallSites(t *testing.T) {
	tr := New()
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x20}, fr{name: "g"}), 0, ms(5, 50))
	leaf := tr.Add(stackOf(tr, fr{name: "main", addr: 0x10}, fr{name: "g", addr: 0x7}, fr{name: "h"}), 0, ms(1, 10))
	// The first g (call site 0x20) has no h; Find must go on to the other call site.
	id, ok := tr.Find("main", "g", "h")
	if !ok || id != leaf {
		t.Errorf("Find(main, g, h) = %d, %v; want %d", id, ok, leaf)
	}
	if _, ok := tr.Find("main", "h"); ok {
		t.Error("Find(main, h) succeeded")
	}
	if id, ok := tr.Find(); !ok || id != tr.Root() {
		t.Errorf("Find() = %d, %v", id, ok)
	}
}

func TestFindByShortName(t *testing.T) {
	tr := New()
	a := tr.Intern(Func{Name: "github.com/x/y/pkg.(*T).Run"})
	b := tr.Intern(Func{Name: "ns::inner(int)"})
	leaf := tr.Add([]Frame{{Func: b}, {Func: a}}, 0, ms(1, 1))
	for _, p := range [][]string{
		{"pkg.(*T).Run", "ns::inner"},
		{"github.com/x/y/pkg.(*T).Run", "ns::inner(int)"},
	} {
		if id, ok := tr.Find(p...); !ok || id != leaf {
			t.Errorf("Find(%q) = %d, %v", p, id, ok)
		}
	}
}

func TestPathAndStack(t *testing.T) {
	tr := New()
	st := stackOf(tr,
		fr{name: "main", addr: 0x10, line: 3},
		fr{name: "g", addr: 0x30, line: 12},
		fr{name: "inl", addr: 0x30, line: 7, inl: true},
		fr{name: "h", addr: 0x55, line: 20})
	leaf := tr.Add(st, 0, ms(1, 1))
	var got []string
	for _, f := range tr.Path(leaf) {
		got = append(got, tr.Func(f).Name)
	}
	if want := []string{"main", "g", "inl", "h"}; !slices.Equal(got, want) {
		t.Errorf("Path = %v, want %v", got, want)
	}
	if p := tr.Path(tr.Root()); len(p) != 0 {
		t.Errorf("Path(root) = %v", p)
	}
	if s := tr.Stack(leaf); !slices.Equal(s, st) {
		t.Errorf("Stack = %+v, want %+v", s, st)
	}
	if n := mustFind(t, tr, "main", "g", "inl"); !n.Inlined || n.CallSite != 0x30 || n.Line != 12 {
		t.Errorf("inl node %+v: want Inlined, call site 0x30 line 12", n)
	}
	if n := mustFind(t, tr, "main", "g"); n.Inlined {
		t.Error("g marked inlined")
	}
	if again := tr.Add(tr.Stack(leaf), 0, ms(1, 1)); again != leaf {
		t.Errorf("Add(Stack(leaf)) = %d, want %d", again, leaf)
	}
}

func TestChildrenOrder(t *testing.T) {
	tr := New()
	addPath(tr, "main;low", 0, ms(9, 10))
	addPath(tr, "main;high", 0, ms(1, 90))
	addPath(tr, "main;tieB", 0, ms(2, 50))
	addPath(tr, "main;tieA", 0, ms(2, 50))
	addPath(tr, "main;fewer", 0, ms(1, 50))
	main, _ := tr.Find("main")
	var got []string
	for _, c := range tr.Children(main) {
		got = append(got, tr.Func(tr.Node(c).Func).Name)
	}
	want := []string{"high", "tieA", "tieB", "fewer", "low"}
	if !slices.Equal(got, want) {
		t.Errorf("Children = %v, want %v", got, want)
	}
	for range 5 {
		again := tr.Children(main)
		for i, c := range again {
			if tr.Func(tr.Node(c).Func).Name != want[i] {
				t.Fatal("Children order is not stable")
			}
		}
	}
}

func TestInternOnce(t *testing.T) {
	tr := New()
	a := tr.Intern(Func{Name: "github.com/a/b/pkg.F", Module: "/bin/x"})
	b := tr.Intern(Func{Name: "github.com/a/b/pkg.F", Module: "/bin/x"})
	c := tr.Intern(Func{Name: "github.com/a/b/pkg.F", Module: "/bin/y"})
	if a != b || a == c || a == RootFunc {
		t.Errorf("Intern ids %d %d %d", a, b, c)
	}
	if got := tr.Func(a).Short; got != "pkg.F" {
		t.Errorf("Short = %q", got)
	}
	if got := tr.Intern(Func{Name: "[root]"}); got == RootFunc {
		t.Error("Intern returned the root function")
	}
	if tr.NumFuncs() != 4 {
		t.Errorf("NumFuncs = %d", tr.NumFuncs())
	}
}

func TestAddPanicsOnForeignFunc(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Add with an unknown FuncID did not panic")
		}
	}()
	New().Add([]Frame{{Func: 42}}, 0, ms(1, 1))
}

func TestThreads(t *testing.T) {
	tr := New()
	leaf := addPath(tr, "main;a", 20, ms(1, 10))
	addPath(tr, "main;a", 10, ms(2, 20))
	addPath(tr, "main;a", 20, ms(1, 10))
	addPath(tr, "main;b", 30, ms(1, 5))
	want := []ThreadSelf{{10, ms(2, 20)}, {20, ms(2, 20)}}
	if got := tr.Threads(leaf); !slices.Equal(got, want) {
		t.Errorf("Threads = %v, want %v", got, want)
	}
	if got := tr.TIDs(); !slices.Equal(got, []uint32{10, 20, 30}) {
		t.Errorf("TIDs = %v", got)
	}
	only20 := tr.FilterThreads(func(tid uint32) bool { return tid == 20 })
	if only20.Total() != ms(2, 20) {
		t.Errorf("filtered total %v", only20.Total())
	}
	if _, ok := only20.Find("main", "b"); ok {
		t.Error("filtered tree kept main;b, which has no samples on thread 20")
	}
	if got := only20.TIDs(); !slices.Equal(got, []uint32{20}) {
		t.Errorf("filtered TIDs = %v", got)
	}
	checkInvariants(t, only20)
	if dump(tr.FilterThreads(func(uint32) bool { return true })) != dump(tr) {
		t.Error("keeping every thread changed the tree")
	}
}

func TestClone(t *testing.T) {
	tr := New()
	addPath(tr, "main;a", 1, ms(1, 10))
	c := tr.Clone()
	before := dump(c)
	addPath(tr, "main;a", 1, ms(1, 10))
	addPath(tr, "main;new", 2, ms(1, 10))
	if dump(c) != before {
		t.Error("changing the original changed the clone")
	}
	addPath(c, "main;a", 1, ms(1, 10))
	addPath(c, "main;new", 2, ms(1, 10))
	if dump(c) != dump(tr) {
		t.Errorf("clone after the same adds differs:\n%s\nvs\n%s", dump(c), dump(tr))
	}
	// Its per-thread selfs too: the index made again finds the entries
	// the clone copied.
	for _, path := range [][]string{{"main", "a"}, {"main", "new"}} {
		id, ok := tr.Find(path...)
		cid, cok := c.Find(path...)
		if !ok || !cok || !slices.Equal(tr.Threads(id), c.Threads(cid)) {
			t.Errorf("%v: threads %v in the clone, %v in the original", path, c.Threads(cid), tr.Threads(id))
		}
	}
	// A clone finds functions without its index, and interns them as the
	// original did.
	c2 := tr.Clone()
	if _, ok := c2.Lookup("absent", "", ""); ok {
		t.Error("a clone looks up a function never interned")
	}
	for id := FuncID(1); int(id) < tr.NumFuncs(); id++ {
		f := tr.Func(id)
		if got, ok := c2.Lookup(f.Name, f.Module, f.File); !ok || got != id {
			t.Errorf("clone's Lookup(%s) = %d %v, want %d", f.Name, got, ok, id)
		}
		if got := c2.Intern(f); got != id {
			t.Errorf("clone's Intern(%s) = %d, want %d", f.Name, got, id)
		}
	}
}

func TestAddExistingContextDoesNotAllocate(t *testing.T) {
	tr := New()
	st := stackOf(tr, names("main;a;b;c;d;e;f;g")...)
	tr.Add(st, 3, ms(1, 1))
	allocs := testing.AllocsPerRun(1000, func() { tr.Add(st, 3, ms(1, 1)) })
	if allocs != 0 {
		t.Errorf("Add of an existing context allocates %v times", allocs)
	}
}
