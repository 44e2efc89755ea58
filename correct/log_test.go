package correct

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

var allParams = []Params{
	{},
	{Density: true},
	{Latency: true, Alpha: 1},
	{Density: true, Latency: true, Alpha: 1},
	{Density: true, Latency: true, Alpha: 1000},
	{Density: true, Latency: true, Alpha: 0},
}

func TestLogHandExample(t *testing.T) {
	l := NewLog(0)
	// 2^20 and 2^18: the latency column holds them exactly (latency16.go).
	l.Append(Entry{Node: 0, Thread: 0, Calls: 8, Lambda: 1 << 20, Latency: 1 << 18})
	l.Append(Entry{Node: 2, Thread: 1, Calls: 2, Lambda: 1e6, Latency: 0})
	l.Append(Entry{Node: 2, Thread: 1, Calls: -1, Lambda: 1e6, Latency: -1}) // first sample
	l.Append(Entry{Node: -1, Thread: 0, Calls: 5, Lambda: 1e6, Latency: 0})  // no context

	check := func(what string, got []float64, total float64, want []float64, wantTotal float64) {
		t.Helper()
		if len(got) != len(want) || !near(total, wantTotal) {
			t.Fatalf("%s = %v total %g, want %v total %g", what, got, total, want, wantTotal)
		}
		for i := range want {
			if !near(got[i], want[i]) {
				t.Fatalf("%s = %v, want %v", what, got, want)
			}
		}
	}
	both := Params{Density: true, Latency: true, Alpha: 1}
	// node 0: 8*2^20/(2^20+2^18) = 6.4; node 1: none; node 2: 2 + 0 (unknown calls) = 2.
	d, tot := l.Reweight(both, []float64{9, 9, 9, 9, 9})
	check("Reweight both", d, tot, []float64{6.4, 0, 2}, 8.4)
	// raw: one per sample with a context.
	d, tot = l.Reweight(Params{}, d)
	check("Reweight raw", d, tot, []float64{1, 0, 2}, 3)
	d, tot = l.ReweightThread(both, 1, d)
	check("ReweightThread 1", d, tot, []float64{0, 0, 2}, 2)
	d, tot = l.ReweightThread(Params{}, 0, d)
	check("ReweightThread 0 raw", d, tot, []float64{1, 0, 0}, 1)

	lat := l.Latencies(nil)
	if len(lat) != 3 || lat[0] != 1<<18 || lat[1] != 0 || lat[2] != 0 {
		t.Errorf("Latencies = %v, want [262144 0 0]", lat)
	}

	l.Reset()
	if d, tot = l.Reweight(both, d); len(d) != 0 || tot != 0 || l.Len() != 0 {
		t.Errorf("after Reset: %v %g len %d", d, tot, l.Len())
	}
}

func randomLog(rng *rand.Rand, l *Log, n, nodes int) { randomLogShape(rng, l, n, nodes, 0) }

// randomLogShape is randomLog with shape 1: lambda always the same (the
// log's blocks without a lambda column), 2: no call counts either.
func randomLogShape(rng *rand.Rand, l *Log, n, nodes, shape int) {
	for i := 0; i < n; i++ {
		e := Entry{
			Node:    int32(rng.IntN(nodes)),
			Thread:  int32(rng.IntN(4)),
			Calls:   float32(rng.IntN(2000)),
			Lambda:  1e6,
			Latency: float32(rng.ExpFloat64() * 2e4),
		}
		switch rng.IntN(20) {
		case 0:
			e.Calls, e.Latency = -1, -1
		case 1:
			e.Calls = -1
		case 2:
			e.Latency = 0
		case 3:
			if shape == 0 {
				e.Lambda = 0
			}
		}
		if shape == 2 {
			e.Calls = -1
		}
		l.Append(e)
	}
}

