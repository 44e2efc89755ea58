package cct

import (
	"bytes"
	"slices"
	"testing"
)

// hotLoop adds samples of main;work with work's pc at each of addrs
// (count samples each, on tid), work called from main at 0x10.
func hotLoop(t *Tree, tid uint32, at map[uint64]int64) NodeID {
	var id NodeID
	for pc, n := range at {
		id = t.Add(stackOf(t, fr{name: "main", addr: 0x10}, fr{name: "work", addr: pc, line: int(pc) / 0x10}), tid, ms(n, 10*n))
	}
	return id
}

func TestLeafAddrs(t *testing.T) {
	tr := New()
	id := hotLoop(tr, 1, map[uint64]int64{0x100: 65, 0x120: 17, 0x140: 8})
	hotLoop(tr, 2, map[uint64]int64{0x100: 5, 0x160: 5})
	want := []AddrCount{{0x100, 0x10, 70}, {0x120, 0x12, 17}, {0x140, 0x14, 8}, {0x160, 0x16, 5}}
	if got := tr.LeafAddrs(id, nil); !slices.Equal(got, want) {
		t.Errorf("LeafAddrs = %v; want %v", got, want)
	}
	only2 := tr.LeafAddrs(id, func(tid uint32) bool { return tid == 2 })
	if want := []AddrCount{{0x100, 0x10, 5}, {0x160, 0x16, 5}}; !slices.Equal(only2, want) {
		t.Errorf("LeafAddrs of thread 2 = %v; want %v", only2, want)
	}
	// A snapshot keeps them, and can be added to.
	c := tr.Clone()
	hotLoop(c, 1, map[uint64]int64{0x120: 3})
	if got := c.LeafAddrs(id, nil)[1]; got.Samples != 20 {
		t.Errorf("clone, then 3 more at 0x120: %v; want 20 samples", got)
	}
	if got := tr.LeafAddrs(id, nil)[1]; got.Samples != 17 {
		t.Errorf("the original changed with its clone: %v", got)
	}
}

// The pprof file has one location per address the samples were taken at,
// each with its line and its own samples, and reads back the same.
func TestProfileLocationPerAddress(t *testing.T) {
	tr := New()
	id := hotLoop(tr, 1, map[uint64]int64{0x100: 656, 0x120: 173, 0x140: 82, 0x160: 48})
	p := tr.Profile(Meta{})
	byAddr := map[uint64]int64{}
	for _, s := range p.Sample {
		leaf := s.Location[0]
		if leaf.Line[0].Function.Name != "work" {
			t.Fatalf("leaf %v", leaf.Line[0].Function.Name)
		}
		if want := int64(leaf.Address) / 0x10; leaf.Line[0].Line != want {
			t.Errorf("location at %#x has line %d; want %d", leaf.Address, leaf.Line[0].Line, want)
		}
		if s.Location[1].Address != 0x10 {
			t.Errorf("caller's location at %#x; want the call site 0x10", s.Location[1].Address)
		}
		byAddr[leaf.Address] += s.Value[0]
		if s.Value[1] != 10*s.Value[0] {
			t.Errorf("at %#x: time %d for %d samples", leaf.Address, s.Value[1], s.Value[0])
		}
	}
	want := map[uint64]int64{0x100: 656, 0x120: 173, 0x140: 82, 0x160: 48}
	if len(byAddr) != len(want) {
		t.Fatalf("samples by address %v; want %v", byAddr, want)
	}
	for a, n := range want {
		if byAddr[a] != n {
			t.Errorf("samples by address %v; want %v", byAddr, want)
			break
		}
	}
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, Meta{}); err != nil {
		t.Fatal(err)
	}
	back, _, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	bid, ok := back.Find("main", "work")
	if !ok {
		t.Fatal("main;work not read back")
	}
	if got, want := back.LeafAddrs(bid, nil), tr.LeafAddrs(id, nil); !slices.Equal(got, want) {
		t.Errorf("read back: %v; want %v", got, want)
	}
}

