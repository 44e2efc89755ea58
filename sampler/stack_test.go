//go:build linux

package sampler

import (
	"context"
	"encoding/binary"
	"testing"
)

// TestUserStackCopy samples a real process with a user stack copy and checks
// what the unwinder will rely on: the registers are the sample's (IP as
// reported, SP inside the copied stack's range), the copy has the asked
// size, and it holds the return addresses the kernel's frame-pointer walk
// found, at their places above SP.
func TestUserStackCopy(t *testing.T) {
	tg := startStackTarget(t, "2", "0", "1500")
	tg.waitWorkers(t, 2)
	s, err := Open(Config{PID: tg.pid, Freq: 499, UserOnly: true, UserStack: 4096, RingPages: 128})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var samples, withStack, ipMatch, retsFound, retsWanted int
	var dw [17]uint64
	if err := s.Run(context.Background(), func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind != KindSample {
				continue
			}
			samples++
			if len(r.Stack) == 0 {
				continue
			}
			withStack++
			if len(r.Stack) > 4096 || len(r.Stack)%8 != 0 {
				t.Errorf("stack copy of %d bytes, want <= 4096 and a multiple of 8", len(r.Stack))
			}
			if len(r.Regs) != 17 {
				t.Fatalf("%d registers, want 17", len(r.Regs))
			}
			if valid := r.DWARFRegs(dw[:]); valid != 1<<17-1 {
				t.Fatalf("DWARF register mask %#x", valid)
			}
			if dw[16] == r.IP {
				ipMatch++
			}
			sp, ok := r.UserSP()
			if !ok || sp != dw[7] {
				t.Fatalf("UserSP %#x/%v, DWARF rsp %#x", sp, ok, dw[7])
			}
			// Return addresses of the frame-pointer chain sit in the copy.
			words := map[uint64]bool{}
			for i := 0; i+8 <= len(r.Stack); i += 8 {
				words[binary.NativeEndian.Uint64(r.Stack[i:])] = true
			}
			_, user := SplitChain(r.Chain)
			for _, ret := range user[1:min(len(user), 4)] {
				retsWanted++
				if words[ret] {
					retsFound++
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if samples < 30 {
		// Two spinning threads for 1.5 s at 499 Hz give hundreds; the
		// floor is low because other tests may share the CPUs.
		t.Fatalf("%d samples", samples)
	}
	if withStack < samples*9/10 {
		t.Errorf("%d of %d samples carry a stack copy", withStack, samples)
	}
	if ipMatch < withStack*9/10 {
		t.Errorf("register IP equals the sample IP in %d of %d", ipMatch, withStack)
	}
	if retsFound < retsWanted*9/10 {
		t.Errorf("%d of %d frame-pointer return addresses found in the stack copy", retsFound, retsWanted)
	}
	t.Logf("%d samples, %d with stacks, %d/%d return addresses in the copy", samples, withStack, retsFound, retsWanted)
}
