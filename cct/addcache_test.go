package cct

import (
	"math/rand"
	"testing"
)

// TestAddCacheAndLazyTotals: Add's shortcut (a stack's hash to its node)
// and its deferred totals give the tree the walk from the root gave. Random
// stacks over few functions and call sites (so that contexts share
// prefixes, differ only in a call site or in inlining, and repeat), with
// reads between the adds; every total is checked against one summed from
// the selfs along each path, and a wrong shortcut planted in the cache is
// caught by the check on the way up.
func TestAddCacheAndLazyTotals(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	tr := New()
	funcs := make([]FuncID, 6)
	for i := range funcs {
		funcs[i] = tr.Intern(Func{Name: string(rune('a' + i))})
	}
	var stacks [][]Frame
	for range 300 {
		s := make([]Frame, rng.Intn(6))
		for j := range s {
			s[j] = Frame{Func: funcs[rng.Intn(len(funcs))], Addr: uint64(0x10 * (1 + rng.Intn(3))), Inlined: rng.Intn(8) == 0}
		}
		stacks = append(stacks, s)
	}
	// want[id] is what a node's self should be; path sums make totals.
	want := map[NodeID]int64{}
	wantThread := map[threadKey]int64{}
	for i := range 5000 {
		s := stacks[rng.Intn(len(stacks))]
		if i == 2500 {
			// A planted wrong shortcut: the stack's hash names another node.
			// (and another node's thread self).
			key, _ := stackKey(s, uint32(i%3))
			tr.stacks[key] = cachedStack{NodeID(tr.Len() - 1), int32(len(tr.threads) - 1)}
		}
		id := tr.Add(s, uint32(i%3), Metrics{Samples: 1, Time: 10})
		if got := tr.insert(s); got != id {
			t.Fatalf("sample %d: Add gave node %d, the walk from the root %d", i, id, got)
		}
		want[id]++
		wantThread[threadKey{id, uint32(i % 3)}]++
		if i%97 == 0 {
			tr.Node(id) // a read between adds settles the totals
		}
	}
	totals := make([]int64, tr.Len())
	for id, n := range want {
		if got := tr.Node(id).Self.Samples; got != n {
			t.Errorf("node %d: self %d, want %d", id, got, n)
		}
		for x := id; x != NoNode; x = tr.Node(x).Parent {
			totals[x] += n
		}
	}
	for id := range totals {
		if got := tr.Node(NodeID(id)).Total; got.Samples != totals[id] || got.Time != 10*totals[id] {
			t.Errorf("node %d: total %+v, want %d samples", id, got, totals[id])
		}
	}
	for k, n := range wantThread {
		var got int64
		for _, ts := range tr.Threads(k.node) {
			if ts.TID == k.tid {
				got = ts.Self.Samples
			}
		}
		if got != n {
			t.Errorf("node %d thread %d: self %d, want %d", k.node, k.tid, got, n)
		}
	}
	if tr.Total().Samples != 5000 {
		t.Errorf("root total %d", tr.Total().Samples)
	}
	// A clone is settled: reading it writes nothing (go test -race).
	tr.Add(stacks[0], 1, Metrics{Samples: 1})
	c := tr.Clone()
	if c.stale {
		t.Error("a clone with stale totals")
	}
}

// TestSettledReadsDoNotWrite: once settled, a tree is read by several
// goroutines at once without a race (go test -race): the fileSource's trees
// are, by the TUI and under the source's lock.
func TestSettledReadsDoNotWrite(t *testing.T) {
	tr := New()
	f := tr.Intern(Func{Name: "f"})
	g := tr.Intern(Func{Name: "g"})
	for i := range 100 {
		tr.Add([]Frame{{Func: f, Addr: uint64(i % 4)}, {Func: g}}, 1, Metrics{Samples: 1})
	}
	tr.Settle()
	if tr.stale {
		t.Fatal("stale after Settle")
	}
	done := make(chan int64)
	for range 4 {
		go func() {
			var sum int64
			for id := range tr.Len() {
				sum += tr.Node(NodeID(id)).Total.Samples
				tr.Children(NodeID(id))
			}
			done <- sum
		}()
	}
	for range 4 {
		if sum := <-done; sum != 100+100+100 {
			t.Errorf("totals sum to %d, want 300 (root, g, f)", sum)
		}
	}
}
