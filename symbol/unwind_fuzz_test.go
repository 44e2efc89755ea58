package symbol

import (
	"encoding/binary"
	"os"
	"testing"
)

// FuzzUnwindUser feeds arbitrary registers and stack bytes, which come
// from the traced process and may be anything, to the unwinder over this
// process's real mappings (our own binary and libc, with their CFI and
// Go tables): it must end, within maxUnwindFrames, without panicking.
func FuzzUnwindUser(f *testing.F) {
	r := NewResolver()
	if err := r.LoadProc(os.Getpid()); err != nil {
		f.Skip(err)
	}
	// A pc inside a function of ours, and one in libc if it is mapped.
	var pcs []uint64
	for _, m := range r.Mappings(os.Getpid()) {
		pcs = append(pcs, m.Start+(m.Limit-m.Start)/2)
	}
	f.Fuzz(func(t *testing.T, regBytes, stack []byte, which uint8, valid uint64) {
		var regs Regs
		for i := range regs {
			if len(regBytes) >= 8*(i+1) {
				regs[i] = binary.LittleEndian.Uint64(regBytes[8*i:])
			}
		}
		if len(pcs) > 0 && which&1 == 0 {
			regs[RegPC] = pcs[int(which>>1)%len(pcs)]
		}
		if which&2 == 0 {
			// Keep the frame pointer and the words in the stack pointing
			// into the copy now and then, so walks go further.
			regs[RegFP] = regs[RegSP] + uint64(which)%uint64(len(stack)+1)
		}
		pcsOut, stop := r.UnwindUser(os.Getpid(), &regs, valid|1<<RegPC|1<<RegSP, stack, 0, nil)
		if len(pcsOut) == 0 || len(pcsOut) > maxUnwindFrames {
			t.Fatalf("%d frames (stop %d)", len(pcsOut), stop)
		}
		if pcsOut[0] != regs[RegPC] {
			t.Fatalf("first pc %#x, want the sampled %#x", pcsOut[0], regs[RegPC])
		}
		if stop >= numStops {
			t.Fatalf("stop %d", stop)
		}
	})
}