// Reweight and its variants must agree with Weight entry by entry.
//
// Runs 6 to 11 have wide ids: a thread past 65,534 first, and the contexts
// remapped far apart, which widens the blocks' node columns in place.
func TestReweightMatchesWeight(t *testing.T) {
	for run := range 12 {
		capacity, shape, wide := []int{0, 700}[run%2], run/2%3, run >= 6
		rng := rand.New(rand.NewPCG(7, uint64(capacity)))
		l := NewLog(capacity)
		nodeCount := 50
		if wide {
			l.Append(Entry{Node: 3, Thread: 1 << 20, Calls: 4, Lambda: 1e6, Latency: 10})
		}
		randomLogShape(rng, l, 1000, 50, shape)
		if wide {
			before := make([]Entry, l.Len())
			for i := range before {
				before[i] = l.At(i)
			}
			l.Remap(func(n int32) int32 { return n * 1500 })
			nodeCount = 49*1500 + 1
			for i, e := range before {
				e.Node *= 1500
				if got := l.At(i); got != e {
					t.Fatalf("run %d: after Remap At(%d) = %+v, want %+v", run, i, got, e)
				}
			}
		}
		for _, p := range allParams {
			nodes := make([]float64, nodeCount)
			thr := make([]float64, nodeCount)
			var tn, tt float64
			for i := 0; i < l.Len(); i++ {
				e := l.At(i)
				w := Weight(p, float64(e.Calls), float64(e.Lambda), float64(e.Latency))
				nodes[e.Node] += w
				tn += w
				if e.Thread == 2 {
					thr[e.Node] += w
					tt += w
				}
			}
			for _, c := range []struct {
				name  string
				want  []float64
				wantT float64
				f     func([]float64) ([]float64, float64)
			}{
				{"Reweight", nodes, tn, func(d []float64) ([]float64, float64) { return l.Reweight(p, d) }},
				{"ReweightThread", thr, tt, func(d []float64) ([]float64, float64) { return l.ReweightThread(p, 2, d) }},
			} {
				got, total := c.f(nil)
				if len(got) != len(c.want) || !nearRel(total, c.wantT) {
					t.Fatalf("cap %d %v %s: len %d total %g, want len %d total %g", capacity, p, c.name, len(got), total, len(c.want), c.wantT)
				}
				for i := range got {
					if !nearRel(got[i], c.want[i]) {
						t.Fatalf("cap %d %v %s[%d] = %g, want %g", capacity, p, c.name, i, got[i], c.want[i])
					}
				}
			}
		}
	}
}

// nearRel allows for a different summation order (the ring is summed in storage order).
func nearRel(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, a, b, -a, -b)
}

func TestLogCap(t *testing.T) {
	l := NewLog(3)
	for i := int32(0); i < 5; i++ {
		l.Append(Entry{Node: i, Calls: float32(i)})
	}
	if l.Len() != 3 || l.Dropped() != 2 || l.Cap() != 3 {
		t.Fatalf("Len %d Dropped %d Cap %d, want 3 2 3", l.Len(), l.Dropped(), l.Cap())
	}
	for i := 0; i < 3; i++ {
		if got := l.At(i).Node; got != int32(i+2) {
			t.Errorf("At(%d).Node = %d, want %d (newest kept, oldest first)", i, got, i+2)
		}
	}
	// The dropped nodes keep their slots (ids stay aligned with the CCT) but weigh nothing.
	d, tot := l.Reweight(Params{Density: true}, nil)
	if want := []float64{0, 0, 2, 3, 4}; len(d) != 5 || d[0] != 0 || d[1] != 0 || d[2] != 2 || d[3] != 3 || d[4] != 4 || tot != 9 {
		t.Errorf("Reweight after drops = %v total %g, want %v total 9", d, tot, want)
	}
	// Wrap around more than once.
	for i := int32(5); i < 12; i++ {
		l.Append(Entry{Node: i})
	}
	if l.Dropped() != 9 || l.At(0).Node != 9 || l.At(2).Node != 11 {
		t.Errorf("after 12 appends: Dropped %d, At(0) %d, At(2) %d; want 9, 9, 11", l.Dropped(), l.At(0).Node, l.At(2).Node)
	}

	u := NewLog(-1)
	for i := 0; i < 100; i++ {
		u.Append(Entry{Node: int32(i)})
	}
	if u.Len() != 100 || u.Dropped() != 0 || u.At(99).Node != 99 {
		t.Errorf("unbounded: Len %d Dropped %d", u.Len(), u.Dropped())
	}
}

