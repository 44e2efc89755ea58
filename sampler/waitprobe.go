//go:build linux

package sampler

// The wait probes: off-CPU stacks where the kernel will not sample context
// switches (kernel samples are not permitted, and the kernel drops the
// context-switches samples of user-only events). A goroutine looks at the
// target's threads at Config.ProbeHz and, for each one off the CPU, reads
// where it waits (/proc/PID/task/TID/syscall: the system call, user SP and
// PC) and copies its user stack from SP (process_vm_readv), as a sample of
// the primary group's stack-copy layout would hold it, for the same
// unwinder.
//
// What it costs is bounded whatever the number of threads. A look reads at
// most MaxProbeThreads threads, each with two reads of the syscall file and
// one stack copy of at most the configured size; the threads are taken
// round robin, and the target's thread list (/proc/PID/task of each of its
// processes) is read once per round, when every thread listed has been
// looked at: an entry per thread looked at, amortized. So a second costs at
// most ProbeHz × MaxProbeThreads looks, and each of T threads is looked at
// every ⌈T/MaxProbeThreads⌉ looks. The syscall files of at most
// maxProbeFiles threads stay open between looks, and those of threads no
// longer listed are closed at the next round.

import (
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// maxProbeFiles is how many syscall files the prober keeps open: four
// looks' worth, which covers every thread of a target with few of them (the
// common case, looked at every look); a larger target's threads are opened
// for each look, as the round robin passes them.
const maxProbeFiles = 4 * MaxProbeThreads

// defaultProbeStack is how much of a blocked thread's stack a probe copies
// when Config.UserStack is 0.
const defaultProbeStack = 8 << 10

// probeTask is one thread to look at.
type probeTask struct{ pid, tid int }

// waitProber is the probes' goroutine and what it owns; the session starts
// and stops it, and shares with it only atomics and the probe queue.
type waitProber struct {
	every    time.Duration
	regsMask uint64
	procs    *atomic.Pointer[[]int] // the target's processes (publishProcs)
	exited   *atomic.Bool
	misses   *atomic.Uint64
	refused  atomic.Pointer[error] // the first refusal to read a thread
	out      *probeQueue
	stop     chan struct{}
	done     chan struct{}

	// The goroutine's own.
	round []probeTask // threads not looked at yet this round
	files map[int]int // by thread: its syscall file, open
	line  [256]byte   // a syscall file's content
	stack []byte      // the copy of one stack
}

// startWaitProber starts the probes of s's configuration, at most 1000
// looks a second whatever ProbeHz asks.
func (s *Session) startWaitProber() *waitProber {
	hz := s.cfg.ProbeHz
	if hz <= 0 {
		hz = DefaultProbeHz
	}
	size := defaultProbeStack
	if s.cfg.UserStack > 0 {
		size = min(s.cfg.UserStack+7, MaxUserStack) &^ 7
	}
	mask := uint64(unwindRegsMask)
	if mask == 0 {
		mask = entryRegsMask
	}
	if s.probeQ == nil {
		s.probeQ = &probeQueue{}
	}
	s.publishProcs()
	p := &waitProber{
		every: max(time.Second/time.Duration(hz), time.Millisecond), regsMask: mask,
		procs: &s.procList, exited: &s.exited, misses: &s.stats.probeMisses, out: s.probeQ,
		stop: make(chan struct{}), done: make(chan struct{}),
		files: map[int]int{}, stack: make([]byte, size),
	}
	go p.run()
	return p
}

// halt stops the goroutine and closes its files.
func (p *waitProber) halt() {
	close(p.stop)
	<-p.done
}

func (p *waitProber) run() {
	defer close(p.done)
	defer func() {
		for _, fd := range p.files {
			unix.Close(fd)
		}
	}()
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		if !p.exited.Load() {
			p.look()
		}
	}
}

// look probes the next MaxProbeThreads threads of the round, starting a new
// round when this one is done.
func (p *waitProber) look() {
	if len(p.round) == 0 {
		p.newRound()
	}
	n := min(MaxProbeThreads, len(p.round))
	for _, t := range p.round[:n] {
		p.probe(t)
	}
	p.round = p.round[n:]
}

