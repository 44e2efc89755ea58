package cct

import (
	"slices"
	"testing"
)

func TestBottomUp(t *testing.T) {
	tr := New()
	addPath(tr, "main;a;c", 1, ms(2, 20))
	addPath(tr, "main;b;c", 2, ms(3, 30))
	addPath(tr, "main;a", 1, ms(1, 10))
	addPath(tr, "main;b;c", 1, ms(1, 10))
	bu := tr.BottomUp()

	// Computed by hand: c ends 6 samples (2 via a, 4 via b), a ends 1.
	for _, tc := range []struct {
		path  []string
		total Metrics
	}{
		{[]string{"c"}, ms(6, 60)},
		{[]string{"c", "a"}, ms(2, 20)},
		{[]string{"c", "a", "main"}, ms(2, 20)},
		{[]string{"c", "b"}, ms(4, 40)},
		{[]string{"c", "b", "main"}, ms(4, 40)},
		{[]string{"a"}, ms(1, 10)},
		{[]string{"a", "main"}, ms(1, 10)},
	} {
		if n := mustFind(t, bu, tc.path...); n.Total != tc.total {
			t.Errorf("bottom-up %v total %v, want %v", tc.path, n.Total, tc.total)
		}
	}
	if _, ok := bu.Find("main"); ok {
		t.Error("main is a root of the bottom-up tree but never a leaf")
	}
	if bu.Total() != tr.Total() {
		t.Errorf("bottom-up total %v != %v", bu.Total(), tr.Total())
	}
	var roots []string
	for _, c := range bu.Children(bu.Root()) {
		roots = append(roots, bu.Func(bu.Node(c).Func).Name)
	}
	if !slices.Equal(roots, []string{"c", "a"}) {
		t.Errorf("bottom-up roots %v", roots)
	}
	// The roots' totals are the functions' selfs.
	for _, s := range tr.Flat() {
		name := tr.Func(s.Func).Name
		if n, ok := bu.Find(name); ok && n > 0 {
			if bu.Node(n).Total != s.Self {
				t.Errorf("%s: bottom-up root total %v != flat self %v", name, bu.Node(n).Total, s.Self)
			}
		}
	}
	// Threads are carried: c;b;main holds the samples of threads 1 and 2.
	id, _ := bu.Find("c", "b", "main")
	if got, want := bu.Threads(id), []ThreadSelf{{1, ms(1, 10)}, {2, ms(3, 30)}}; !slices.Equal(got, want) {
		t.Errorf("threads of c;b;main = %v, want %v", got, want)
	}
	// FuncIDs are shared with the top-down tree.
	for i := 0; i < tr.NumFuncs(); i++ {
		if tr.Func(FuncID(i)) != bu.Func(FuncID(i)) {
			t.Errorf("FuncID %d differs", i)
		}
	}
	checkInvariants(t, bu)
}

func TestBottomUpCallSites(t *testing.T) {
	tr := New()
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x10, line: 4}, fr{name: "g", addr: 0x99}), 0, ms(1, 1))
	tr.Add(stackOf(tr, fr{name: "main", addr: 0x20, line: 8}, fr{name: "g", addr: 0x99}), 0, ms(1, 1))
	bu := tr.BottomUp()
	g, _ := bu.Find("g")
	kids := bu.Children(g)
	if len(kids) != 2 {
		t.Fatalf("g has %d callers in the bottom-up tree, want 2 (one per call site)", len(kids))
	}
	var sites []uint64
	for _, k := range kids {
		n := bu.Node(k)
		sites = append(sites, n.CallSite)
		if want := map[uint64]int{0x10: 4, 0x20: 8}[n.CallSite]; n.Line != want {
			t.Errorf("caller at %#x has line %d, want %d", n.CallSite, n.Line, want)
		}
	}
	slices.Sort(sites)
	if !slices.Equal(sites, []uint64{0x10, 0x20}) {
		t.Errorf("call sites %#x", sites)
	}
}

func TestBottomUpRecursion(t *testing.T) {
	tr := New()
	addPath(tr, "main;f;f", 0, ms(1, 1))
	bu := tr.BottomUp()
	if n := mustFind(t, bu, "f", "f", "main"); n.Total != ms(1, 1) {
		t.Errorf("f;f;main total %v", n.Total)
	}
	checkInvariants(t, bu)
}
