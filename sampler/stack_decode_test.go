package sampler

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// stackFormat is the primary group's format under --unwind dwarf: user
// registers and a stack copy on every sample.
var stackFormat = Format{
	SampleType: sampleIdentifier | sampleIP | sampleTID | sampleTime | sampleCallchain | sampleRegsUser | sampleStackUser,
	RegsUser:   unwindRegsMask,
}

// stackSample encodes a sample of stackFormat: regs in mask order, a
// stack copy of len(stack) bytes of which dyn are valid.
func stackSample(ip uint64, regs []uint64, stack []byte, dyn uint64) []byte {
	e := (&enc{}).u64(7).u64(ip).u32(5).u32(6).u64(99).u64(2).u64(contextUser).u64(ip)
	e.u64(2) // PERF_SAMPLE_REGS_ABI_64
	for _, r := range regs {
		e.u64(r)
	}
	e.u64(uint64(len(stack)))
	e.b = append(e.b, stack...)
	if len(stack) > 0 {
		e.u64(dyn)
	}
	return record(recSample, miscUser, e.b)
}

// TestDecodeStackSample: registers and the valid part of the stack copy
// come through, and the registers are found by their perf_regs.h numbers.
func TestDecodeStackSample(t *testing.T) {
	if unwindRegsMask == 0 {
		t.Skip("no register layout for this architecture")
	}
	n := onesBelow(64)
	regs := make([]uint64, n)
	for i := range regs {
		regs[i] = 0x1000 + uint64(i)
	}
	stack := bytes.Repeat([]byte{0xab}, 64)
	binary.NativeEndian.PutUint64(stack, 0x4242)
	d := newDecoder(stackFormat)
	var r Record
	ok, err := d.decode(stackSample(0x401000, regs, stack, 40), &r)
	if !ok || err != nil {
		t.Fatalf("decode: %v %v", ok, err)
	}
	if len(r.Regs) != n || len(r.Stack) != 40 {
		t.Fatalf("%d regs, %d stack bytes; want %d and 40", len(r.Regs), len(r.Stack), n)
	}
	if sp, ok := r.UserSP(); !ok || sp != regs[onesBelow(spReg)] {
		t.Errorf("UserSP %#x %v", sp, ok)
	}
	if !r.HasUserFP || r.UserFP != regs[onesBelow(fpReg)] {
		t.Errorf("UserFP %#x %v", r.UserFP, r.HasUserFP)
	}
	if !r.HasStackWord || r.StackWord != 0x4242 {
		t.Errorf("stack word %#x", r.StackWord)
	}
	var dw [17]uint64
	if valid := r.DWARFRegs(dw[:]); UnwindSupported && (valid != 1<<17-1 || dw[16] != regs[onesBelow(ipReg)]) {
		t.Errorf("DWARF regs %#x, pc %#x", valid, dw[16])
	}
	// A record cut inside the registers or the stack is corrupt, not a panic.
	raw := stackSample(0x401000, regs, stack, 40)
	for cut := 8; cut < len(raw); cut += 8 {
		short := append([]byte(nil), raw[:cut]...)
		binary.NativeEndian.PutUint16(short[6:], uint16(cut))
		if ok, err := d.decode(short, &r); ok && err == nil && len(r.Stack) > 0 && cut < len(raw)-8 {
			t.Errorf("record cut at %d of %d decoded with a %d-byte stack", cut, len(raw), len(r.Stack))
		}
	}
}

func onesBelow(bit int) int {
	n := 0
	mask := uint64(unwindRegsMask)
	if bit < 64 {
		mask &= 1<<bit - 1
	}
	for m := mask; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// FuzzDecodeStack feeds arbitrary bytes as records of the stack-copy
// format: nothing panics, and a decoded stack and register set never
// exceed the record.
func FuzzDecodeStack(f *testing.F) {
	f.Add(stackSample(0x401000, make([]uint64, 17), make([]byte, 64), 64))
	f.Add(stackSample(1, make([]uint64, 17), nil, 0))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := newDecoder(stackFormat)
		var r Record
		ok, err := d.decode(raw, &r)
		if ok && err != nil {
			t.Fatal("ok with error")
		}
		if ok && r.Kind == KindSample && 8*len(r.Regs)+len(r.Stack) > len(raw) {
			t.Fatalf("%d regs and %d stack bytes from a %d-byte record", len(r.Regs), len(r.Stack), len(raw))
		}
		var dw [17]uint64
		r.DWARFRegs(dw[:])
	})
}
