package flow

import (
	"fmt"
	"math/bits"
	"sort"
	"sync"
)

// Why a CFG is Conservative: CFG.Why is one of these, then " at 0x" and
// the address of the instruction (or byte) that stopped the decoding. When
// there are several, Why names the one at the lowest address.
const (
	WhyIndirectJump = "indirect jump"            // a jump table or a tail call through a register or memory
	WhyTailCall     = "tail call"                // a direct unconditional jump out of the function's bounds
	WhyJumpOut      = "jump out of bounds"       // a conditional one: a conditional tail call, or a jump to a .cold part
	WhyMidInsn      = "jump into an instruction" // a target that the linear sweep did not find as an instruction start
	WhyUndecodable  = "undecodable bytes"        // data in code, or an instruction the decoder does not know
	WhyFallsOff     = "falls off the end"        // the last instruction flows on past End
	WhyEmpty        = "no code"
	WhyWraps        = "bounds wrap around the address space"
	WhyArch         = "unknown architecture"
)

// Decode builds the CFG of one function from its machine code by a linear
// sweep. arch is "amd64" (64-bit mode) or "arm64"; code holds the
// function's bytes and start its address, so the function spans
// [start, start+len(code)) as its symbol says. noReturn, which may be nil,
// tells whether a direct call's target never returns (callers map the
// target to a name and ask NoReturnName): such a call ends its block as
// an exit, so the code after it is not taken for the call's continuation.
//
// A call that is the function's last instruction (but for padding) is
// taken as one that does not return whatever noReturn says: its return
// address is outside the function, so a compiler put it there knowing
// the callee never comes back (a static noreturn function, say).
//
// A block ending in a conditional branch has the target as Succs[0] and
// the fallthrough as Succs[1], or one successor when both are the same
// block. A direct jump or a conditional branch out of the function's
// bounds makes its block an Exit; so does an indirect jump, which may be
// a tail call as well as a jump table.
//
// Padding that no branch reaches after an instruction that does not fall
// through (int3, nop, ud2, hlt, zero bytes; nop, udf, brk on arm64) is in
// no block. Other code that no path from the entry reaches stays as
// blocks marked Unreached, and what they hold (data, say) makes no
// function conservative.
//
// The CFG is always returned, with the blocks that could be built even
// when it is Conservative. Decode allocates the CFG, its blocks and one
// array each for the successors and the call sites; its scratch is
// pooled. It may run on several goroutines at once.
func Decode(arch string, code []byte, start uint64, noReturn func(target uint64) bool) *CFG {
	g := &CFG{Start: start, End: start + uint64(len(code))}
	step := stepFor(arch)
	if step == nil {
		g.Conservative, g.Why = true, WhyArch
		return g
	}
	if len(code) == 0 {
		g.Conservative, g.Why = true, WhyEmpty
		return g
	}
	if g.End <= start {
		// No function does; the addresses of its blocks would not be in order.
		g.Conservative, g.Why = true, WhyWraps
		return g
	}
	s := scratchPool.Get().(*scratch)
	s.reset(len(code))
	s.sweep(code, start, step, noReturn)
	s.leaders(start)
	s.segments()
	s.build(g, start)
	if s.why != "" {
		g.Conservative = true
		g.Why = fmt.Sprintf("%s at %#x", s.why, start+uint64(s.whyOff))
	}
	s.release()
	return g
}

// The steps live in decode_x86.go and decode_a64.go, not in _amd64 and
// _arm64 files, which Go would build only for that GOARCH: a profile of
// either is read on any machine.

func stepFor(arch string) func(code []byte, pc uint64) insn {
	switch arch {
	case "amd64":
		return stepAMD64
	case "arm64":
		return stepARM64
	}
	return nil
}

// insn is what an architecture's step says of one instruction: only what
// the CFG needs, so that the sweep keeps nothing per plain instruction.
type insn struct {
	n      int // length in bytes, > 0
	kind   kind
	target uint64 // for a direct branch or call
	pad    bool   // what compilers put between code that nothing runs
}

type kind uint8

// The order matters: ends and fallsThrough compare kinds.
const (
	kPlain   kind = iota
	kCall         // direct call
	kCallInd      // call through a register or memory
	kJcc          // direct conditional branch: target and fallthrough
	kCallEnd      // direct call that does not return
	kJmp          // direct unconditional jump
	kJmpInd       // jump through a register or memory
	kRet          // return (and exception return)
	kTrap         // ud2, hlt, int3, brk, udf: the function leaves by a fault
	kBad          // bytes that do not decode
)

// ends says whether the instruction ends its block.
func (k kind) ends() bool { return k >= kJcc }

// fallsThrough says whether the instruction may go on to the next one.
func (k kind) fallsThrough() bool { return k <= kJcc }

// event is one instruction of a kind other than kPlain, in sweep order.
type event struct {
	off    int
	n      int
	target uint64
	kind   kind
	bad    bool // a direct branch whose target is no block start
}

