package tui

import (
	"strconv"
	"sync"
	"testing"

	"github.com/cctop/cctop/cct"
)

// largeSnapshot is a tree of 1,000,100 nodes: 100 top-level functions, 100 callees
// under each, and under every one of those a 99-frame chain, with a self weight at the
// end of each chain and at every 10th frame on it.
var largeSnapshot = sync.OnceValue(func() Snapshot {
	const top, mid, chain = 100, 100, 99
	t := cct.New()
	fn := func(name string) cct.FuncID { return t.Intern(cct.Func{Name: name, File: "big.go"}) }
	tops, mids, deep := make([]cct.FuncID, top), make([]cct.FuncID, mid), make([]cct.FuncID, chain)
	for i := range tops {
		tops[i] = fn("app.top" + strconv.Itoa(i))
	}
	for i := range mids {
		mids[i] = fn("app/lib.mid" + strconv.Itoa(i))
	}
	for i := range deep {
		deep[i] = fn("app/deep.level" + strconv.Itoa(i))
	}
	stack := make([]cct.Frame, 0, 2+chain)
	for i := range top {
		for j := range mid {
			for k := chain; k >= 0; k -= 10 {
				// Leaf first: deep[k-1] ... deep[0], mids[j], tops[i].
				stack = stack[:0]
				for l := k - 1; l >= 0; l-- {
					stack = append(stack, cct.Frame{Func: deep[l], Addr: uint64(l + 1), Line: l + 1})
				}
				stack = append(stack, cct.Frame{Func: mids[j], Addr: uint64(j + 1)}, cct.Frame{Func: tops[i], Addr: uint64(i + 1)})
				t.Add(stack, uint32(1+i%4), cct.Metrics{Samples: 1, Time: int64(1000 + (i*7+j*13+k)%997)})
			}
		}
	}
	self := make([]float64, t.Len())
	for id := range t.Len() {
		self[id] = float64(t.Node(cct.NodeID(id)).Self.Time)
	}
	return Snapshot{Tree: t, Self: self, Compare: self, Metric: "time", Seq: 1,
		Header: Header{Target: "bench", Unwound: -1, Overlap: -1, State: "live"}}
})

// largeModel is the large tree at 160x50 with 10,100 nodes expanded: every top-level
// and every second-level row, which shows 20,100 rows.
func largeModel(tb testing.TB) *Model {
	s := largeSnapshot()
	if s.Tree.Len() < 1_000_000 {
		tb.Fatalf("the large tree has %d nodes", s.Tree.Len())
	}
	m := newPlain(newFake(s), Options{Width: 160, Height: 50})
	t := m.tree
	opened := 0
	for i := len(t.rows) - 1; i >= 0; i-- { // top rows, from the end so indexes stay valid
		t.open(i)
		opened++
	}
	for i := len(t.rows) - 1; i >= 0; i-- {
		if t.rows[i].depth == 1 {
			t.open(i)
			opened++
		}
	}
	if opened != 10_100 {
		tb.Fatalf("opened %d nodes", opened)
	}
	t.moveTo(len(t.rows) / 2)
	return m
}

func BenchmarkViewLargeTree(b *testing.B) {
	m := largeModel(b)
	b.Logf("%d nodes, %d visible rows", m.snap.Tree.Len(), len(m.tree.rows))
	b.Run("frame", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.View()
		}
	})
	b.Run("frame-panel", func(b *testing.B) {
		// The counters panel open beside the tree: its lines, not the tree, cost.
		src := m.src.(*fakeSource)
		s := src.Snapshot()
		s.Counters, s.Seq = testCounters(), s.Seq+1
		src.set(s)
		m.Update(SnapshotReadyMsg{})
		m.Update(press("C"))
		defer m.Update(press("C"))
		b.ReportAllocs()
		for b.Loop() {
			m.View()
		}
	})
	b.Run("cursor", func(b *testing.B) {
		b.ReportAllocs()
		down, up := press("down"), press("up")
		i := 0
		for b.Loop() {
			// Alternate so the cursor stays mid-tree however long the loop runs.
			if i++; i%2 == 0 {
				m.Update(down)
			} else {
				m.Update(up)
			}
			m.View()
		}
	})
	b.Run("pagedown", func(b *testing.B) {
		pg, home := press("pgdown"), press("home")
		for b.Loop() {
			if m.tree.cursor+m.tree.bodyHeight() >= len(m.tree.rows) {
				m.Update(home)
			}
			m.Update(pg)
			m.View()
		}
	})
	b.Run("toggle", func(b *testing.B) {
		// Open and close one row mid-tree: a splice, not a re-flatten.
		sp := press("space")
		for b.Loop() {
			m.Update(sp)
			m.View()
		}
	})
	b.Run("refresh", func(b *testing.B) {
		// A new snapshot of the same tree: totals, the forest and the 20,100 rows again.
		src := m.src.(*fakeSource)
		for b.Loop() {
			s := src.Snapshot()
			s.Seq++
			src.set(s)
			m.Update(SnapshotReadyMsg{})
		}
	})
	b.Run("search", func(b *testing.B) {
		// A keystroke in the search prompt: the query's flags over the 1M nodes.
		for b.Loop() {
			m.setSearch("level5")
		}
	})
	b.Run("next-match", func(b *testing.B) {
		// Each jump opens a 100-deep chain: this one runs last, as it grows the rows.
		m.setSearch("level98")
		n := press("n")
		for b.Loop() {
			m.Update(n)
			m.View()
		}
	})
}

// BenchmarkFirstScreenLargeTree is what the defaults cost on the large tree: the first
// screen (totals, the hot path opened, chains found along the visible rows) and a
// refresh while it follows the hot path.
func BenchmarkFirstScreenLargeTree(b *testing.B) {
	s := largeSnapshot()
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			New(newFake(s), Options{Width: 160, Height: 50}).View()
		}
	})
	b.Run("refresh-following", func(b *testing.B) {
		src := newFake(s)
		m := New(src, Options{Width: 160, Height: 50})
		for b.Loop() {
			s := src.Snapshot()
			s.Seq++
			src.set(s)
			m.Update(SnapshotReadyMsg{})
			m.View()
		}
	})
}

// BenchmarkAnnotateView10k: the annotate view takes a listing of 10,000
// instructions (a rebuild of the live view) and draws its screen at
// 200x60; then a page down and the screen again (issue 33: within 50 ms).
func BenchmarkAnnotateView10k(b *testing.B) {
	m := New(newFake(testSnapshot()), Options{Width: 200, Height: 60})
	m.openAnnotate()
	l := bigListing()
	b.Run("take", func(b *testing.B) {
		for range b.N {
			m.annPane.open("big", true)
			m.Update(annotateMsg{gen: m.ann.gen, listing: l})
			_ = m.View()
		}
	})
	b.Run("page", func(b *testing.B) {
		for range b.N {
			m.Update(press("pgdown"))
			_ = m.View()
		}
	})
}