// newRound lists the threads of the target's processes as they are now, and
// closes the files of threads gone since the last round.
func (p *waitProber) newRound() {
	procs := p.procs.Load()
	if procs == nil {
		return
	}
	listed := map[int]bool{}
	round := p.round[:0]
	for _, pid := range *procs {
		tids, _ := listThreads(pid)
		for _, tid := range tids {
			round = append(round, probeTask{pid, tid})
			listed[tid] = true
		}
	}
	p.round = round
	for tid, fd := range p.files {
		if !listed[tid] {
			unix.Close(fd)
			delete(p.files, tid)
		}
	}
}

// probe looks at one thread: nothing when it runs; else its stack, copied
// while it stayed where it waits, queued as an off-CPU sample.
func (p *waitProber) probe(t probeTask) {
	fd, kept := p.open(t)
	if fd < 0 {
		return // gone
	}
	defer func() {
		if !kept {
			unix.Close(fd)
		}
	}()
	before, err := p.read(fd)
	if err != nil {
		p.drop(t.tid, fd, kept, err)
		return
	}
	if before.running {
		return
	}
	at := monoNow()
	n, err := readStack(t.tid, before.sp, p.stack)
	if err != nil && n == 0 {
		p.misses.Add(1)
		p.refuse(err)
		return
	}
	after, err := p.read(fd)
	if err != nil || after != before {
		// It ran meanwhile (or left): the copy may mix two stacks. It
		// may have run and come back to the same place, which this does
		// not see: the copy is then of the same frames.
		p.misses.Add(1)
		if err != nil {
			p.drop(t.tid, fd, kept, err)
		}
		return
	}
	r := Record{Kind: KindSample, OffCPU: true, Probed: true, Syscall: before.nr,
		PID: uint32(t.pid), TID: uint32(t.tid), Time: at, IP: before.pc, Period: 1}
	if !p.out.push(&r, before.sp, p.regsMask, p.stack[:n]) {
		p.misses.Add(1)
	}
}

// open returns t's syscall file, kept open when there is room; -1 when the
// thread is gone or cannot be read.
func (p *waitProber) open(t probeTask) (fd int, kept bool) {
	if fd, ok := p.files[t.tid]; ok {
		return fd, true
	}
	path := "/proc/" + strconv.Itoa(t.pid) + "/task/" + strconv.Itoa(t.tid) + "/syscall"
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		p.refuse(err)
		return -1, false
	}
	if len(p.files) < maxProbeFiles {
		p.files[t.tid] = fd
		return fd, true
	}
	return fd, false
}

// drop forgets a thread whose file failed: it is gone, or refused.
func (p *waitProber) drop(tid, fd int, kept bool, err error) {
	p.refuse(err)
	if kept {
		unix.Close(fd)
		delete(p.files, tid)
	}
}

// refuse keeps the first permission error, for the session to tell.
func (p *waitProber) refuse(err error) {
	if IsPermission(err) && p.refused.Load() == nil {
		p.refused.Store(&err)
	}
}

// read reads the syscall file again (pread at 0 makes the kernel write it
// anew).
func (p *waitProber) read(fd int) (syscallState, error) {
	n, err := unix.Pread(fd, p.line[:], 0)
	if err != nil {
		return syscallState{}, err
	}
	st, ok := parseSyscallLine(p.line[:n])
	if !ok {
		return syscallState{}, errBadSyscallLine
	}
	return st, nil
}

var errBadSyscallLine = errors.New("unexpected /proc/PID/task/TID/syscall line")

// readStack copies tid's user stack from sp into buf: as much as is mapped,
// a copy cut where the stack's mapping ends being what the kernel's own
// stack copy would hold too.
func readStack(tid int, sp uint64, buf []byte) (int, error) {
	if sp == 0 || len(buf) == 0 {
		return 0, unix.EFAULT
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(sp), Len: len(buf)}}
	n, err := unix.ProcessVMReadv(tid, local, remote, 0)
	return max(n, 0), err
}

// monoNow is CLOCK_MONOTONIC in nanoseconds, the clock the events use when
// Config.OffCPU (useMonotonic).
func monoNow() uint64 { return MonoNow() }