// TestLogRemap: after a fold merged nodes 1 and 3 into 1 and renumbered 4 to 2, weights sum
// on the new ids and the unknown node stays out.
func TestLogRemap(t *testing.T) {
	l := NewLog(4)
	for _, n := range []int32{0, 1, -1, 3, 4, 4} { // the ring drops the first two
		l.Append(Entry{Node: n, Calls: 1})
	}
	to := map[int32]int32{0: 0, 1: 1, 2: 2, 3: 1, 4: 2}
	l.Remap(func(n int32) int32 { return to[n] })
	d, tot := l.Reweight(Params{Density: true}, nil)
	if len(d) != 3 || d[0] != 0 || d[1] != 1 || d[2] != 2 || tot != 3 {
		t.Errorf("Reweight after Remap = %v total %g, want [0 1 2] total 3", d, tot)
	}
	if l.At(0).Node != -1 {
		t.Errorf("an entry with no node moved to %d", l.At(0).Node)
	}
}

func TestReweightNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	l := NewLog(0)
	randomLog(rng, l, 10000, 1000)
	dst := make([]float64, 0, 1000)
	for _, p := range allParams {
		allocs := testing.AllocsPerRun(20, func() {
			dst, _ = l.Reweight(p, dst)
			dst, _ = l.ReweightThread(p, 1, dst)
		})
		if allocs != 0 {
			t.Errorf("%v: %g allocations per run, want 0", p, allocs)
		}
	}
	lat := make([]float64, 0, l.Len())
	if allocs := testing.AllocsPerRun(20, func() { lat = l.Latencies(lat) }); allocs != 0 {
		t.Errorf("Latencies: %g allocations per run, want 0", allocs)
	}
}

// TestAppendNoAllocs: appending to a block with room, and overwriting a
// full ring's oldest entry, allocate nothing (the engine logs every
// sample).
func TestAppendNoAllocs(t *testing.T) {
	l := NewLog(3000)
	e := Entry{Node: 1, Calls: -1, Lambda: 1e6, Latency: 5}
	for range 100 {
		l.Append(e)
	}
	if allocs := testing.AllocsPerRun(100, func() { l.Append(e) }); allocs != 0 {
		t.Errorf("appending with room: %g allocations", allocs)
	}
	for range 3000 {
		l.Append(e)
	}
	if allocs := testing.AllocsPerRun(100, func() { l.Append(e) }); allocs != 0 {
		t.Errorf("overwriting the oldest: %g allocations", allocs)
	}
}

func BenchmarkReweight1M(b *testing.B) {
	l, dst := benchLog()
	p := Params{Density: true, Latency: true, Alpha: 1000}
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = l.Reweight(p, dst)
	}
}

// BenchmarkReweight1MParams covers the other loops and the per-thread variant.
func BenchmarkReweight1MParams(b *testing.B) {
	l, dst := benchLog()
	for _, p := range allParams[:4] {
		b.Run(p.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dst, _ = l.Reweight(p, dst)
			}
		})
	}
	p := DefaultParams()
	b.Run("edges", func(b *testing.B) {
		for b.Loop() {
		}
	})
	b.Run("thread", func(b *testing.B) {
		for b.Loop() {
			dst, _ = l.ReweightThread(p, 1, dst)
		}
	})
}

// benchLog is 1,000,000 entries over 100,000 nodes, nodes drawn with a skew like a real
// profile's (a few hot contexts, a long tail), 8 threads.
func benchLog() (*Log, []float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	const nodes = 100000
	z := rand.NewZipf(rand.New(rand.NewPCG(2, 2)), 1.1, 1, nodes-1)
	l := NewLog(0)
	for i := 0; i < 1000000; i++ {
		e := Entry{
			Node:    int32(z.Uint64()),
			Thread:  int32(rng.IntN(8)),
			Calls:   float32(rng.IntN(5000)),
			Lambda:  1e6,
			Latency: float32(rng.ExpFloat64() * 1e4),
		}
		if i%50 == 0 {
			e.Calls, e.Latency = -1, -1
		}
		l.Append(e)
	}
	l.Append(Entry{Node: nodes - 1}) // the full id range
	return l, make([]float64, 0, nodes)
}