func TestSplitSelf(t *testing.T) {
	addrs := []AddrCount{{0x10, 1, 3}, {0x20, 2, 1}, {0x30, 3, 3}}
	m := Metrics{Samples: 7, Time: 700, Calls: 10, CallsAdj: 1}
	parts := SplitSelf(m, addrs)
	var sum Metrics
	for i, p := range parts {
		if p.Samples != addrs[i].Samples {
			t.Errorf("part %d has %d samples; want its address's %d", i, p.Samples, addrs[i].Samples)
		}
		sum.Add(p)
	}
	if sum != m {
		t.Errorf("parts add up to %+v; want %+v", sum, m)
	}
	if parts[0].Time != 300 || parts[1].Time != 100 {
		t.Errorf("time not shared by samples: %+v", parts)
	}
	// 10 calls over 3:1:3 is 4.29, 1.43, 4.29: the remainders go to the
	// largest fractions, ties to the first.
	if parts[0].Calls != 4 || parts[1].Calls != 2 || parts[2].Calls != 4 {
		t.Errorf("calls shared as %d %d %d; want 4 2 4", parts[0].Calls, parts[1].Calls, parts[2].Calls)
	}
	// Large clocks do not overflow.
	big := SplitSelf(Metrics{Samples: 4, Time: 1 << 62}, []AddrCount{{1, 0, 3}, {2, 0, 1}})
	if big[0].Time != 3<<60 || big[1].Time != 1<<60 {
		t.Errorf("split of 2^62 over 3:1: %d %d", big[0].Time, big[1].Time)
	}
}

// Past maxAddrs, samples go to their context's first address, counted.
func TestLeafAddrsBounded(t *testing.T) {
	tr := New()
	st := stackOf(tr, fr{name: "main", addr: 0x10}, fr{name: "work", addr: 0})
	for pc := range uint64(maxAddrs + 10) {
		st[0].Addr = pc
		tr.Add(st, 1, ms(1, 1))
	}
	if got := tr.AddrsDropped(); got != 10 {
		t.Errorf("AddrsDropped = %d; want 10", got)
	}
	id, _ := tr.Find("main", "work")
	var n int64
	for _, s := range tr.Profile(Meta{}).Sample {
		n += s.Value[0]
		if s.Location[0].Address == 0 && s.Value[0] != 11 {
			t.Errorf("the first address has %d samples; want its own and the 10 dropped", s.Value[0])
		}
	}
	if n != maxAddrs+10 || tr.Node(id).Self.Samples != maxAddrs+10 {
		t.Errorf("the profile has %d samples, the node %d; want %d", n, tr.Node(id).Self.Samples, maxAddrs+10)
	}
	// A rebuilt tree keeps the count, and the addresses.
	work := tr.Node(id).Func
	to := make([]FuncID, tr.NumFuncs())
	for i := range to {
		to[i] = FuncID(i)
	}
	to[work] = tr.Intern(Func{Name: "work2", Module: "/bin/app", File: "app.c"})
	tr.Relabel(to)
	tr.Reroot(tr.Intern(Func{Name: "proc"}))
	if got := tr.AddrsDropped(); got != 10 {
		t.Errorf("after Relabel and Reroot, AddrsDropped = %d; want 10", got)
	}
	rid, ok := tr.Find("proc", "main", "work2")
	if !ok {
		t.Fatal("proc;main;work2 not in the rebuilt tree")
	}
	if got := len(tr.LeafAddrs(rid, nil)); got != maxAddrs {
		t.Errorf("after Relabel and Reroot, %d addresses; want %d", got, maxAddrs)
	}
}

// Folding keeps the addresses of the contexts it keeps.
func TestFoldKeepsAddrs(t *testing.T) {
	tr := New()
	hotLoop(tr, 1, map[uint64]int64{0x100: 90, 0x120: 10})
	addPath(tr, "main;cold1", 1, ms(1, 1))
	addPath(tr, "main;cold2", 1, ms(1, 1))
	tr.Fold(4) // root, main, work and [other]
	id, ok := tr.Find("main", "work")
	if !ok {
		t.Fatal("work folded")
	}
	if got := tr.LeafAddrs(id, nil); len(got) != 2 || got[0].Samples != 90 || got[1].Samples != 10 {
		t.Errorf("after Fold: %v", got)
	}
}
