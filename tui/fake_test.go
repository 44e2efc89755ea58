package tui

import (
	"math"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
)

// fakeSource is a Source over a fixed snapshot that records the actions it gets.
type fakeSource struct {
	mu      sync.Mutex
	snap    Snapshot
	actions []Action
	msgs    chan tea.Msg
}

func newFake(s Snapshot) *fakeSource { return &fakeSource{snap: s} }

func (f *fakeSource) Snapshot() Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap
}

func (f *fakeSource) Do(a Action) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, a)
}

func (f *fakeSource) Msgs() <-chan tea.Msg {
	if f.msgs == nil {
		return nil
	}
	return f.msgs
}

func (f *fakeSource) set(s Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap = s
}

func (f *fakeSource) done() []Action {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Action(nil), f.actions...)
}

// sample is one stack of the test profile, leaf first, by function name. A name ending
// in "+" is an inlined frame.
type sample struct {
	stack []string
	tid   uint32
	ms    int64 // time in ms
	n     int64 // samples (the comparison's weight)
	line  int   // if set, the line (and address) of the leaf's call site
}

// testFuncs are the functions of the test profile, with files for call-site lines.
var testFuncs = map[string]cct.Func{
	"main.main":            {Name: "main.main", File: "/src/app/main.go"},
	"main.run":             {Name: "main.run", File: "/src/app/main.go"},
	"main.parseConfig":     {Name: "main.parseConfig", File: "/src/app/config.go"},
	"main.compute":         {Name: "main.compute", File: "/src/app/compute.go"},
	"main.hashBlock":       {Name: "main.hashBlock", File: "/src/app/hash.go"},
	"main.(*Cache).Get":    {Name: "main.(*Cache).Get", File: "/src/app/cache.go"},
	"runtime.mallocgc":     {Name: "runtime.mallocgc", File: "/go/src/runtime/malloc.go"},
	"runtime.memmove":      {Name: "runtime.memmove", File: "/go/src/runtime/memmove_amd64.s"},
	"runtime.gcBgMarkWork": {Name: "runtime.gcBgMarkWorker", File: "/go/src/runtime/mgc.go"},
	"runtime.scanobject":   {Name: "runtime.scanobject", File: "/go/src/runtime/mgcmark.go"},
	"encoding/json.Unmarshal": {
		Name: "encoding/json.Unmarshal", File: "/go/src/encoding/json/decode.go",
	},
	"crypto/sha256.block": {Name: "crypto/sha256.block", File: "/go/src/crypto/sha256/sha256block_amd64.s"},
	"[truncated]":         {Name: "[truncated]"},
}

// testSamples is a small profile: a hot compute path with a recursive step, an inlined
// frame, the same function reached from two call sites, GC work on a second thread, and
// a truncated stack.
var testSamples = []sample{
	{[]string{"crypto/sha256.block", "main.hashBlock+", "main.compute", "main.run", "main.main"}, 1, 420, 400, 0},
	{[]string{"main.hashBlock+", "main.compute", "main.run", "main.main"}, 1, 60, 50, 0},
	{[]string{"runtime.memmove", "main.compute", "main.compute", "main.run", "main.main"}, 1, 90, 120, 0},
	{[]string{"runtime.memmove", "main.compute", "main.run", "main.main"}, 1, 35, 30, 0},
	{[]string{"runtime.memmove", "main.compute", "main.run", "main.main"}, 1, 15, 30, 77},
	{[]string{"runtime.mallocgc", "main.(*Cache).Get", "main.compute", "main.run", "main.main"}, 1, 70, 90, 0},
	{[]string{"main.(*Cache).Get", "main.compute", "main.run", "main.main"}, 1, 30, 40, 0},
	{[]string{"runtime.mallocgc", "encoding/json.Unmarshal", "main.parseConfig", "main.run", "main.main"}, 1, 50, 100, 0},
	{[]string{"encoding/json.Unmarshal", "main.parseConfig", "main.run", "main.main"}, 1, 40, 60, 0},
	{[]string{"main.run", "main.main"}, 1, 10, 10, 0},
	{[]string{"runtime.scanobject", "runtime.gcBgMarkWork"}, 7, 150, 90, 0},
	{[]string{"runtime.gcBgMarkWork"}, 7, 20, 20, 0},
	{[]string{"runtime.memmove", "[truncated]"}, 7, 25, 20, 0},
}

// siteOf gives each (caller, callee) pair its own call-site address and line.
func siteOf(caller, callee string) (uint64, int) {
	h := uint64(0)
	for _, c := range caller + "→" + callee {
		h = h*31 + uint64(c)
	}
	return 0x1000 + h%0x1000, 10 + int(h%90)
}

// buildTree adds samples in the given order (so that ids differ between orders) and
// returns the snapshot over it: Self is time, Compare is the sample count.
func buildTree(samples []sample, order []int) Snapshot {
	return buildTreeOf(testFuncs, samples, order)
}

