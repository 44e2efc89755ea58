package cct

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// pathOf names id's context root first, "a;b;c".
func pathOf(t *Tree, id NodeID) string {
	var names []string
	for _, f := range t.Path(id) {
		names = append(names, t.Func(f).Name)
	}
	return strings.Join(names, ";")
}

// checkConsistent asserts what every tree must hold: each Total is its Self plus its
// children's Totals, and each node's per-thread selfs add up to its Self.
func checkConsistent(tb testing.TB, t *Tree) {
	tb.Helper()
	sum := make([]Metrics, t.Len())
	for id := t.Len() - 1; id >= 0; id-- {
		n := t.Node(NodeID(id))
		want := n.Self
		want.Add(sum[id])
		if n.Total != want {
			tb.Fatalf("node %d (%s): total %+v, self+children %+v", id, pathOf(t, NodeID(id)), n.Total, want)
		}
		if id > 0 {
			sum[n.Parent].Add(n.Total)
		}
		var th Metrics
		for _, ts := range t.Threads(NodeID(id)) {
			th.Add(ts.Self)
		}
		if id > 0 && th != n.Self {
			tb.Fatalf("node %d (%s): threads sum to %+v, self %+v", id, pathOf(t, NodeID(id)), th, n.Self)
		}
	}
}

// randomTree adds samples on paths drawn from a skewed distribution: a few hot paths and
// a long tail of cold ones, on three threads.
func randomTree(seed uint64, samples int) *Tree {
	r := rand.New(rand.NewPCG(seed, 1))
	t := New()
	for range samples {
		depth := 1 + r.IntN(6)
		var parts []string
		for d := 0; d < depth; d++ {
			// Zipf-like: low numbers are common.
			parts = append(parts, fmt.Sprintf("f%d", int(r.ExpFloat64()*3)))
		}
		addPath(t, strings.Join(parts, ";"), uint32(1+r.IntN(3)), Metrics{Samples: 1, Time: 10})
	}
	return t
}

func TestFoldBoundsAndKeepsTotals(t *testing.T) {
	for _, keep := range []int{2, 10, 100, 1000} {
		tr := randomTree(7, 20000)
		before := tr.Clone()
		if tr.Len() <= keep {
			t.Fatalf("test tree has only %d nodes", tr.Len())
		}
		remap, folded := tr.Fold(keep)
		if tr.Len() > keep {
			t.Errorf("keep %d: %d nodes after Fold", keep, tr.Len())
		}
		if folded == 0 || len(remap) != before.Len() {
			t.Fatalf("keep %d: folded %d, remap of %d for %d nodes", keep, folded, len(remap), before.Len())
		}
		if tr.Total() != before.Total() {
			t.Errorf("keep %d: total %+v, was %+v", keep, tr.Total(), before.Total())
		}
		checkConsistent(t, tr)
		// Every old context is now itself, with all it had, or inside an [other] under a
		// kept ancestor.
		for id := 1; id < before.Len(); id++ {
			old, now := pathOf(before, NodeID(id)), pathOf(tr, remap[id])
			if now == old {
				if a, b := before.Node(NodeID(id)), tr.Node(remap[id]); a.Total != b.Total {
					t.Fatalf("keep %d: kept %s changed total %+v -> %+v", keep, old, a.Total, b.Total)
				}
				continue
			}
			prefix, ok := strings.CutSuffix(now, OtherName)
			if !ok || !strings.HasPrefix(old, prefix) {
				t.Fatalf("keep %d: %s mapped to %s", keep, old, now)
			}
		}
		// The kept contexts are the hottest: none folded has more samples than any kept.
		minKept, maxFolded := int64(1<<62), int64(-1)
		for id := 1; id < before.Len(); id++ {
			s := before.Node(NodeID(id)).Total.Samples
			if pathOf(tr, remap[id]) == pathOf(before, NodeID(id)) {
				minKept = min(minKept, s)
			} else {
				maxFolded = max(maxFolded, s)
			}
		}
		if maxFolded >= minKept {
			t.Errorf("keep %d: a folded context has %d samples, a kept one %d", keep, maxFolded, minKept)
		}
	}
}

func TestFoldWithinCapIsNoop(t *testing.T) {
	tr := randomTree(3, 100)
	want := dump(tr)
	if remap, folded := tr.Fold(tr.Len()); remap != nil || folded != 0 || dump(tr) != want {
		t.Errorf("Fold at the tree's size changed it (folded %d)", folded)
	}
}

