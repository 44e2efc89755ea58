//go:build linux

package sampler

// The hand-off of the wait probes' records, from the prober's goroutine to
// the one that calls Next, and their place in the batches: among the ring
// records, in time order.

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
)

// probeQueue holds the probes' records until Next takes them. Their slices
// are made when they are taken (the stacks wait in one buffer), so that
// neither side allocates per record.
type probeQueue struct {
	mu     sync.Mutex
	recs   []queuedProbe
	stacks []byte
	// Next's scratch: a taken record's registers and chain, copied into
	// the batch by Batch.add.
	regs  []uint64
	chain [2]uint64
}

type queuedProbe struct {
	r           Record // without slices
	sp          uint64
	mask        uint64
	stackOff, n int
}

// maxProbeQueue bounds what waits for a consumer that does not call Next:
// a few seconds of looks.
const (
	maxProbeQueue      = 4096
	maxProbeQueueBytes = 16 << 20
)

// push queues r with the thread's stack pointer, the register mask of its
// layout and its stack copy; false when the queue is full.
func (q *probeQueue) push(r *Record, sp, mask uint64, stack []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.recs) >= maxProbeQueue || len(q.stacks)+len(stack) > maxProbeQueueBytes {
		return false
	}
	q.recs = append(q.recs, queuedProbe{r: *r, sp: sp, mask: mask, stackOff: len(q.stacks), n: len(stack)})
	q.stacks = append(q.stacks, stack...)
	return true
}

// take adds to b the records taken before horizon (CLOCK_MONOTONIC ns),
// and returns how many. Later ones wait: a thread's ring records from
// before a probe may not have been copied out yet, and the batches must
// keep each thread's records in time order.
func (q *probeQueue) take(b *Batch, horizon uint64) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	// The prober pushes in time order.
	n, _ := slices.BinarySearchFunc(q.recs, horizon, func(p queuedProbe, h uint64) int {
		if p.r.Time < h {
			return -1
		}
		return 1
	})
	for i := range q.recs[:n] {
		p := &q.recs[i]
		r := p.r
		r.Stack = q.stacks[p.stackOff : p.stackOff+p.n]
		q.regs = probeRegs(q.regs[:0], p.mask, r.IP, p.sp)
		r.Regs, r.RegsMask = q.regs, p.mask
		if len(r.Regs) == 0 {
			r.RegsMask = 0
		}
		// A user part with the one frame known, as SplitChain reads it.
		q.chain = [2]uint64{contextUser, r.IP}
		r.Chain = q.chain[:]
		if len(r.Stack) >= 8 {
			r.StackWord, r.HasStackWord = binary.NativeEndian.Uint64(r.Stack), true
		}
		if len(r.Stack) >= 16 {
			r.StackWord2, r.HasStackWord2 = binary.NativeEndian.Uint64(r.Stack[8:]), true
		}
		b.add(&r)
	}
	if n == len(q.recs) {
		q.recs, q.stacks = q.recs[:0], q.stacks[:0]
		return n
	}
	off := q.recs[n].stackOff
	q.stacks = q.stacks[:copy(q.stacks, q.stacks[off:])]
	q.recs = q.recs[:copy(q.recs, q.recs[n:])]
	for i := range q.recs {
		q.recs[i].stackOff -= off
	}
	return n
}

// probeRegs appends the registers of mask in perf_regs order, as a sample's
// REGS_USER holds them, with the IP and SP where perf_regs puts them and the
// others 0: the syscall file tells only those two. The frame pointer is not
// known, and a probe record has no UserFP.
func probeRegs(dst []uint64, mask, ip, sp uint64) []uint64 {
	n := bits.OnesCount64(mask)
	for range n {
		dst = append(dst, 0)
	}
	set := func(reg int, v uint64) {
		if reg >= 0 && mask&(1<<reg) != 0 {
			dst[bits.OnesCount64(mask&(1<<reg-1))] = v
		}
	}
	set(ipReg, ip)
	set(spReg, sp)
	return dst
}
