package sampler

import (
	"slices"
	"testing"
)

// branchFormat is testFormat with a branch stack of every user-space taken
// branch, as Config.BranchStack asks for it, and the layout options of
// branch_sample_type.
func branchFormat(extra uint64) Format {
	f := testFormat
	f.SampleType |= sampleBranch
	f.BranchType = BranchAny | BranchUser | extra
	return f
}

// branchSample is a sample of branchFormat: testSample's fields, then the
// branch stack (hw_idx and counters as the format says), then regs_user
// absent.
func branchSample(f Format, s testSample, br []Branch) []byte {
	e := &enc{b: s.bytes()[8:]}
	e.u64(uint64(len(br)))
	if f.BranchType&branchHWIndex != 0 {
		e.u64(uint64(len(br) - 1))
	}
	for _, b := range br {
		e.u64(b.From).u64(b.To).u64(b.Flags)
	}
	if f.BranchType&branchCounters != 0 {
		for range br {
			e.u64(0x55)
		}
	}
	return record(recSample, miscUser, e.b)
}

// TestDecodeBranchStack: the entries come out newest first with their
// flags, whatever layout options the branch sample type adds (hw_idx
// before them, counters after), and the fields before and after the stack
// stay in place; a count larger than the record is malformed, not a panic.
func TestDecodeBranchStack(t *testing.T) {
	br := []Branch{
		{From: 0x401020, To: 0x401100, Flags: 1 | 37<<4 | 4<<20}, // a mispredicted call, 37 cycles
		{From: 0x4010f0, To: 0x401000, Flags: 1 << 20},           // a conditional branch
		{From: 0x401200, To: 0x4010e0, Flags: 6 << 20},           // a return
	}
	s := testSample{id: 7, ip: 0x401100, pid: 10, tid: 11, time: 5, period: 1000,
		values: []Value{{ID: 7, Value: 1}}, chain: []uint64{contextUser, 0x401100, 0x401025}}
	for _, extra := range []uint64{0, branchHWIndex, branchCounters, branchHWIndex | branchCounters} {
		f := branchFormat(extra)
		d := newDecoder(f)
		var r Record
		ok, err := d.decode(branchSample(f, s, br), &r)
		if !ok || err != nil {
			t.Fatalf("options %#x: ok %v, err %v", extra, ok, err)
		}
		if !slices.Equal(r.Branches, br) || r.IP != s.ip || r.TID != s.tid || !slices.Equal(r.Chain, s.chain) {
			t.Errorf("options %#x: branches %+v, ip %#x tid %d chain %x", extra, r.Branches, r.IP, r.TID, r.Chain)
		}
		if b := r.Branches[0]; !b.Mispred() || b.Cycles() != 37 || b.Type() != 4 {
			t.Errorf("options %#x: flags of the newest branch: mispred %v cycles %d type %d", extra, b.Mispred(), b.Cycles(), b.Type())
		}
		if b := r.Branches[2]; b.Mispred() || b.Type() != 6 {
			t.Errorf("options %#x: flags of the oldest: mispred %v type %d", extra, b.Mispred(), b.Type())
		}
	}

	f := branchFormat(0)
	raw := branchSample(f, s, br)
	// The count of entries sits after the chain: claim a thousand.
	at := len(raw) - 8*(1+3*len(br))
	bad := slices.Clone(raw)
	bad[at], bad[at+1] = 0xe8, 0x03
	var r Record
	if ok, err := newDecoder(f).decode(bad, &r); ok || err == nil {
		t.Errorf("a branch count past the record's end decoded: ok %v err %v", ok, err)
	}
}

// TestBatchKeepsBranches: a batch copies each sample's branch stack out of
// the decoder's buffer, which the next sample reuses.
func TestBatchKeepsBranches(t *testing.T) {
	f := branchFormat(0)
	d := newDecoder(f)
	var b Batch
	var r Record
	for i := uint64(1); i <= 3; i++ {
		br := []Branch{{From: 0x1000 * i, To: 0x1100 * i}, {From: 0x1200 * i, To: 0x1300 * i}}
		s := testSample{id: 7, ip: 0x1100 * i, pid: 1, tid: 1, time: i, chain: []uint64{contextUser, 0x1100 * i}}
		if ok, err := d.decode(branchSample(f, s, br), &r); !ok || err != nil {
			t.Fatal(ok, err)
		}
		b.add(&r)
	}
	b.seal()
	for i, rec := range b.Records {
		k := uint64(i + 1)
		if len(rec.Branches) != 2 || rec.Branches[0].From != 0x1000*k || rec.Branches[1].To != 0x1300*k {
			t.Errorf("record %d: branches %+v", i, rec.Branches)
		}
	}
}

func FuzzDecodeBranchStack(f *testing.F) {
	format := branchFormat(branchHWIndex)
	f.Add(branchSample(format, testSample{id: 1, ip: 2, pid: 3, tid: 3, chain: []uint64{contextUser, 2}},
		[]Branch{{From: 1, To: 2, Flags: 3}, {From: 4, To: 5}}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := newDecoder(format)
		var r Record
		ok, err := d.decode(raw, &r)
		if ok && err != nil {
			t.Fatal("ok with error")
		}
		if ok && len(r.Branches) > len(raw)/24 {
			t.Fatalf("%d branches from %d bytes", len(r.Branches), len(raw))
		}
	})
}