// buildTreeOf is buildTree with the functions of another test profile.
func buildTreeOf(funcs map[string]cct.Func, samples []sample, order []int) Snapshot {
	t := cct.New()
	ids := map[string]cct.FuncID{}
	fid := func(name string) cct.FuncID {
		if id, ok := ids[name]; ok {
			return id
		}
		id := t.Intern(funcs[name])
		ids[name] = id
		return id
	}
	for _, i := range order {
		s := samples[i]
		st := make([]cct.Frame, len(s.stack))
		for j, name := range s.stack {
			inl := false
			if name[len(name)-1] == '+' {
				name, inl = name[:len(name)-1], true
			}
			st[j] = cct.Frame{Func: fid(name), Inlined: inl}
		}
		// Frame j's Addr is the call site of frame j-1 in it.
		for j := 1; j < len(st); j++ {
			st[j].Addr, st[j].Line = siteOf(stackName(s.stack[j]), stackName(s.stack[j-1]))
		}
		if s.line != 0 && len(st) > 1 {
			st[1].Addr, st[1].Line = 0x5000+uint64(s.line), s.line
		}
		t.Add(st, s.tid, cct.Metrics{Samples: s.n, Time: s.ms * 1e6})
	}
	return snapshotOf(t)
}

func stackName(s string) string {
	if s[len(s)-1] == '+' {
		return s[:len(s)-1]
	}
	return s
}

func inOrder(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// snapshotOf is a deterministic snapshot of t: time as the shown metric, samples as the
// comparison, per-thread time from the tree.
func snapshotOf(t *cct.Tree) Snapshot {
	self := make([]float64, t.Len())
	cmp := make([]float64, t.Len())
	for id := range t.Len() {
		n := t.Node(cct.NodeID(id))
		self[id] = float64(n.Self.Time)
		cmp[id] = float64(n.Self.Samples)
	}
	return Snapshot{
		Tree:    t,
		Self:    self,
		Compare: cmp,
		Metric:  "time",
		Header: Header{
			Target: "pid 4242 (app)", Threads: 2, Rate: 997, Samples: 1000, Lost: 3, Throttled: 0,
			Unwound: 97.5, Counter: "uprobe on main.compute, main.hashBlock (0.6µs a hit)",
			CounterBrief: "uprobes on 2 functions", ProbeCost: 0.7, Trigger: "time",
			Alpha: 1000, Density: true, Latency: true, Comparison: "uncorrected samples",
			Overlap: 91.2, State: "live",
		},
		Threads: []cct.Thread{{TID: 7, PID: 4242, Name: "gc"}, {TID: 1, PID: 4242, Name: "app"}},
		ThreadSelf: func(tid uint32) []float64 {
			out := make([]float64, t.Len())
			for id := range t.Len() {
				for _, ts := range t.Threads(cct.NodeID(id)) {
					if ts.TID == tid {
						out[id] = float64(ts.Self.Time)
					}
				}
			}
			return out
		},
		Seq: 1,
	}
}

// testSnapshot is the test profile with the test counters.
func testSnapshot() Snapshot {
	s := buildTree(testSamples, inOrder(len(testSamples)))
	s.Counters = testCounters()
	s.Counters.Stops = testStops
	return s
}

// testStops are where a live session's truncated stacks stop.
var testStops = []StackStop{
	{Module: "libmkl_avx2.so.2", Why: "no CFI", Percent: 31.0},
	{Module: "[unknown]", Why: "pc in no mapping", Percent: 0.4},
}

// densityShape is one cycle of a thread's call density, in tenths of its mean.
var densityShape = []float64{10, 12, 15, 19, 16, 11, 7, 4, 3, 5, 8, 10}

// testCounters is a live session's counters panel: four threads, busiest first, each
// with 60 buckets of call density (half a second each) and a few gaps, and a latency
// histogram over octaves from 512ns to 256µs.
func testCounters() *Counters {
	threads := []struct {
		tid  uint32
		name string
		mean float64 // calls/ms
		gaps []int   // buckets without a sample
	}{
		{1, "app", 42, []int{17}},
		{11, "worker-1", 23.5, []int{5, 6, 40}},
		{12, "worker-2", 9.2, []int{30}},
		{7, "gc", 0.8, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 33, 34, 58}}, // started late, idles
	}
	c := &Counters{
		Source:        "uprobe on main.compute, main.hashBlock (0.6µs a hit)",
		Cost:          0.012,
		Hits:          48213,
		Params:        "trigger time · 999 Hz · alpha 1000 · density on · latency on",
		BucketSeconds: 0.5,
		DensityUnit:   "calls/ms",
		Latency: LatencyStats{
			N: 12345, Min: 850, Median: 4200, Mean: 5100, Max: 210e3,
			Hist:  []uint64{40, 900, 3100, 4800, 2300, 800, 300, 80, 0, 25},
			Edges: []float64{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288},
		},
	}
	for i, th := range threads {
		pts := make([]float64, 60)
		for j := range pts {
			pts[j] = th.mean * densityShape[(j+3*i)%len(densityShape)] / 10
		}
		for _, j := range th.gaps {
			pts[j] = math.NaN()
		}
		c.Density = append(c.Density, ThreadSeries{TID: th.tid, Name: th.name, Points: pts})
	}
	return c
}

// newPlain is New with the tree as it was before the first screen opened the hot path
// and chains: collapsed, a row per frame, the cursor on the first row. Tests of other
// features use it so that their rows are the frames they name.
func newPlain(src Source, opts Options) *Model {
	m := New(src, opts)
	m.tree.follow, m.tree.chains = false, false
	m.tree.collapseAll()
	m.tree.moveTo(0)
	return m
}
