package engine

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
	"github.com/cctop/cctop/tui"
)

// jitTarget is a made-up process with JIT code in anonymous memory, whose
// perf map the test writes at /tmp/perf-PID.map (PID above the largest
// pid_max, so no process has it).
type jitTarget struct {
	pid  uint32
	base uint64
	path string
}

func newJITTarget(t *testing.T, n int) jitTarget {
	pid := uint32(1<<22 + 1000*n + os.Getpid()%1000)
	j := jitTarget{pid: pid, base: 0x7f00_0000_0000 + uint64(n)<<32, path: fmt.Sprintf("/tmp/perf-%d.map", pid)}
	os.Remove(j.path)
	t.Cleanup(func() { os.Remove(j.path) })
	return j
}

func (j jitTarget) mmap() sampler.Record {
	return sampler.Record{Kind: sampler.KindMmap, PID: j.pid, TID: j.pid, Addr: j.base, Len: 0x100000, Filename: "//anon"}
}

// sample is a sample at leaf called from the return address ret.
func (j jitTarget) sample(leaf, ret uint64) sampler.Record {
	const uctx = ^uint64(512) + 1 // PERF_CONTEXT_USER
	return sampler.Record{Kind: sampler.KindSample, PID: j.pid, TID: j.pid, Time: 1, Period: 1, IP: j.base + leaf,
		Chain: []uint64{uctx, j.base + leaf, j.base + ret}}
}