// span is a run of padding instructions [a, b), as offsets into the code.
type span struct{ a, b int }

// seg is a piece of the code between two cuts (a branch target or the end
// of an instruction that ends a block): a block unless it is dropped as
// unreached padding.
type seg struct {
	a, b  int
	term  int  // index into events of the instruction ending it, -1 if it runs into the next
	block int  // index into CFG.Blocks, -1 when dropped
	bad   int  // offset of the first undecodable bytes in it, -1 if none
	off   bool // it flows on past the function's end
}

// scratch is what one Decode needs besides the CFG it returns; pooled so
// that decoding many functions costs the CFGs only.
type scratch struct {
	starts []uint64 // bitmap over offsets: an instruction starts there
	cuts   []uint64 // bitmap over offsets: a block starts there
	lead   []uint64 // bitmap over offsets: a branch target or the entry
	events []event
	pads   []span
	segs   []seg
	stack  []int  // blocks to visit, finding the reached ones
	seen   []bool // the reached blocks
	n      int
	why    string
	whyOff int
	last   int // index into events of the last instruction that is not padding, if an event; -1 otherwise
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (s *scratch) reset(n int) {
	w := (n + 64) / 64 // one more bit: the cut at n
	s.starts = zeroed(s.starts, w)
	s.cuts = zeroed(s.cuts, w)
	s.lead = zeroed(s.lead, w)
	s.events = s.events[:0]
	s.pads = s.pads[:0]
	s.segs = s.segs[:0]
	s.stack = s.stack[:0]
	s.n = n
	s.why = ""
	s.whyOff = 0
	s.last = -1
}

// release gives the scratch back unless one huge function made it too
// big to be worth keeping.
func (s *scratch) release() {
	if cap(s.starts) > 1<<14 || max(cap(s.events), cap(s.segs), cap(s.pads), cap(s.stack)) > 1<<16 {
		return
	}
	scratchPool.Put(s)
}

func zeroed(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	b = b[:n]
	clear(b)
	return b
}

func set(b []uint64, i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func has(b []uint64, i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// nextSet returns the first set bit at or after i, or -1.
func nextSet(b []uint64, i int) int {
	w := i >> 6
	if w >= len(b) {
		return -1
	}
	x := b[w] >> (uint(i) & 63)
	if x != 0 {
		return i + bits.TrailingZeros64(x)
	}
	for w++; w < len(b); w++ {
		if b[w] != 0 {
			return w<<6 + bits.TrailingZeros64(b[w])
		}
	}
	return -1
}

// stop records a reason to be conservative, keeping the lowest address's.
func (s *scratch) stop(why string, off int) {
	if s.why == "" || off < s.whyOff {
		s.why, s.whyOff = why, off
	}
}

// sweep decodes every instruction once, keeping the instruction starts,
// the events and the padding runs.
func (s *scratch) sweep(code []byte, start uint64, step func([]byte, uint64) insn, noReturn func(uint64) bool) {
	for off := 0; off < len(code); {
		in := step(code[off:], start+uint64(off))
		if in.n <= 0 || in.n > len(code)-off {
			// A step never says so; this keeps a wrong one from looping.
			in = insn{n: len(code) - off, kind: kBad}
		}
		set(s.starts, off)
		if in.kind == kCall && noReturn != nil && noReturn(in.target) {
			in.kind = kCallEnd
		}
		if in.pad {
			if k := len(s.pads) - 1; k >= 0 && s.pads[k].b == off {
				s.pads[k].b = off + in.n
			} else {
				s.pads = append(s.pads, span{off, off + in.n})
			}
		}
		if in.kind != kPlain {
			s.events = append(s.events, event{off: off, n: in.n, target: in.target, kind: in.kind})
		}
		if !in.pad {
			s.last = -1
			if in.kind != kPlain {
				s.last = len(s.events) - 1
			}
		}
		off += in.n
	}
}

// leaders marks the blocks' starts: the entry, the branch targets inside
// the function, and the instruction after each one that ends a block; and
// records why the function cannot be followed, if it cannot.
func (s *scratch) leaders(start uint64) {
	set(s.lead, 0)
	if s.last >= 0 && s.events[s.last].kind == kCall {
		// Nothing but padding after it: see Decode.
		s.events[s.last].kind = kCallEnd
	}
	for i := range s.events {
		e := &s.events[i]
		switch e.kind {
		case kJcc, kJmp:
			t := e.target - start // wraps to huge when below start
			switch {
			case t >= uint64(s.n):
				if e.kind == kJmp {
					s.stop(WhyTailCall, e.off)
				} else {
					s.stop(WhyJumpOut, e.off)
				}
			case !has(s.starts, int(t)):
				s.stop(WhyMidInsn, e.off)
				e.bad = true
			default:
				set(s.lead, int(t))
			}
		case kJmpInd:
			s.stop(WhyIndirectJump, e.off)
		}
		if e.kind.ends() {
			set(s.cuts, e.off+e.n)
		}
	}
	for i, w := range s.lead {
		s.cuts[i] |= w
	}
}

// segments cuts the code into pieces at the cuts, and drops the pieces of
// padding that nothing reaches: neither a branch nor the piece before,
// which ended with an instruction that does not fall through or was
// dropped itself.
func (s *scratch) segments() {
	ev, pad := 0, 0
	reached := true
	nblocks := 0
	for a := 0; a < s.n; {
		b := nextSet(s.cuts, a+1)
		if b < 0 || b > s.n {
			b = s.n
		}
		sg := seg{a: a, b: b, term: -1, block: -1, bad: -1}
		for ev < len(s.events) && s.events[ev].off < b {
			if s.events[ev].kind.ends() {
				sg.term = ev // ends() cuts right after it: the last event here
			}
			ev++
		}
		keep := reached || has(s.lead, a)
		if !keep {
			for pad < len(s.pads) && s.pads[pad].b <= a {
				pad++
			}
			keep = pad == len(s.pads) || s.pads[pad].a > a || s.pads[pad].b < b
		}
		if keep {
			sg.block = nblocks
			nblocks++
		}
		reached = keep && (sg.term < 0 || s.events[sg.term].kind.fallsThrough())
		s.segs = append(s.segs, sg)
		a = b
	}
}

// build makes the blocks of the kept pieces, their successors and calls.
func (s *scratch) build(g *CFG, start uint64) {
	nblocks, ncalls := 0, 0
	for _, sg := range s.segs {
		if sg.block >= 0 {
			nblocks++
		}
	}
	for _, e := range s.events {
		if e.kind == kCall || e.kind == kCallInd || e.kind == kCallEnd {
			ncalls++
		}
	}
	g.Blocks = make([]Block, nblocks)
	succs := make([]int, 0, 2*nblocks)
	calls := make([]CallSite, 0, ncalls)
	ev := 0
	for i := range s.segs {
		sg := &s.segs[i]
		if sg.block < 0 {
			continue
		}
		blk := &g.Blocks[sg.block]
		blk.Start, blk.End = start+uint64(sg.a), start+uint64(sg.b)
		c0 := len(calls)
		for ; ev < len(s.events) && s.events[ev].off < sg.b; ev++ {
			e := &s.events[ev]
			if e.off < sg.a {
				continue
			}
			switch e.kind {
			case kCall, kCallEnd:
				calls = append(calls, CallSite{Addr: start + uint64(e.off), Ret: start + uint64(e.off+e.n), Target: e.target, Block: sg.block})
			case kCallInd:
				calls = append(calls, CallSite{Addr: start + uint64(e.off), Ret: start + uint64(e.off+e.n), Block: sg.block})
			case kBad:
				if sg.bad < 0 {
					sg.bad = e.off
				}
			}
		}
		if len(calls) > c0 {
			blk.Calls = calls[c0:len(calls):len(calls)]
		}
		s0 := len(succs)
		fall := sg.term < 0
		if sg.term >= 0 {
			e := &s.events[sg.term]
			switch e.kind {
			case kJcc, kJmp:
				if t := e.target - start; t < uint64(s.n) {
					if !e.bad {
						succs = append(succs, s.blockAt(int(t)))
					}
				} else {
					blk.Exit = true
				}
				fall = e.kind == kJcc
			case kJmpInd, kRet, kTrap, kCallEnd:
				blk.Exit = true
			}
		}
		if fall {
			switch {
			case sg.b >= s.n:
				sg.off = true
			case i+1 < len(s.segs) && s.segs[i+1].block >= 0:
				if next := s.segs[i+1].block; len(succs) == s0 || succs[s0] != next {
					succs = append(succs, next)
				}
			}
		}
		if len(succs) > s0 {
			blk.Succs = succs[s0:len(succs):len(succs)]
		}
	}
	s.reach(g)
}

// reach marks the blocks no path from the entry leads to, and takes the
// reasons to be conservative from the others only: bytes that do not
// decode after a return, say, are data (Go's arm64 literal pools), and a
// linear sweep that lost its way there either found the next branch
// target as an instruction start or stopped at it as WhyMidInsn.
func (s *scratch) reach(g *CFG) {
	s.seen = append(s.seen[:0], make([]bool, len(g.Blocks))...)
	s.stack = reached(g, s.seen, s.stack)
	for i, ok := range s.seen {
		g.Blocks[i].Unreached = !ok
	}
	for _, sg := range s.segs {
		if sg.block < 0 || g.Blocks[sg.block].Unreached {
			continue
		}
		if sg.bad >= 0 {
			s.stop(WhyUndecodable, sg.bad)
		}
		if sg.off {
			s.stop(WhyFallsOff, sg.b)
		}
	}
}

// blockAt is the block starting at offset off, which must be a lead.
func (s *scratch) blockAt(off int) int {
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].a >= off })
	return s.segs[i].block
}
