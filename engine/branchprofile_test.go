package engine

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

//go:noinline
func branchLeafA(x int) int { return x*3 + 1 }

//go:noinline
func branchLeafB(x int) int { return x*5 + 2 }

// branchy calls one of two leaves, by a test: the arms are alternatives,
// which FDOM does not relate, so only a block profile can say how often
// each ran.
//
//go:noinline
func branchy(x int) int {
	if x&1 == 0 {
		return branchLeafA(x) + 7
	}
	return branchLeafB(x) + 9
}

var branchySink int

// TestBranchProfileFlow: branch stacks, made up here as the PMU would
// record them (there is none on this machine), on the code of branchy as
// this test process runs it. They show the first arm run three times for
// each run of the second; the timer sampled both leaves equally. The
// dynamic correction (lee2007's DynamicOutflowCorrection) sets the two
// edges 3:1 and keeps their total, where FDOM alone leaves them as sampled.
func TestBranchProfileFlow(t *testing.T) {
	branchySink = branchy(os.Getpid()) // linked in and run
	pid := os.Getpid()
	res := symbol.NewResolver()
	if err := res.LoadProc(pid); err != nil {
		t.Fatal(err)
	}
	entry := uint64(reflect.ValueOf(branchy).Pointer())
	fr := res.Lookup(pid, entry, nil)
	mod, vaddr := fr[len(fr)-1].Module, fr[len(fr)-1].Addr
	if mod == "" {
		t.Skip("the test binary's mapping is not readable")
	}
	x := newFlowFixer()
	defer x.close()
	f := x.funcAt(mod, vaddr)
	if f == nil || f.cfg.Conservative {
		t.Fatalf("branchy's code: %+v", f)
	}
	// Its two leaf calls, by target name.
	file := x.files[mod]
	var siteA, siteB int = -1, -1
	for i, s := range f.sites {
		switch file.NameAt(s.Target) {
		case "github.com/cctop/cctop/engine.branchLeafA":
			siteA = i
		case "github.com/cctop/cctop/engine.branchLeafB":
			siteB = i
		}
	}
	if siteA < 0 || siteB < 0 || f.sites[siteA].Block == f.sites[siteB].Block {
		t.Fatalf("call sites %+v: want branchLeafA's and branchLeafB's, in different blocks", f.sites)
	}
	// Runtime addresses: the test binary is not position-independent, or
	// its load bias is entry - vaddr.
	bias := entry - vaddr
	run := func(site int) []sampler.Branch {
		blk := f.cfg.Blocks[f.sites[site].Block]
		// Newest first: the branch that left the block, then the one
		// that entered it.
		return []sampler.Branch{{From: bias + blk.End - 1, To: bias + 0x10}, {From: bias + 0x20, To: bias + blk.Start}}
	}
	b := newBuilder(res)
	for i := range 4 {
		r := sampler.Record{Kind: sampler.KindSample, PID: uint32(pid), TID: uint32(pid), Branches: run(siteA)}
		if i == 3 {
			r.Branches = run(siteB)
		}
		b.branches.add(&r)
	}

	// The tree: main → branchy → {A, B}, a sample in each leaf.
	tr := b.tree
	fn := func(name string) cct.FuncID { return tr.Intern(cct.Func{Name: name, Module: mod}) }
	root, br := fn("main"), fn("github.com/cctop/cctop/engine.branchy")
	a, bb := fn("github.com/cctop/cctop/engine.branchLeafA"), fn("github.com/cctop/cctop/engine.branchLeafB")
	nA := tr.Add([]cct.Frame{{Func: a}, {Func: br, Addr: f.sites[siteA].Addr}, {Func: root, Addr: 0x99}}, 1, cct.Metrics{Samples: 1})
	nB := tr.Add([]cct.Frame{{Func: bb}, {Func: br, Addr: f.sites[siteB].Addr}, {Func: root, Addr: 0x99}}, 1, cct.Metrics{Samples: 1})
	self := make([]float64, tr.Len())
	self[nA], self[nB] = 1, 1

	// The ratio of the two edges: other call sites (the race detector's,
	// under -race) may take a share of the total as predicted edges.
	w := x.pass(tr, self).w
	if r := w[nA] / w[nB]; math.Abs(r-1) > 1e-9 || x.stats.Dynamic != 0 {
		t.Errorf("without a block profile: weights %v, %v (dynamic %d): FDOM does not relate the arms", w[nA], w[nB], x.stats.Dynamic)
	}
	x.beginPass(b.placeBranchRuns())
	w = x.pass(tr, self).w
	if r := w[nA] / w[nB]; math.Abs(r-3) > 1e-9 || x.stats.Dynamic != 1 {
		t.Errorf("with the block profile: weights %v, %v (dynamic %d), want them 3:1", w[nA], w[nB], x.stats.Dynamic)
	}
	if !strings.Contains(x.stats.String(), "by branch stacks' block profile") {
		t.Errorf("stats %q", x.stats.String())
	}

	// Past maxPlacedRuns a run not placed before is dropped, and counted;
	// one placed before still adds up.
	p := &b.branches
	p.nPlaced = maxPlacedRuns
	known := b.placeBranchRuns()[mod]
	before := known[0].n + known[1].n
	for _, site := range []int{siteA, siteB} {
		r := sampler.Record{Kind: sampler.KindSample, PID: uint32(pid), TID: uint32(pid), Branches: run(site)}
		p.add(&r)
	}
	blk := f.cfg.Blocks[f.sites[siteA].Block]
	r := sampler.Record{Kind: sampler.KindSample, PID: uint32(pid), TID: uint32(pid),
		Branches: []sampler.Branch{{From: bias + blk.End - 2, To: bias + 0x10}, {From: bias + 0x20, To: bias + blk.Start}}}
	p.add(&r)
	after := b.placeBranchRuns()[mod]
	if len(after) != 2 || after[0].n+after[1].n != before+2 || p.dropped != 1 || p.nPlaced != maxPlacedRuns {
		t.Errorf("at the cap: runs %+v (before %d seen), dropped %d, placed %d", after, before, p.dropped, p.nPlaced)
	}
}
