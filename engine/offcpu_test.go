package engine

import (
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// Switch records' misc bits (PERF_RECORD_MISC_SWITCH_OUT, _OUT_PREEMPT).
const (
	testSwitchOut     = 1 << 13
	testSwitchPreempt = 1 << 14
)

// offBuilder is a builder accounting time off the CPU from start, whose
// stacks are in a module with no file: each address is a frame of its own.
func offBuilder(start uint64) *builder {
	res := symbol.NewResolver()
	res.AddMapping(1, symbol.Mapping{Start: 0x1000, Limit: 0x100000, Path: "/nonexistent/app"})
	b := newBuilder(res)
	b.off, b.clock = newOffCPU(start), true
	return b
}

func switchRec(tid uint32, tm uint64, out, preempt bool) sampler.Record {
	r := sampler.Record{Kind: sampler.KindSwitch, PID: 1, TID: tid, Time: tm}
	if out {
		r.Misc |= testSwitchOut
	}
	if preempt {
		r.Misc |= testSwitchPreempt
	}
	return r
}

// offRec is a stack of tid off the CPU at tm, its leaf at pc; probed: read
// from /proc in system call sys.
func offRec(tid uint32, tm, pc uint64, probed bool, sys int32) sampler.Record {
	return sampler.Record{Kind: sampler.KindSample, PID: 1, TID: tid, Time: tm, IP: pc, OffCPU: true, Probed: probed, Syscall: sys}
}

func cpuRec(tid uint32, tm, pc uint64) sampler.Record {
	return sampler.Record{Kind: sampler.KindSample, PID: 1, TID: tid, Time: tm, IP: pc, Period: 1e6}
}

func feed(b *builder, recs ...sampler.Record) {
	var batch sampler.Batch
	batch.Records = append(batch.Records, recs...)
	b.handle(&batch)
}

// offAt is the off-CPU time of the contexts whose leaf names reason.
func offAt(b *builder, reason string) int64 {
	var sum int64
	for id := 1; id < b.tree.Len(); id++ {
		if n := b.tree.Node(cct.NodeID(id)); b.tree.Func(n.Func).Name == cct.OffCPUFrame(reason) {
			sum += n.Self.OffCPU
		}
	}
	return sum
}

// TestOffCPUSwitchSamples: with a sample at every switch out, each interval
// off the CPU goes to its own stack, exactly, preemption included; on-CPU
// samples add to wall time.
func TestOffCPUSwitchSamples(t *testing.T) {
	b := offBuilder(100)
	feed(b,
		cpuRec(7, 1000, 0x2000),
		offRec(7, 2000, 0x3000, false, -1), switchRec(7, 2001, true, false), // blocks at 0x3000
		switchRec(7, 9001, false, false),                                     // 7000 ns later
		offRec(7, 10000, 0x4000, false, -1), switchRec(7, 10001, true, true), // preempted at 0x4000
		switchRec(7, 10501, false, false), // 500 ns later
	)
	o := b.off
	if o.off != 7500 || o.preempted != 500 || o.switches != 2 || o.unpaired != 0 {
		t.Errorf("off %d preempted %d switches %d unpaired %d; want 7500, 500, 2, 0", o.off, o.preempted, o.switches, o.unpaired)
	}
	tot := b.tree.Total()
	if tot.OffCPU != 7500 || tot.Time != 1e6 || tot.Wall != 1e6+7500 || tot.Samples != 1 {
		t.Errorf("totals %+v", tot)
	}
	if o.stacks != 2 {
		t.Errorf("%d off-CPU stacks, want 2", o.stacks)
	}
	// Each interval at its own stack: the two contexts hold 7000 and 500.
	var got []int64
	for id := 1; id < b.tree.Len(); id++ {
		if n := b.tree.Node(cct.NodeID(id)); n.Self.OffCPU > 0 {
			got = append(got, n.Self.OffCPU)
		}
	}
	if len(got) != 2 || got[0]+got[1] != 7500 || (got[0] != 7000 && got[1] != 7000) {
		t.Errorf("off-CPU contexts hold %v, want 7000 and 500", got)
	}
}

// TestOffCPUProbes: a probe's stack takes the interval it fell in and the
// ones after it until the next probe; time before a thread's first stack
// goes to [off-cpu: stack not seen]; the reason is the system call.
func TestOffCPUProbes(t *testing.T) {
	b := offBuilder(100)
	feed(b,
		switchRec(7, 1000, true, false), switchRec(7, 2000, false, false), // 1000 before any stack
		switchRec(7, 3000, true, false),
		offRec(7, 3500, 0x3000, true, 202),                                // futex, mid-interval
		switchRec(7, 5000, false, false),                                  // 2000
		switchRec(7, 6000, true, false), switchRec(7, 6300, false, false), // 300, no probe: to the futex stack
		switchRec(7, 7000, true, false),
		offRec(7, 7100, 0x4000, true, -1), // preempted in user space
		switchRec(7, 7400, false, false),  // 400
	)
	if got := offAt(b, notSeen); got != 1000 {
		t.Errorf("%d ns before the first stack, want 1000", got)
	}
	want := map[string]int64{"preempted": 400}
	if n, ok := syscallNames[202]; ok {
		want[n] = 2300
	} else {
		want["syscall 202"] = 2300
	}
	for reason, ns := range want {
		if got := offAt(b, reason); got != ns {
			t.Errorf("[off-cpu: %s] holds %d ns, want %d", reason, got, ns)
		}
	}
	if b.off.probed != 2 {
		t.Errorf("%d probed stacks, want 2", b.off.probed)
	}
}

// TestOffCPUEdges: a thread blocked since before the start counts from the
// start; a lost half of a switch counts nothing and is reported; a thread
// off the CPU now is counted up to now by settle; a new thread waits from
// its creation.
func TestOffCPUEdges(t *testing.T) {
	b := offBuilder(100)
	feed(b,
		switchRec(8, 1100, false, false), // off since the start: 1000
		switchRec(9, 500, true, false),
		switchRec(9, 700, true, false), // the switch in between was lost
		switchRec(9, 900, false, false),
		switchRec(9, 1000, false, false), // and here the switch out
		sampler.Record{Kind: sampler.KindFork, PID: 1, TID: 10, PPID: 1, PTID: 9, Time: 2000},
		switchRec(10, 2050, false, false), // 50 waiting to run
		switchRec(11, 3000, true, false),
	)
	o := b.off
	if o.unpaired != 2 {
		t.Errorf("%d unpaired switches, want 2", o.unpaired)
	}
	tt := b.tree.ThreadTotals()
	// Thread 9's 200 ns were not sampled: they wait for a sampled
	// interval to share them, until the end.
	if tt[8].OffCPU != 1000 || tt[9].OffCPU != 0 || tt[10].OffCPU != 50 {
		t.Errorf("off-CPU per thread %d %d %d, want 1000, 0, 50", tt[8].OffCPU, tt[9].OffCPU, tt[10].OffCPU)
	}
	if o.preempted != 50 {
		t.Errorf("%d ns waiting to run, want the new thread's 50", o.preempted)
	}
	if o.off != 1250 {
		t.Errorf("%d ns off the CPU counted, want 1250", o.off)
	}
	b.settle(3500)
	b.settle(4000)
	feed(b, offRec(11, 4100, 0x5000, false, -1), switchRec(11, 4200, false, false))
	feed(b, offRec(11, 4300, 0x6000, false, -1), switchRec(11, 4301, true, false), switchRec(11, 4401, false, false))
	b.finish(4500)
	tt = b.tree.ThreadTotals()
	if tt[9].OffCPU != 200 || tt[11].OffCPU != 1300 {
		t.Errorf("after the end: threads 9 and 11 off for %d and %d ns, want 200 and 1300", tt[9].OffCPU, tt[11].OffCPU)
	}
	// Thread 11's 1200 ns from 3000 had no sample at their switch out
	// (the one at 4100 came while it was off, which switch samples do
	// not): shared by its one sampled interval, 100 ns at 0x6000.
	if got := offAt(b, "unknown"); got != 1300 {
		t.Errorf("the sampled interval holds %d ns, want all 1300", got)
	}
	if got := offAt(b, notSeen); got != 1000+200+50 {
		t.Errorf("%d ns with no stack, want 1250 (thread 8 since the start, 9 never sampled, 10 new)", got)
	}
	// Exited threads are forgotten.
	feed(b, sampler.Record{Kind: sampler.KindExit, PID: 1, TID: 11, Time: 5000})
	if _, ok := o.threads[11]; ok {
		t.Error("an exited thread is still kept")
	}
}

// TestOffCPUFold: capping the tree keeps the threads' latest stacks on the
// folded tree's nodes.
func TestOffCPUFold(t *testing.T) {
	b := offBuilder(100)
	b.maxNodes = 100
	var recs []sampler.Record
	for i := range uint64(300) {
		recs = append(recs, cpuRec(5, 1000+i, 0x10000+16*i))
	}
	recs = append(recs, offRec(7, 5000, 0x3000, true, 202), switchRec(7, 5001, true, false))
	feed(b, recs...)
	feed(b, switchRec(7, 6001, false, false))
	if b.folds == 0 {
		t.Fatal("the tree was not folded")
	}
	if got := b.tree.ThreadTotals()[7].OffCPU; got != 1000 {
		t.Errorf("%d ns off the CPU after folding, want 1000", got)
	}
	for _, th := range b.off.threads {
		if th.node >= cct.NodeID(b.tree.Len()) {
			t.Errorf("a thread's stack %d is past the folded tree (%d nodes)", th.node, b.tree.Len())
		}
	}
}

// TestOffCPUSwitchPeriod: with every third switch sampled, a thread that
// waits 9 ms at A and 1 µs at B in turn has its time shared in proportion
// to the sampled intervals' lengths: A gets its 9 ms a wait, not the
// intervals that happened to follow a sample of it.
func TestOffCPUSwitchPeriod(t *testing.T) {
	b := offBuilder(100)
	tm := uint64(1000)
	var truthA, truthB int64
	for i := 0; i < 300; i++ {
		pc, d := uint64(0x3000), uint64(9e6)
		if i%2 == 1 {
			pc, d = 0x4000, 1000
		}
		if i%3 == 0 {
			feed(b, offRec(7, tm, pc, false, -1))
		}
		feed(b, switchRec(7, tm+1, true, false), switchRec(7, tm+1+d, false, false))
		if pc == 0x3000 {
			truthA += int64(d)
		} else {
			truthB += int64(d)
		}
		tm += d + 100
		if i%50 == 49 {
			b.settle(tm) // a publish
		}
	}
	b.finish(tm)
	// Both stacks end in an [off-cpu: unknown] leaf under their own frame.
	var a, bb int64
	for id := 1; id < b.tree.Len(); id++ {
		n := b.tree.Node(cct.NodeID(id))
		if n.Self.OffCPU == 0 {
			continue
		}
		switch st := b.tree.Stack(cct.NodeID(id)); {
		case len(st) > 1 && b.tree.Func(st[1].Func).Name == "[app+0x2000]":
			a += n.Self.OffCPU
		case len(st) > 1 && b.tree.Func(st[1].Func).Name == "[app+0x3000]":
			bb += n.Self.OffCPU
		default:
			t.Errorf("off-CPU time at %s", b.tree.Func(n.Func).Name)
		}
	}
	if tot := a + bb; tot != truthA+truthB {
		t.Errorf("total %d, want %d", tot, truthA+truthB)
	}
	if share := float64(a) / float64(truthA); share < 0.99 || share > 1.01 {
		t.Errorf("A got %d ns of its %d (%.3f): the unsampled waits went by what followed a sample", a, truthA, share)
	}
}
