package engine

import (
	"debug/elf"
	"testing"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// libcText maps libc's code at a made-up address, and gives the pc of one
// byte into malloc there.
func libcText(t *testing.T) (sampler.Record, uint64) {
	t.Helper()
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			text = p
		}
	}
	off, err := symbol.FuncOffset(libc, "malloc")
	if text == nil || err != nil {
		t.Skip("no malloc in an executable segment of " + libc)
	}
	m := sampler.Record{Kind: sampler.KindMmap, PID: 4245, TID: 4245, Addr: 0x7f00_0000_0000 + text.Vaddr&^4095,
		PgOff: text.Off &^ 4095, Len: text.Memsz + 4096, Filename: libc}
	return m, m.Addr + off - m.PgOff + 1
}

// TestParkedSamplesKeepOrder: with deferred loads, a sample that needs a
// module still loading waits, and the records after it wait behind it, so
// a mapping that replaces the module's afterwards does not rename it; at
// the end every sample is in the tree, as a builder that waited for each
// load would have put it.
func TestParkedSamplesKeepOrder(t *testing.T) {
	mmap, pc := libcText(t)
	const uctx = ^uint64(512) + 1 // PERF_CONTEXT_USER
	sample := func(tm uint64) sampler.Record {
		return sampler.Record{Kind: sampler.KindSample, PID: 4245, TID: 4245, Time: tm, Period: 1e6, IP: pc, Chain: []uint64{uctx, pc}}
	}
	other := mmap
	other.Filename = "/nonexistent/other.so"
	stream := []sampler.Record{mmap, sample(1), other, sample(2)}

	build := func(deferLoads bool) *builder {
		b := newBuilder(symbol.NewResolver())
		b.deferLoads = deferLoads
		b.handle(&sampler.Batch{Records: stream})
		if deferLoads {
			// The first sample's module was not loaded: it and what came
			// after it wait; the first mapping went in.
			if b.samples != 0 || len(b.parked.recs) != 3 || b.parked.held != 3 {
				t.Fatalf("after the batch: %d samples in, %d waiting, %d held; want 0, 3, 3", b.samples, len(b.parked.recs), b.parked.held)
			}
			if got := b.res.Mappings(4245); len(got) != 1 || got[0].Path != mmap.Filename {
				t.Fatalf("the mapping after the waiting sample went in early: %+v", got)
			}
		}
		if deferLoads {
			// A load may end, and go in, within the lookups of the
			// sample that then failed for it: with nothing in flight
			// and nothing gone in since, the next batch still retries.
			b.res.WaitLoads()
			b.parked.seen = b.res.LoadsInstalled()
			// The first sample goes in; the second now waits for the
			// file mapped over libc, which starts loading.
			b.handle(&sampler.Batch{})
			if len(b.parked.recs) != 1 || b.samples != 1 || b.res.Loading()+int(b.res.LoadsInstalled()-b.parked.seen) == 0 {
				t.Fatalf("with libc in: %d records wait, %d samples in, %d loads in flight; want 1, 1, 1", len(b.parked.recs), b.samples, b.res.Loading())
			}
		}
		b.finish(monoNow())
		return b
	}
	waited, deferred := build(false), build(true)
	if len(deferred.parked.recs) != 0 || deferred.parked.bytes != 0 {
		t.Errorf("after finish: %d records, %d bytes wait", len(deferred.parked.recs), deferred.parked.bytes)
	}
	want := treeText(waited.tree)
	if got := treeText(deferred.tree); got != want {
		t.Errorf("deferred loads built\n%s\nwaiting for each load built\n%s", got, want)
	}
	if n := deferred.tree.SamplesOf("malloc"); n != 1 || deferred.samples != 2 {
		t.Errorf("malloc has %d samples of %d, want 1 of 2:\n%s", n, deferred.samples, treeText(deferred.tree))
	}
	if deferred.firstTime != 1 || deferred.lastTime != 2 {
		t.Errorf("times %d..%d, want 1..2", deferred.firstTime, deferred.lastTime)
	}
}

// TestParkedRecordsAreCopies: a waiting record keeps its own copy of what
// it points to: the reader reuses the chunk a batch's records point into.
func TestParkedRecordsAreCopies(t *testing.T) {
	r := sampler.Record{Kind: sampler.KindSample, Stack: []byte{1, 2, 3}, Chain: []uint64{7}, Regs: []uint64{9},
		Branches: []sampler.Branch{{From: 1}}, Values: []sampler.Value{{Value: 3}}, BuildID: []byte{5}, Filename: "f", Comm: "c"}
	c := cloneRecord(&r)
	r.Stack[0], r.Chain[0], r.Regs[0], r.Branches[0].From, r.Values[0].Value, r.BuildID[0] = 0, 0, 0, 0, 0, 0
	if c.Stack[0] != 1 || c.Chain[0] != 7 || c.Regs[0] != 9 || c.Branches[0].From != 1 || c.Values[0].Value != 3 || c.BuildID[0] != 5 {
		t.Errorf("the copy changed with the batch: %+v", c)
	}
	if recordBytes(&c) < int64(len(c.Stack)) {
		t.Errorf("a copy of %d stack bytes counted as %d", len(c.Stack), recordBytes(&c))
	}
}
