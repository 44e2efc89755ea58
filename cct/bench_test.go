package cct

import (
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"testing"
)

// benchStacks makes n distinct stacks of depth 20-40 over 200 functions, with call sites,
// roughly what a busy program gives.
func benchStacks(tr *Tree, n int) [][]Frame {
	rng := rand.New(rand.NewSource(1))
	funcs := make([]FuncID, 200)
	for i := range funcs {
		funcs[i] = tr.Intern(Func{Name: fmt.Sprintf("github.com/x/y/pkg.F%d", i), Module: "/bin/app", File: "f.go"})
	}
	stacks := make([][]Frame, n)
	for i := range stacks {
		d := 20 + rng.Intn(21)
		s := make([]Frame, d)
		for j := range s {
			s[j] = Frame{Func: funcs[rng.Intn(len(funcs))], Addr: uint64(0x1000 + rng.Intn(64)*8), Line: 10 + j}
		}
		stacks[i] = s
	}
	return stacks
}

// BenchmarkAdd adds samples to contexts that already exist: the steady state of a live
// profile. It must not allocate.
func BenchmarkAdd(b *testing.B) {
	tr := New()
	stacks := benchStacks(tr, 1000)
	for i, s := range stacks {
		tr.Add(s, uint32(i%8), Metrics{Samples: 1, Time: 1000})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tr.Add(stacks[i%len(stacks)], uint32(i%len(stacks)%8), Metrics{Samples: 1, Time: 1000})
	}
}

func BenchmarkWriteProfile(b *testing.B) {
	tr := New()
	for i, s := range benchStacks(tr, 5000) {
		tr.Add(s, uint32(i%8), Metrics{Samples: 1, Time: 1000})
	}
	meta := Meta{Threads: map[uint32]Thread{1: {TID: 1, Name: "t1"}}}
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.WriteProfile(io.Discard, meta); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNodeMemory reports the heap a tree takes per context (B/node), with one
// thread's self on each leaf: what --max-nodes's default is sized from.
func BenchmarkNodeMemory(b *testing.B) {
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr := New()
		stacks := benchStacks(tr, 20000) // about 500k contexts
		for i, s := range stacks {
			tr.Add(s, uint32(i%8), Metrics{Samples: 1, Time: 1000})
		}
		stacks = nil
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(tr.Len()), "B/node")
		b.ReportMetric(float64(tr.Len()), "nodes")
		runtime.KeepAlive(tr)
	}
}

// TestBytesEstimate: Tree.Bytes, which the counters panel and the record
// summary show, is within a third of what the Go heap grew by for the
// tree (BenchmarkNodeMemory's measurement).
func TestBytesEstimate(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr := New()
	stacks := benchStacks(tr, 5000)
	for i, s := range stacks {
		tr.Add(s, uint32(i%8), Metrics{Samples: 1, Time: 1000})
	}
	stacks = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	est := tr.Bytes()
	t.Logf("%d nodes: estimate %d B, heap grew %d B (%.0f B/node)", tr.Len(), est, heap, float64(heap)/float64(tr.Len()))
	if est < heap*2/3 || est > heap*4/3 {
		t.Errorf("estimate %d B, heap %d B", est, heap)
	}
	runtime.KeepAlive(tr)
}