// TestLogCapBoundsMemory: growing to the cap allocates the ring's size, not append's
// next step past it.
func TestLogCapBoundsMemory(t *testing.T) {
	l := NewLog(3000)
	for i := range 5000 {
		l.Append(Entry{Node: int32(i)})
		if n := l.slots(); n > 3000 {
			t.Fatalf("after %d appends the log holds room for %d entries, cap 3000", i+1, n)
		}
	}
	if l.Len() != 3000 || l.At(0).Node != 2000 {
		t.Errorf("Len %d, oldest %d; want 3000, 2000", l.Len(), l.At(0).Node)
	}
}

// TestLogBlocks: a log of several blocks, ring and unbounded, keeps its
// entries in order across the blocks' edges, sums them all, holds room
// for no more than its cap, and grows by a block at a time.
func TestLogBlocks(t *testing.T) {
	const ring = 2*logBlock + logBlock/2
	l := NewLog(ring)
	free := NewLog(0)
	total := 4*logBlock + 7
	for i := range total {
		e := Entry{Node: int32(i % 5), Thread: int32(i), Calls: 1}
		l.Append(e)
		free.Append(e)
		if i == logBlock+3 {
			// Room for the blocks filled and one growing, not a doubled copy.
			if n := l.slots(); n > 2*logBlock+4 {
				t.Fatalf("at %d entries the log holds room for %d", i+1, n)
			}
		}
	}
	if n := l.slots(); n != ring {
		t.Errorf("a full ring holds room for %d entries, want %d", n, ring)
	}
	if l.Len() != ring || l.Dropped() != uint64(total-ring) || free.Len() != total {
		t.Fatalf("Len %d dropped %d, unbounded Len %d", l.Len(), l.Dropped(), free.Len())
	}
	for _, i := range []int{0, 1, logBlock - 1, logBlock, 2*logBlock - 1, 2 * logBlock, ring - 1} {
		if got, want := l.At(i).Thread, int32(total-ring+i); got != want {
			t.Errorf("ring At(%d): entry %d, want %d", i, got, want)
		}
		if got := free.At(i).Thread; got != int32(i) {
			t.Errorf("unbounded At(%d): entry %d", i, got)
		}
	}
	w, sum := l.Reweight(Params{}, nil)
	if sum != ring || len(w) != 5 {
		t.Errorf("Reweight: total %v over %d nodes, want %d over 5", sum, len(w), ring)
	}
	if _, sum := free.ReweightThread(Params{}, int32(3*logBlock+1), nil); sum != 1 {
		t.Errorf("one thread's entry in the fourth block: total %v", sum)
	}
	free.Remap(func(n int32) int32 { return n + 10 })
	if got := free.At(total - 1).Node; got != int32((total-1)%5+10) {
		t.Errorf("Remap missed the last block: node %d", got)
	}
	l.Reset()
	if l.Len() != 0 || l.slots() > logBlock {
		t.Errorf("after Reset: Len %d, %d bytes", l.Len(), l.Bytes())
	}
	l.Append(Entry{Node: 1})
	if l.Len() != 1 || l.At(0).Node != 1 {
		t.Errorf("after Reset and one Append: Len %d, At(0) %+v", l.Len(), l.At(0))
	}
}

