package sampler

import (
	"reflect"
	"testing"
)

func TestDecodeSample(t *testing.T) {
	s := testSample{
		id: 7, ip: 0x401000, pid: 100, tid: 101, time: 123456789, cpu: 1, period: 1001000,
		enabled: 5000, run: 2500,
		values: []Value{{ID: 7, Value: 99}, {ID: 8, Value: 12345}},
		chain:  []uint64{contextKernel, 0xffffffff81000010, 0xffffffff81000020, contextUser, 0x401000, 0x401234},
	}
	d := newDecoder(testFormat)
	var r Record
	ok, err := d.decode(s.bytes(), &r)
	if !ok || err != nil {
		t.Fatalf("decode: ok=%v err=%v", ok, err)
	}
	if r.Kind != KindSample || r.ID != 7 || r.IP != 0x401000 || r.PID != 100 || r.TID != 101 ||
		r.Time != 123456789 || r.CPU != 1 || r.Period != 1001000 || r.TimeEnabled != 5000 || r.TimeRunning != 2500 {
		t.Fatalf("fields: %+v", r)
	}
	if !reflect.DeepEqual(r.Values, s.values) {
		t.Errorf("values = %v, want %v", r.Values, s.values)
	}
	if !reflect.DeepEqual(r.Chain, s.chain) {
		t.Errorf("chain = %x, want %x", r.Chain, s.chain)
	}
	k, u := SplitChain(r.Chain)
	if !reflect.DeepEqual(k, []uint64{0xffffffff81000010, 0xffffffff81000020}) || !reflect.DeepEqual(u, []uint64{0x401000, 0x401234}) {
		t.Errorf("split: kernel %x user %x", k, u)
	}
}

// TestDecodeFixedPeriod: a group sampled at a fixed period leaves PERIOD
// out of its samples (the kernel would write a uprobe sample per hit
// otherwise); they take the format's period, and the next sample of a
// group that has the field does not keep it.
func TestDecodeFixedPeriod(t *testing.T) {
	d := newDecoder(testFormat)
	fixed := testFormat
	fixed.SampleType &^= samplePeriod
	fixed.Period = 1000
	d.setFormat(9, &fixed)
	var r Record
	for _, s := range []testSample{
		{id: 9, ip: 0x401000, pid: 1, tid: 1, noPeriod: true, chain: []uint64{contextUser, 0x401000}},
		{id: 7, ip: 0x402000, pid: 1, tid: 2, period: 3, chain: []uint64{contextUser, 0x402000}},
		{id: 9, ip: 0x403000, pid: 1, tid: 3, noPeriod: true, chain: []uint64{contextUser, 0x403000}},
	} {
		ok, err := d.decode(s.bytes(), &r)
		if !ok || err != nil {
			t.Fatalf("decode: ok=%v err=%v", ok, err)
		}
		want := s.period
		if s.noPeriod {
			want = 1000
		}
		if r.Period != want || r.IP != s.ip || r.TID != s.tid || len(r.Chain) != 2 || r.Chain[1] != s.ip {
			t.Errorf("id %d: period %d (want %d), ip %#x, tid %d, chain %x", s.id, r.Period, want, r.IP, r.TID, r.Chain)
		}
	}
}

func TestSplitChainUserOnly(t *testing.T) {
	k, u := SplitChain([]uint64{contextUser, 1, 2, 3})
	if len(k) != 0 || !reflect.DeepEqual(u, []uint64{1, 2, 3}) {
		t.Fatalf("kernel %v user %v", k, u)
	}
	// Guest frames are dropped, and the part after them is kept.
	k, u = SplitChain([]uint64{contextGuest, 9, contextKernel, 4, contextUser, 5})
	if !reflect.DeepEqual(k, []uint64{4}) || !reflect.DeepEqual(u, []uint64{5}) {
		t.Fatalf("kernel %v user %v", k, u)
	}
}

