//go:build linux

package sampler

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestProbeQueueTake: the probes' records reach a batch up to the horizon
// only, each with its own stack bytes, the registers of the stack-copy
// layout (IP and SP set, the rest 0) and a one-frame user chain; the
// records left keep theirs; a full queue refuses more.
func TestProbeQueueTake(t *testing.T) {
	if unwindRegsMask == 0 {
		t.Skip("no register layout for this architecture")
	}
	q := &probeQueue{}
	for i, tm := range []uint64{10, 20, 30} {
		r := Record{Kind: KindSample, OffCPU: true, Probed: true, Syscall: 230, PID: 1, TID: 2, Time: tm, IP: 0x401000 + uint64(i)}
		if !q.push(&r, 0x7ff000+uint64(i), unwindRegsMask, bytes.Repeat([]byte{byte(i + 1)}, 16*(i+1))) {
			t.Fatal("push refused")
		}
	}
	var b Batch
	if n := q.take(&b, 25); n != 2 {
		t.Fatalf("took %d up to 25, want 2", n)
	}
	if n := q.take(&b, 100); n != 1 {
		t.Fatalf("took %d then, want 1", n)
	}
	b.seal()
	if len(b.Records) != 3 {
		t.Fatalf("%d records", len(b.Records))
	}
	for i, r := range b.Records {
		ip := 0x401000 + uint64(i)
		if r.Time != []uint64{10, 20, 30}[i] || r.IP != ip || !r.Probed || r.Syscall != 230 {
			t.Errorf("record %d: %+v", i, r)
		}
		if !bytes.Equal(r.Stack, bytes.Repeat([]byte{byte(i + 1)}, 16*(i+1))) {
			t.Errorf("record %d: stack %x", i, r.Stack)
		}
		if !slices.Equal(r.Chain, []uint64{contextUser, ip}) {
			t.Errorf("record %d: chain %x", i, r.Chain)
		}
		gotIP, _ := r.Reg(ipReg)
		sp, _ := r.UserSP()
		zeros := 0
		for _, v := range r.Regs {
			if v == 0 {
				zeros++
			}
		}
		if r.RegsMask != unwindRegsMask || gotIP != ip || sp != 0x7ff000+uint64(i) || zeros != len(r.Regs)-2 || r.HasUserFP {
			t.Errorf("record %d: mask %#x regs %x", i, r.RegsMask, r.Regs)
		}
		if w := uint64(i+1) * 0x0101010101010101; !r.HasStackWord || r.StackWord != w || !r.HasStackWord2 {
			t.Errorf("record %d: stack word %#x", i, r.StackWord)
		}
	}
	if len(q.recs) != 0 || len(q.stacks) != 0 {
		t.Errorf("queue keeps %d records, %d stack bytes", len(q.recs), len(q.stacks))
	}
	r := Record{Time: 1}
	for range maxProbeQueue {
		q.push(&r, 1, unwindRegsMask, nil)
	}
	if q.push(&r, 1, unwindRegsMask, nil) {
		t.Error("a full queue took one more")
	}
}

// TestWaitProberRoundRobin: on a process of many threads (this one, most
// of them blocked), each look reads at most MaxProbeThreads threads, a
// round looks at every thread once, the files kept open stay within
// maxProbeFiles, and those of threads that ended are closed at the next
// round.
func TestWaitProberRoundRobin(t *testing.T) {
	const extra = 3 * MaxProbeThreads
	release := make(chan struct{})
	ended := make(chan struct{})
	tids := make(chan int, extra)
	for range extra {
		go func() {
			// Locked and not unlocked: the thread ends with the goroutine.
			runtime.LockOSThread()
			tids <- unix.Gettid()
			<-release
			ended <- struct{}{}
		}()
	}
	mine := map[int]bool{}
	for range extra {
		mine[<-tids] = true
	}
	// A goroutine that ends locked to the main thread wedges it instead.
	delete(mine, os.Getpid())
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	procs := []int{os.Getpid()}
	var list atomic.Pointer[[]int]
	list.Store(&procs)
	var exited atomic.Bool
	var misses atomic.Uint64
	p := &waitProber{regsMask: unwindRegsMask, procs: &list, exited: &exited, misses: &misses, out: &probeQueue{},
		files: map[int]int{}, stack: make([]byte, 4096)}
	defer func() {
		for _, fd := range p.files {
			closeAll([]int{fd})
		}
	}()
	p.newRound()
	all := slices.Clone(p.round)
	if len(all) < extra {
		t.Fatalf("%d threads listed, want >= %d", len(all), extra)
	}
	seen := map[int]int{}
	looks := 0
	for len(p.round) > 0 || looks == 0 {
		before := slices.Clone(p.round)
		p.look()
		looks++
		took := before[:len(before)-len(p.round)]
		if len(took) > MaxProbeThreads || len(took) == 0 {
			t.Fatalf("look %d read %d threads", looks, len(took))
		}
		for _, task := range took {
			seen[task.tid]++
		}
		if len(p.files) > maxProbeFiles {
			t.Fatalf("%d files open", len(p.files))
		}
	}
	if want := (len(all) + MaxProbeThreads - 1) / MaxProbeThreads; looks != want {
		t.Errorf("%d looks for %d threads, want %d", looks, len(all), want)
	}
	for _, task := range all {
		if seen[task.tid] != 1 {
			t.Errorf("thread %d looked at %d times in a round", task.tid, seen[task.tid])
		}
	}
	if len(p.out.recs) == 0 {
		t.Error("no probe of this process's blocked threads")
	}
	// The locked threads end; the next round closes their files.
	open := 0
	for tid := range p.files {
		if mine[tid] {
			open++
		}
	}
	if open == 0 {
		t.Fatal("no file of the threads about to end is open")
	}
	close(release)
	for range extra {
		<-ended
	}
	for gone := false; !gone; {
		gone = true
		for tid := range mine {
			if taskExists(os.Getpid(), tid) {
				gone = false
				time.Sleep(time.Millisecond)
			}
		}
	}
	p.newRound()
	for tid := range p.files {
		if mine[tid] {
			t.Errorf("file of ended thread %d still open", tid)
		}
	}
	for _, task := range p.round {
		if mine[task.tid] {
			t.Errorf("ended thread %d listed", task.tid)
		}
	}
	t.Logf("%d threads, %d looks, %d probes, %d misses, %d files", len(all), looks, len(p.out.recs), misses.Load(), len(p.files))
}