// TestFoldAgainMergesOther: samples keep arriving after a fold and recreate cold contexts;
// folding again merges them into the same [other] nodes, and the tree keeps working.
func TestFoldAgainMergesOther(t *testing.T) {
	tr := randomTree(11, 5000)
	total := tr.Total()
	for round := uint64(0); round < 5; round++ {
		tr.Fold(50)
		more := randomTree(100+round, 2000)
		for id := 1; id < more.Len(); id++ {
			if n := more.Node(NodeID(id)); n.Self.Samples > 0 {
				for _, ts := range more.Threads(NodeID(id)) {
					addPath(tr, pathOf(more, NodeID(id)), ts.TID, ts.Self)
					total.Add(ts.Self)
				}
			}
		}
	}
	tr.Fold(50)
	if tr.Len() > 50 || tr.Total() != total {
		t.Fatalf("%d nodes, total %+v, want ≤50 and %+v", tr.Len(), tr.Total(), total)
	}
	checkConsistent(t, tr)
	others := 0
	for id := 1; id < tr.Len(); id++ {
		n := tr.Node(NodeID(id))
		if tr.Func(n.Func).Name == OtherName {
			others++
			if kids := tr.Children(NodeID(id)); len(kids) > 0 {
				t.Errorf("[other] has children")
			}
		}
	}
	if others == 0 {
		t.Error("no [other] node")
	}
}

func TestRemapSums(t *testing.T) {
	tr := randomTree(5, 3000)
	w := make([]float64, tr.Len())
	var sum float64
	for i := range w {
		w[i] = float64(tr.Node(NodeID(i)).Self.Samples)
		sum += w[i]
	}
	remap, _ := tr.Fold(20)
	got := Remap(w, remap, tr.Len())
	var gsum float64
	for i, v := range got {
		gsum += v
		if s := float64(tr.Node(NodeID(i)).Self.Samples); v != s {
			t.Errorf("node %d: remapped %g, self %g", i, v, s)
		}
	}
	if gsum != sum {
		t.Errorf("sum %g, was %g", gsum, sum)
	}
}

func BenchmarkFold1M(b *testing.B) {
	base := randomTree(1, 0)
	r := rand.New(rand.NewPCG(2, 2))
	for base.Len() < 1<<20 {
		parts := make([]string, 1+r.IntN(12))
		for i := range parts {
			parts[i] = fmt.Sprintf("g%d", r.IntN(40))
		}
		addPath(base, strings.Join(parts, ";"), 1, Metrics{Samples: 1 + int64(r.IntN(3)), Time: 1})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		tr := base.Clone()
		b.StartTimer()
		tr.Fold(base.Len() * 3 / 4)
	}
}

func TestOtherSamples(t *testing.T) {
	tr := randomTree(9, 4000)
	if n := tr.OtherSamples(); n != 0 {
		t.Fatalf("%d samples in [other] before a fold", n)
	}
	tr.Fold(30)
	var want int64
	for id := 1; id < tr.Len(); id++ {
		if n := tr.Node(NodeID(id)); tr.Func(n.Func).Name == OtherName {
			want += n.Total.Samples
		}
	}
	if got := tr.OtherSamples(); got != want || got == 0 {
		t.Errorf("OtherSamples %d, the [other] nodes' totals %d", got, want)
	}
}

// TestSamplesOf counts the samples whose stacks end in the named function,
// under every caller, and not those that pass through it.
func TestSamplesOf(t *testing.T) {
	tr := New()
	if n := tr.SamplesOf(ProbesName); n != 0 {
		t.Fatalf("%d samples in an empty tree", n)
	}
	addPath(tr, "main;leaf;"+ProbesName, 1, Metrics{Samples: 3, Time: 3})
	addPath(tr, "main;other;"+ProbesName, 2, Metrics{Samples: 2, Time: 2})
	addPath(tr, "main;leaf", 1, Metrics{Samples: 40, Time: 40})
	addPath(tr, ProbesName+";x", 1, Metrics{Samples: 7, Time: 7}) // passes through: not its own
	if n := tr.SamplesOf(ProbesName); n != 5 {
		t.Errorf("SamplesOf(%q) = %d, want 5", ProbesName, n)
	}
	if n := tr.SamplesOf("leaf"); n != 40 {
		t.Errorf("SamplesOf(leaf) = %d, want 40", n)
	}
	if n := tr.SamplesOf("nowhere"); n != 0 {
		t.Errorf("SamplesOf(nowhere) = %d", n)
	}
}
