package annotate

import (
	"fmt"
	"runtime"
)

// JIT code lives only in its process's memory: a live view can read it
// while the process runs (SetCodeReader), a saved profile cannot. There
// are no symbol bounds to start decoding at, so the instructions shown run
// from the first sampled address, which is an instruction's start, to the
// last one's end.

// CodeReader fills buf with the target's memory at addr, all of it or
// nothing (false).
type CodeReader func(addr uint64, buf []byte) bool

// maxJITRead bounds the bytes read for one JIT function's listing: a
// function's sampled addresses far apart are two functions' to a perf map
// that named them one.
const maxJITRead = 64 << 10

// SetCodeReader sets where the next builds read JIT code (nil: nowhere,
// as for a saved profile).
func (a *Annotator) SetCodeReader(r CodeReader) { a.jit = r }

// jitInsns fills l.Insns with the JIT code between its sampled addresses,
// read from the live target; false when it cannot.
func (a *Annotator) jitInsns(l *Listing) (bool, string) {
	if a.jit == nil || len(l.Addrs) == 0 {
		return false, ""
	}
	lo, last := l.Addrs[0].Addr, l.Addrs[len(l.Addrs)-1].Addr
	cut := ""
	if last-lo >= maxJITRead {
		last, cut = lo+maxJITRead-16, fmt.Sprintf(", its first %d KiB", maxJITRead>>10)
	}
	// The last instruction's bytes past its address (an x86 one is at
	// most 15) may run off the mapping: less slack until it reads.
	var code []byte
	for slack := uint64(16); ; slack /= 2 {
		code = make([]byte, last+slack-lo)
		if a.jit(lo, code) {
			break
		}
		if slack == 1 {
			return false, ""
		}
	}
	ds, ok := decode(runtime.GOARCH, code, lo, nil)
	if !ok {
		return false, ""
	}
	targets := jumpTargets(ds, lo, lo+uint64(len(code)))
	k := 0
	for _, d := range ds {
		in := Insn{Addr: d.addr, Text: d.text, Target: d.target, IsTarget: targets[d.addr]}
		for _, ad := range weigh(&in, d.size, l.Addrs, &k) {
			if ad.Line > 0 {
				in.File, in.Line = ad.File, ad.Line
			}
		}
		l.Insns = append(l.Insns, in)
	}
	return true, "JIT code: instructions read from the running process, from its first sampled one to its last" + cut
}