func TestDecodeSideband(t *testing.T) {
	d := newDecoder(testFormat)
	var r Record

	mmap := (&enc{}).u32(100).u32(100).u64(0x7f0000001000).u64(0x2000).u64(0x1000).
		u32(8).u32(1).u64(424242).u64(0).u32(5).u32(2).str("/usr/lib/libfoo.so").sampleID(100, 100, 50, 0, 7)
	if ok, err := d.decode(record(recMmap2, miscUser, mmap.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	want := Record{Kind: KindMmap, Misc: miscUser, PID: 100, TID: 100, Time: 50, ID: 7, Addr: 0x7f0000001000, Len: 0x2000, PgOff: 0x1000,
		Major: 8, Minor: 1, Inode: 424242, Prot: 5, Flags: 2, Filename: "/usr/lib/libfoo.so"}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("mmap2:\n got %+v\nwant %+v", r, want)
	}

	// MMAP2 carrying a build id instead of device and inode.
	bid := (&enc{}).u32(1).u32(1).u64(0x1000).u64(0x1000).u64(0).u32(20)
	bid.b = append(bid.b, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}...)
	bid.u32(5).u32(2).str("/bin/x").sampleID(1, 1, 9, 0, 7)
	if ok, err := d.decode(record(recMmap2, miscUser|miscMmapBuildID, bid.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if len(r.BuildID) != 20 || r.BuildID[0] != 1 || r.BuildID[19] != 20 || r.Filename != "/bin/x" || r.Inode != 0 {
		t.Errorf("mmap2 build id: %+v", r)
	}

	comm := (&enc{}).u32(100).u32(102).str("worker-1").sampleID(100, 102, 60, 1, 7)
	if ok, err := d.decode(record(recComm, miscCommExec, comm.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if r.Kind != KindComm || r.Comm != "worker-1" || r.TID != 102 || r.Time != 60 || !r.Exec() {
		t.Errorf("comm: %+v", r)
	}

	fork := (&enc{}).u32(100).u32(100).u32(103).u32(100).u64(70).sampleID(100, 103, 71, 0, 7)
	if ok, err := d.decode(record(recFork, 0, fork.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if r.Kind != KindFork || r.PID != 100 || r.PPID != 100 || r.TID != 103 || r.PTID != 100 || r.Time != 70 {
		t.Errorf("fork: %+v", r)
	}

	exit := (&enc{}).u32(100).u32(100).u32(103).u32(103).u64(80).sampleID(100, 103, 81, 0, 7)
	if ok, err := d.decode(record(recExit, 0, exit.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if r.Kind != KindExit || r.TID != 103 || r.Time != 80 {
		t.Errorf("exit: %+v", r)
	}

	lost := (&enc{}).u64(7).u64(42).sampleID(100, 100, 90, 0, 7)
	if ok, err := d.decode(record(recLost, 0, lost.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if r.Kind != KindLost || r.Lost != 42 {
		t.Errorf("lost: %+v", r)
	}
	lostS := (&enc{}).u64(5).sampleID(100, 100, 91, 0, 7)
	if ok, err := d.decode(record(recLostSamples, 0, lostS.b), &r); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if r.Kind != KindLost || r.Lost != 5 {
		t.Errorf("lost samples: %+v", r)
	}

	thr := (&enc{}).u64(95).u64(7).u64(7).sampleID(100, 100, 96, 0, 7)
	for typ, kind := range map[uint32]Kind{recThrottle: KindThrottle, recUnthrottle: KindUnthrottle} {
		if ok, err := d.decode(record(typ, 0, thr.b), &r); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if r.Kind != kind || r.Time != 95 || r.ID != 7 {
			t.Errorf("%v: %+v", kind, r)
		}
	}

	// Types cctop does not use are skipped, not errors.
	if ok, err := d.decode(record(11, 0, make([]byte, 16)), &r); ok || err != nil {
		t.Errorf("unknown type: ok=%v err=%v", ok, err)
	}
}

// TestDecodeSwitch: context switch records of task events (the body is the
// sample_id alone) and of CPU-wide ones (the other task first) decode into
// KindSwitch with the switching task, its time, CPU and event, and the misc
// bits say out, preempted or in.
func TestDecodeSwitch(t *testing.T) {
	d := newDecoder(testFormat)
	var r Record
	for _, c := range []struct {
		name           string
		typ            uint32
		misc           uint16
		out, preempted bool
	}{
		{"in", recSwitch, miscUser, false, false},
		{"out", recSwitch, miscSwitchOut, true, false},
		{"preempted", recSwitch, miscSwitchOut | miscSwitchOutPreempt, true, true},
		{"cpu-wide out", recSwitchCPUWide, miscSwitchOut, true, false},
		{"cpu-wide in", recSwitchCPUWide, 0, false, false},
	} {
		e := &enc{}
		if c.typ == recSwitchCPUWide {
			e.u32(300).u32(301)
		}
		e.sampleID(100, 102, 5000, 1, 7)
		if ok, err := d.decode(record(c.typ, c.misc, e.b), &r); !ok || err != nil {
			t.Fatalf("%s: ok=%v err=%v", c.name, ok, err)
		}
		if r.Kind != KindSwitch || r.PID != 100 || r.TID != 102 || r.Time != 5000 || r.CPU != 1 || r.ID != 7 {
			t.Errorf("%s: %+v", c.name, r)
		}
		if r.SwitchOut() != c.out || r.Preempted() != c.preempted {
			t.Errorf("%s: out %v preempted %v, want %v %v", c.name, r.SwitchOut(), r.Preempted(), c.out, c.preempted)
		}
		wantPID, wantTID := uint32(0), uint32(0)
		if c.typ == recSwitchCPUWide {
			wantPID, wantTID = 300, 301
		}
		if r.NextPrevPID != wantPID || r.NextPrevTID != wantTID {
			t.Errorf("%s: next/prev %d/%d, want %d/%d", c.name, r.NextPrevPID, r.NextPrevTID, wantPID, wantTID)
		}
		if r.Exec() {
			t.Errorf("%s: a switch out reads as an exec (misc bit 13 is both)", c.name)
		}
	}
	// A CPU-wide switch cut inside its sample_id is malformed.
	raw := (&enc{}).u32(300).u32(301).sampleID(100, 102, 5000, 1, 7).b
	if ok, err := d.decode(record(recSwitchCPUWide, miscSwitchOut, raw[:len(raw)-8]), &r); ok || err == nil {
		t.Errorf("truncated cpu-wide switch: ok=%v err=%v", ok, err)
	}
}

// TestDecodeOffCPUSample: samples of the context-switches group (looked up
// by their ID) decode as off-CPU with the group's fixed period of one
// switch; samples of other events around them do not.
func TestDecodeOffCPUSample(t *testing.T) {
	d := newDecoder(testFormat)
	sw := testFormat
	sw.SampleType &^= samplePeriod
	sw.Period, sw.OffCPU = 1, true
	d.setFormat(9, &sw)
	var r Record
	for _, s := range []testSample{
		{id: 7, ip: 0x401000, pid: 1, tid: 2, period: 1000, chain: []uint64{contextUser, 0x401000}},
		{id: 9, ip: 0xffffffff81000000, pid: 1, tid: 2, noPeriod: true,
			chain: []uint64{contextKernel, 0xffffffff81000000, contextUser, 0x402000}},
		{id: 7, ip: 0x403000, pid: 1, tid: 2, period: 1000, chain: []uint64{contextUser, 0x403000}},
	} {
		if ok, err := d.decode(s.bytes(), &r); !ok || err != nil {
			t.Fatalf("decode: ok=%v err=%v", ok, err)
		}
		if want := s.id == 9; r.OffCPU != want || r.Probed {
			t.Errorf("id %d: OffCPU %v Probed %v, want OffCPU %v", s.id, r.OffCPU, r.Probed, want)
		}
		if s.id == 9 && (r.Period != 1 || len(r.Chain) != 4) {
			t.Errorf("switch sample: period %d, chain %x", r.Period, r.Chain)
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	d := newDecoder(testFormat)
	var r Record
	good := testSample{id: 1, ip: 2, pid: 3, tid: 3, chain: []uint64{contextUser, 2, 3}, values: []Value{{1, 1}}}.bytes()
	for n := 0; n < len(good); n++ {
		raw := append([]byte(nil), good[:n]...)
		if len(raw) >= 8 {
			// keep the header honest about the truncated size
			raw[6], raw[7] = byte(n), byte(n>>8)
		}
		if ok, err := d.decode(raw, &r); ok || err == nil {
			t.Fatalf("truncated to %d bytes: ok=%v err=%v", n, ok, err)
		}
	}
	// A callchain length that runs past the record.
	bad := append([]byte(nil), good...)
	copy(bad[len(bad)-32:], (&enc{}).u64(1<<40).b)
	if ok, err := d.decode(bad, &r); ok || err == nil {
		t.Fatalf("huge callchain: ok=%v err=%v", ok, err)
	}
}

func TestParseCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3": {0, 1, 2, 3}, "0-1,4,6-7": {0, 1, 4, 6, 7}} {
		got, err := parseCPUList(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "x", "3-1", "1-", ","} {
		if _, err := parseCPUList(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(testSample{id: 1, ip: 2, pid: 3, tid: 3, chain: []uint64{contextUser, 2, 3}, values: []Value{{1, 1}}}.bytes())
	f.Add(record(recComm, 0, (&enc{}).u32(1).u32(1).str("x").sampleID(1, 1, 1, 0, 1).b))
	f.Add(record(recMmap2, 0, (&enc{}).u32(1).u32(1).u64(1).u64(1).u64(0).u32(0).u32(0).u64(0).u64(0).u32(5).u32(0).str("/a").sampleID(1, 1, 1, 0, 1).b))
	f.Add(record(recSwitch, miscSwitchOut|miscSwitchOutPreempt, (&enc{}).sampleID(1, 1, 1, 0, 1).b))
	f.Add(record(recSwitchCPUWide, miscSwitchOut, (&enc{}).u32(2).u32(2).sampleID(1, 1, 1, 0, 1).b))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := newDecoder(testFormat)
		var r Record
		ok, err := d.decode(raw, &r)
		if ok && err != nil {
			t.Fatal("ok with error")
		}
		if ok && r.Kind == KindSample {
			SplitChain(r.Chain)
		}
	})
}
