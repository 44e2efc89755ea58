package engine

import (
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/symbol"
)

// The shape of issue 29 in this test binary's own code: tieRun's one block
// calls three stages, each of which spends its time in one shared leaf.

var tieSink int

//go:noinline
func tieLeaf(n int) int {
	x := n | 1
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	return x
}

//go:noinline
func tieStageA(n int) int { return tieLeaf(n) + 1 }

//go:noinline
func tieStageB(n int) int { return tieLeaf(n) + 2 }

//go:noinline
func tieStageC(n int) int { return tieLeaf(n) + 3 }

//go:noinline
func tieRun(n int) int { return tieStageA(n) + tieStageB(6*n) + tieStageC(3*n) }

// TestFlowPassTies: a tree of tieRun's shape with the leaf's samples 1:6:3
// under the stages and none in tieRun or the stages, over the real machine
// code. The relations between levels tie every context under tieRun's
// caller into one class, which shares the samples equally: the calls are
// equal. With tieRun's calls counted, the count is carried to the whole
// class.
func TestFlowPassTies(t *testing.T) {
	tieSink = tieRun(3) // linked in and run
	pid := os.Getpid()
	res := symbol.NewResolver()
	if err := res.LoadProc(pid); err != nil {
		t.Fatal(err)
	}
	x := newFlowFixer()
	defer x.close()
	var mod string
	// at is fn's module address; sites, its call sites by target name.
	at := func(fn any) (uint64, map[string]uint64) {
		entry := uint64(reflect.ValueOf(fn).Pointer())
		fr := res.Lookup(pid, entry, nil)
		m, vaddr := fr[len(fr)-1].Module, fr[len(fr)-1].Addr
		if m == "" {
			t.Skip("the test binary's mapping is not readable")
		}
		mod = m
		f := x.funcAt(m, vaddr)
		if f == nil || f.cfg.Conservative {
			t.Fatalf("code at %#x: %+v", vaddr, f)
		}
		sites := map[string]uint64{}
		for _, s := range f.sites {
			sites[x.files[m].NameAt(s.Target)] = s.Addr
		}
		return vaddr, sites
	}
	const pkg = "github.com/cctop/cctop/engine."
	_, runSites := at(tieRun)
	stageSites := map[string]uint64{}
	for name, fn := range map[string]any{"tieStageA": tieStageA, "tieStageB": tieStageB, "tieStageC": tieStageC} {
		_, s := at(fn)
		stageSites[pkg+name] = s[pkg+"tieLeaf"]
	}

	tr := cct.New()
	fn := func(name string) cct.FuncID { return tr.Intern(cct.Func{Name: name, Module: mod}) }
	main, run, leaf := fn("main"), fn(pkg+"tieRun"), fn(pkg+"tieLeaf")
	var stages, leaves []cct.NodeID
	var runID cct.NodeID
	for i, name := range []string{"tieStageA", "tieStageB", "tieStageC"} {
		st := fn(pkg + name)
		stack := []cct.Frame{{Func: leaf}, {Func: st, Addr: stageSites[pkg+name]}, {Func: run, Addr: runSites[pkg+name]}, {Func: main, Addr: 0x99}}
		if stack[1].Addr == 0 || stack[2].Addr == 0 {
			t.Fatalf("no call site for %s: %#x %#x", name, stack[1].Addr, stack[2].Addr)
		}
		leaves = append(leaves, tr.Add(stack, 1, cct.Metrics{Samples: []int64{10, 60, 30}[i]}))
		stages = append(stages, tr.Node(leaves[i]).Parent)
		runID = tr.Node(stages[i]).Parent
	}
	self := make([]float64, tr.Len())
	for i, l := range leaves {
		self[l] = []float64{10, 60, 30}[i]
	}
	self[tr.Node(runID).Parent] = 4 // main: untied
	p := x.pass(tr, self)
	tied := append(append([]cct.NodeID{runID}, stages...), leaves...)
	for _, id := range tied {
		if math.Abs(p.w[id]-100.0/7) > 1e-9 || p.class[id] != p.class[runID] || p.class[id] < 0 || !p.bound[id] {
			t.Errorf("%s: weight %v class %d bound %v, want 100/7 in tieRun's class", tr.Func(tr.Node(id).Func).Name, p.w[id], p.class[id], p.bound[id])
		}
	}
	if m := tr.Node(runID).Parent; p.w[m] != 4 || p.class[m] >= 0 {
		t.Errorf("main: weight %v class %d, want 4 and none", p.w[m], p.class[m])
	}
	if x.stats.Tied != 7 || x.stats.Classes != 1 {
		t.Errorf("stats %+v: want 7 tied in 1 class", x.stats)
	}

	// Counted: tieRun called 70 times. Its context is anchored to the
	// count, and the stages and leaves, proven to be called as often,
	// with it.
	x.beginPass(nil)
	w := x.flowCalls(tr, self, map[string]float64{pkg + "tieRun": 70}, func(predictedEdge) (cct.NodeID, bool) { return 0, false })
	for _, id := range tied {
		if math.Abs(w[id]-70) > 1e-9 {
			t.Errorf("counted: %s weighs %v, want 70", tr.Func(tr.Node(id).Func).Name, w[id])
		}
	}
}