// write writes the perf map: lines of offset, size and name.
func (j jitTarget) write(t *testing.T, lines ...string) {
	t.Helper()
	var sb strings.Builder
	for _, l := range lines {
		var off, size uint64
		var name string
		fmt.Sscanf(l, "%x %x %s", &off, &size, &name)
		fmt.Fprintf(&sb, "%x %x %s\n", j.base+off, size, name)
	}
	if err := os.WriteFile(j.path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// selfByName sums the self samples of the tree's contexts by function name.
func selfByName(tr *cct.Tree) map[string]int64 {
	out := map[string]int64{}
	for id := range tr.Len() {
		n := tr.Node(cct.NodeID(id))
		if n.Self.Samples != 0 {
			out[tr.Func(n.Func).Name] += n.Self.Samples
		}
	}
	return out
}

// placeholders counts the contexts whose function is a JIT placeholder,
// and the distinct functions they have.
func placeholders(tr *cct.Tree) (contexts, funcs int) {
	seen := map[cct.FuncID]bool{}
	for id := 1; id < tr.Len(); id++ {
		n := tr.Node(cct.NodeID(id))
		if strings.HasPrefix(tr.Func(n.Func).File, "[JIT pc ") {
			contexts++
			seen[n.Func] = true
		}
	}
	return contexts, len(seen)
}

// nodeNamed is the context with self samples whose function is name.
func nodeNamed(t *testing.T, tr *cct.Tree, name string) cct.NodeID {
	t.Helper()
	for id := range tr.Len() {
		n := tr.Node(cct.NodeID(id))
		if n.Self.Samples != 0 && tr.Func(n.Func).Name == name {
			return cct.NodeID(id)
		}
	}
	t.Fatalf("no context of %s with samples", name)
	return -1
}

func sum(w []float64) float64 {
	var s float64
	for _, v := range w {
		s += v
	}
	return s
}

// TestJITNamedLate: JIT code sampled before its perf map is written gets a
// placeholder per pc, shown as "[anon]"; the map written late (here as
// the process's main thread exits) renames them, the contexts of one
// function merge, and what is kept per node (the sample log, exact calls,
// the baseline) follows; at the process's end the pcs no map named merge
// into "[anon]", and the summary says what was done.
func TestJITNamedLate(t *testing.T) {
	j := newJITTarget(t, 1)
	b := newBuilder(symbol.NewResolver())
	b.weights = newWeighing(triggerExact, nil, 0)
	const a1, a2, bb, c = 0x1010, 0x1020, 0x5000, 0x2008
	batch := &sampler.Batch{Records: []sampler.Record{j.mmap()}}
	for leaf, n := range map[uint64]int{a1: 3, a2: 2, bb: 1} {
		for range n {
			batch.Records = append(batch.Records, j.sample(leaf, c))
		}
	}
	b.handle(batch)
	if got := selfByName(b.tree); got["[anon]"] != 6 || len(got) != 1 {
		t.Fatalf("before the map: self by name %v, want all 6 in [anon]", got)
	}
	// Three leaf pcs and the caller's: four placeholders, each its own
	// function, all shown as [anon].
	if nc, nf := placeholders(b.tree); nc != 4 || nf != 4 {
		t.Fatalf("%d contexts of %d placeholders, want 4 of 4", nc, nf)
	}
	for id := 1; id < b.tree.NumFuncs(); id++ {
		if f := b.tree.Func(cct.FuncID(id)); strings.HasPrefix(f.File, "[JIT pc ") && (f.Name != "[anon]" || f.Short != "[anon]" || f.Module != "//anon") {
			t.Errorf("placeholder %+v does not show as [anon]", f)
		}
	}
	b.baseline = selfOf(b.tree, func(m cct.Metrics) int64 { return m.Samples })
	n0 := b.tree.Len()

	// The map is written as the main thread exits: read at the batch's end.
	j.write(t, "1000 100 hot_fn", "2000 40 caller_fn")
	b.handle(&sampler.Batch{Records: []sampler.Record{{Kind: sampler.KindExit, PID: j.pid, TID: j.pid}}})
	got := selfByName(b.tree)
	if got["hot_fn"] != 5 || got["[anon]"] != 1 || len(got) != 2 {
		t.Fatalf("after the map: self by name %v, want hot_fn 5, [anon] 1", got)
	}
	if nc, nf := placeholders(b.tree); nc != 1 || nf != 1 {
		t.Errorf("%d contexts of %d placeholders left, want bb's alone", nc, nf)
	}
	hot := nodeNamed(t, b.tree, "hot_fn")
	if p := b.tree.Node(hot).Parent; b.tree.Func(b.tree.Node(p).Func).Name != "caller_fn" {
		t.Errorf("hot_fn's caller is %s", b.tree.Func(b.tree.Node(p).Func).Name)
	}
	if b.tree.Len() != n0-1 || b.reshaped != 1 {
		t.Errorf("%d nodes (was %d), %d passes renumbering them: want one merge, one pass", b.tree.Len(), n0, b.reshaped)
	}
	if len(b.baseline) != b.tree.Len() || b.baseline[hot] != 5 || sum(b.baseline) != 6 {
		t.Errorf("baseline not moved with the merge: %v (hot_fn is node %d)", b.baseline, hot)
	}
	if w := b.weights; sum(w.exact) != 6 || w.exact[hot] != 5 {
		t.Errorf("exact calls not moved with the merge: %v", w.exact)
	}
	inHot := 0
	for i := range b.weights.log.Len() {
		if e := b.weights.log.At(i); e.Node == int32(hot) {
			inHot++
		} else if b.tree.Func(b.tree.Node(cct.NodeID(e.Node)).Func).Name != "[anon]" {
			t.Errorf("log entry %d on node %d, %s", i, e.Node, b.tree.Func(b.tree.Node(cct.NodeID(e.Node)).Func).Name)
		}
	}
	if inHot != 5 {
		t.Errorf("%d logged samples on hot_fn, want 5", inHot)
	}

	// The process is gone: the pc no map names merges into [anon], from
	// the map the builder kept past the resolver's Exit.
	b.handle(&sampler.Batch{Records: []sampler.Record{{Kind: sampler.KindGone, PID: j.pid, TID: j.pid}}})
	if nc, _ := placeholders(b.tree); nc != 0 || len(b.jit.procs) != 0 || len(b.jit.retired) != 0 {
		t.Errorf("after the exit: %d placeholder contexts, %d processes, %d retired", nc, len(b.jit.procs), len(b.jit.retired))
	}
	if got := selfByName(b.tree); got["hot_fn"] != 5 || got["[anon]"] != 1 {
		t.Errorf("after the exit: %v", got)
	}
	lines := strings.Join(b.jitLines(nil), "\n")
	want := fmt.Sprintf("JIT names: 3 pcs of pid %d named from %s after they were sampled (3 written at exit), 83.3%% of self time; 1 pc (16.7%% of self time) no map named", j.pid, j.path)
	if lines != want {
		t.Errorf("summary:\n%s\nwant\n%s", lines, want)
	}
}

// TestJITNamedAsMapGrows: a running process's map that grows renames its
// placeholders at the next check, and a check with nothing new changes
// nothing; at the profile's end the placeholders no map named merge into
// their mapping's one function.
func TestJITNamedAsMapGrows(t *testing.T) {
	j := newJITTarget(t, 2)
	b := newBuilder(symbol.NewResolver())
	b.handle(&sampler.Batch{Records: []sampler.Record{j.mmap(), j.sample(0x100, 0x908), j.sample(0x104, 0x908),
		j.sample(0x200, 0x908), j.sample(0x300, 0x908)}})
	if nc, _ := placeholders(b.tree); nc != 5 {
		t.Fatalf("%d placeholder contexts, want 5", nc)
	}
	// A snapshot, and an export, show the placeholders as what they
	// display as: one [anon], with the weights of the pcs it merges.
	clone := b.tree.Clone()
	self := selfOf(clone, func(m cct.Metrics) int64 { return m.Time })
	snap := tui.Snapshot{Tree: clone, Self: self, Compare: self,
		ThreadSelf: func(tid uint32) []float64 { return selfOf(clone, func(m cct.Metrics) int64 { return m.Time }) }}
	b.showJIT(&snap)
	if nc, _ := placeholders(snap.Tree); nc != 0 || snap.Tree == clone {
		t.Fatalf("the snapshot shows %d placeholder contexts", nc)
	}
	leaf := nodeNamed(t, snap.Tree, "[anon]")
	if th := snap.ThreadSelf(j.pid); len(snap.Self) != snap.Tree.Len() || snap.Self[leaf] != 4 || snap.Compare[leaf] != 4 ||
		len(th) != snap.Tree.Len() || th[leaf] != 4 || sum(th) != 4 {
		t.Errorf("snapshot weights not moved onto its merged tree: self %v, thread %v (leaf %d)", snap.Self, th, leaf)
	}
	if nc, _ := placeholders(b.jitExported()); nc != 0 {
		t.Errorf("the export has %d placeholder contexts", nc)
	}
	if nc, _ := placeholders(b.tree); nc != 5 {
		t.Fatalf("showing the placeholders merged changed the builder's tree: %d placeholder contexts", nc)
	}
	j.write(t, "100 10 first_fn", "900 10 main_fn")
	time.Sleep(2 * 100 * time.Millisecond) // past the map's recheck interval
	b.jitAfterBatch(b.jit.lastCheck + jitCheckEvery)
	// The two pcs of first_fn merge: one pass renumbering the nodes.
	if got := selfByName(b.tree); got["first_fn"] != 2 || got["[anon]"] != 2 || b.reshaped != 1 {
		t.Fatalf("after the map grew: %v, %d passes", got, b.reshaped)
	}
	b.jitAfterBatch(b.jit.lastCheck + jitCheckEvery)
	if b.reshaped != 1 {
		t.Error("a check with nothing new renumbered the tree")
	}
	// Named all; then a new pc waits for a name: one process, one report.
	j.write(t, "100 10 first_fn", "900 10 main_fn", "200 10 second_fn", "300 10 third_fn")
	time.Sleep(2 * 100 * time.Millisecond)
	b.jitAfterBatch(b.jit.lastCheck + jitCheckEvery)
	if p := b.jit.procs[j.pid]; p == nil || len(p.pcs) != 0 {
		t.Fatalf("after the map named every pc: %+v", p)
	}
	b.handle(&sampler.Batch{Records: []sampler.Record{j.sample(0x400, 0x908), j.sample(0x404, 0x908)}})
	b.finish(monoNow())
	if nc, _ := placeholders(b.tree); nc != 0 {
		t.Errorf("%d placeholder contexts at the end", nc)
	}
	anon := map[cct.FuncID]bool{}
	for id := 1; id < b.tree.Len(); id++ {
		if n := b.tree.Node(cct.NodeID(id)); b.tree.Func(n.Func).Name == "[anon]" {
			anon[n.Func] = true
		}
	}
	if len(anon) != 1 {
		t.Errorf("%d functions named [anon] at the end, want the mapping's one", len(anon))
	}
	if len(b.jit.reports) != 1 {
		t.Fatalf("%d reports for one process", len(b.jit.reports))
	}
	r := b.jit.reports[0]
	if r.named[jitGrew] != 5 || r.unnamed != 2 || !r.found || r.entries != 4 {
		t.Errorf("report %+v: want 5 named as the map grew, 2 unnamed, the map found with 4 entries", *r)
	}
	// At the end the two unnamed pcs merged into one [anon]; a relabel
	// where nothing merges (second_fn, third_fn) keeps the ids.
	if b.reshaped != 2 {
		t.Errorf("%d passes renumbering the nodes, want 2", b.reshaped)
	}
}

// TestJITPlaceholderBound: past maxJITPerProc unnamed pcs, a process's
// further pcs take their mapping's name at once; with no map ever written
// they all end in [anon], and the summary says how to get names.
func TestJITPlaceholderBound(t *testing.T) {
	j := newJITTarget(t, 3)
	b := newBuilder(symbol.NewResolver())
	batch := &sampler.Batch{Records: []sampler.Record{j.mmap()}}
	for i := range maxJITPerProc + 10 {
		batch.Records = append(batch.Records, j.sample(uint64(0x10+i*4), 0x8))
	}
	b.handle(batch)
	// The caller's pc takes a placeholder too: 11 leaves are past the bound.
	p := b.jit.procs[j.pid]
	if p == nil || len(p.pcs) != maxJITPerProc || p.capped != 11 {
		t.Fatalf("process's placeholders: %d, capped %d; want %d and 11", len(p.pcs), p.capped, maxJITPerProc)
	}
	b.finish(monoNow())
	if nc, _ := placeholders(b.tree); nc != 0 {
		t.Errorf("%d placeholder contexts at the end", nc)
	}
	if got := selfByName(b.tree); got["[anon]"] != maxJITPerProc+10 {
		t.Errorf("self by name %v", got)
	}
	lines := b.jitLines(map[uint32]cct.Thread{j.pid: {TID: j.pid, PID: j.pid, Name: "java"}})
	// No map was written: jitRegionLines says so; this says what the
	// bound did.
	if len(lines) != 1 || !strings.HasPrefix(lines[0], fmt.Sprintf("JIT code: 11 pcs of java (pid %d) past %d waiting for a name took", j.pid, maxJITPerProc)) {
		t.Errorf("summary:\n%s", strings.Join(lines, "\n"))
	}
}