// TestEntryBytes: a logged sample holds what it carries: 4 bytes with
// nothing but its place (node and thread ids under 65,535), 6 with a
// latency (timer samples without call counters), 8 with calls (samples on
// a call event), 10 with both, 14 when lambda changes from entry to entry
// too; ids past 65,534 take 4 bytes each in their block; a block that meets
// an unusual entry late keeps the usual values of the entries before it.
func TestEntryBytes(t *testing.T) {
	for _, c := range []struct {
		name string
		e    func(i int) Entry
		want int64
	}{
		{"place only", func(i int) Entry { return Entry{Node: int32(i % 1000), Thread: 7, Calls: -1, Lambda: 1e6, Latency: -1} }, 4},
		{"a context id past 65,534", func(i int) Entry { return Entry{Node: int32(i), Calls: -1, Lambda: 1e6, Latency: -1} }, 6},
		{"both ids past 65,534", func(i int) Entry { return Entry{Node: 70000, Thread: 1 << 20, Calls: -1, Lambda: 1e6, Latency: -1} }, 8},
		{"no context", func(i int) Entry { return Entry{Node: -1, Calls: -1, Lambda: 1e6, Latency: -1} }, 6},
		{"timer, no counts", func(i int) Entry { return Entry{Node: 1, Calls: -1, Lambda: 1e6, Latency: float32(i)} }, 6},
		{"call event", func(i int) Entry { return Entry{Node: 1, Calls: float32(i), Lambda: 0, Latency: -1} }, 8},
		{"counted timer", func(i int) Entry { return Entry{Node: 1, Calls: 3, Lambda: 1e6, Latency: float32(i)} }, 10},
		{"all", func(i int) Entry { return Entry{Node: 1, Calls: 3, Lambda: float32(i), Latency: 2} }, 14},
	} {
		l := NewLog(0)
		for i := range logBlock {
			l.Append(c.e(i))
		}
		if got := l.Bytes() / logBlock; got != c.want {
			t.Errorf("%s: %d bytes an entry, want %d", c.name, got, c.want)
		}
	}
	l := NewLog(0)
	l.Append(Entry{Node: 1, Thread: 4, Calls: -1, Lambda: 1e6, Latency: -1})
	l.Append(Entry{Node: 2, Calls: 5, Lambda: 2e6, Latency: 7})
	l.Append(Entry{Node: 3, Calls: -1, Lambda: 1e6, Latency: -1})
	l.Append(Entry{Node: 1 << 17, Thread: 65535, Calls: -1, Lambda: 1e6, Latency: -1})
	l.Append(Entry{Node: -1, Thread: 5, Calls: -1, Lambda: 1e6, Latency: -1})
	want := []Entry{
		{Node: 1, Thread: 4, Calls: -1, Lambda: 1e6, Latency: -1},
		{Node: 2, Calls: 5, Lambda: 2e6, Latency: 7},
		{Node: 3, Calls: -1, Lambda: 1e6, Latency: -1},
		{Node: 1 << 17, Thread: 65535, Calls: -1, Lambda: 1e6, Latency: -1},
		{Node: -1, Thread: 5, Calls: -1, Lambda: 1e6, Latency: -1},
	}
	for i, w := range want {
		if got := l.At(i); got != w {
			t.Errorf("At(%d) = %+v, want %+v", i, got, w)
		}
	}
	// A ring overwriting a plain block's oldest entry with an unusual one.
	r := NewLog(2)
	r.Append(want[0])
	r.Append(want[2])
	r.Append(want[1])
	if got := r.At(1); got != want[1] {
		t.Errorf("ring: At(1) = %+v, want %+v", got, want[1])
	}
	if got := r.At(0); got != want[2] {
		t.Errorf("ring: At(0) = %+v, want %+v", got, want[2])
	}
	// And with ids that widen the block's columns.
	r.Append(want[3])
	if got := r.At(0); got != want[1] {
		t.Errorf("ring: At(0) = %+v, want %+v", got, want[1])
	}
	if got := r.At(1); got != want[3] {
		t.Errorf("ring: At(1) = %+v, want %+v", got, want[3])
	}
}

// TestLogOutsideHeap: on Linux a log's columns live outside the Go heap,
// so that the collector's allowance is not taken on them; Reset and a
// block's growth return what they replace.
func TestLogOutsideHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the columns are in the Go heap off Linux")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := NewLog(0)
	for i := range 1 << 20 {
		l.Append(Entry{Node: int32(i), Calls: -1, Lambda: 1e6, Latency: float32(i)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := int64(after.HeapAlloc) - int64(before.HeapAlloc); got > l.Bytes()/8 {
		t.Errorf("a log of %d bytes grew the heap by %d", l.Bytes(), got)
	}
	// 16 blocks of three columns each; the growth steps of each gave
	// theirs back.
	if n := len(l.mem.maps); n != 16*3 {
		t.Errorf("%d mappings for 16 full blocks of 3 columns", n)
	}
	l.Reset()
	if n := len(l.mem.maps); n != 2 {
		t.Errorf("after Reset %d mappings, want the first block's node and thread", n)
	}
	l.Append(Entry{Node: 7, Calls: 2, Lambda: 1e6, Latency: -1})
	if e := l.At(0); e.Node != 7 || e.Calls != 2 || e.Latency != -1 {
		t.Errorf("after Reset: %+v", e)
	}
	runtime.KeepAlive(l)
}
