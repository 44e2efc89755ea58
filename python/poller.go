package python

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Status says what At found for a sample.
type Status uint8

const (
	// Found: frames read within the slack of the sample's time.
	Found Status = iota
	// NotRead: the thread runs Python, but no read is close enough in
	// time to the sample (the poller had not read it yet, or the
	// sample came after its history).
	NotRead
	// NoThreadState: the thread runs no Python (a C library's worker).
	NoThreadState
	// NotReadable: the process is not a CPython this package reads, or
	// not yet (Problem says why).
	NotReadable
)

// Poller reads the Python stacks of the threads of some processes on a
// goroutine of its own, about once per sampling period for the threads
// that run (they had samples lately, or their stack moved) and ten times a
// second for the others, and keeps what it read by time (history) for At.
// It reads with process_vm_readv, the thread running: no ptrace stop.
type Poller struct {
	// base is the shortest period, the sampling period's; period is the
	// one in force (ns), paced by cost.
	base   time.Duration
	period atomic.Int64
	share  float64 // of the rest of cctop's CPU time the poller may take
	newMem func(pid int) Memory

	mu    sync.Mutex
	procs map[int]*proc
	// passes counts the poller's passes over the threads, each broadcast
	// on passed (under mu): At waits on it for a read after its sample.
	passes uint64
	passed *sync.Cond
	// pending are the processes to look at for an interpreter.
	pending []int
	woken   atomic.Bool   // processes to look at were added
	holding atomic.Bool   // HoldsP's
	kick    chan struct{} // ends the idle poller's wait (woken, or Close)
	stopped atomic.Bool
	done    chan struct{}

	reads, syscalls, changed, failed, readNS atomic.Uint64
	// cpuNS is the pacer's estimate of the poller's CPU time: its
	// passes' and their wakes'.
	cpuNS, wakeNS atomic.Uint64
}

// proc is one process: its interpreter and reader (the poller's
// goroutine's alone) and its threads' histories (under mu).
type proc struct {
	pid     int
	in      *Interpreter
	rd      *reader
	problem string // why it is not read (under mu)
	first   uint64 // when it was first looked at
	looks   int    // how many times it was not found yet

	threads     map[int]*thread // by tid (under mu)
	listed      uint64          // when the thread states were last listed
	head        uint64          // the interpreters' list and its first thread state, when listed
	headChecked uint64          // when head was last read again
	wantList    bool            // a sample came from a thread not listed
	states      []threadState
	scratch     []Frame
	listProblem string
	// names are the threads' names in Python (threading.Thread's),
	// by tid (under mu), read when the list of threads changed, at
	// most every namesEvery.
	names   map[int]string
	namedAt uint64
	namedN  int
	// hot, idle: a pass's threads to read (reused)
	hot, idle []due
}

type thread struct {
	tstate   uint64
	hist     history
	hotUntil uint64 // read every period until then
	idleNext uint64 // when an idle thread is read next
	gone     uint64 // when it left the thread states' list, 0 if listed
	last     []Frame
	spec     speculation // what the last read found (the poller's alone)
}

// Timings of the poller (ns).
const (
	idleEvery   = uint64(100e6) // an idle thread's reads
	hotFor      = uint64(300e6) // a thread stays hot after a sample or a move
	listEvery   = uint64(1e9)   // the thread states' list
	relistAfter = uint64(20e6)  // at most this often for an unknown thread
	headEvery   = uint64(100e6) // the head of the thread states read again, for new threads
	namesEvery  = uint64(1e9)   // threading's names read again, if the threads changed
	lookFor     = uint64(3e9)   // a process that maps no interpreter yet
	keepGone    = uint64(3e9)   // a thread's history after it left
)

// The time between two passes. A pass costs a wake of a thread (10 to 20
// µs of the kernel's on this machine, a VM; a few on a bare one) and a
// read of each running thread's stack (4 to 10 µs): at 999 Hz, a pass per
// sample would double cctop's own CPU time on a Python target. So the
// poller keeps its own CPU time (pacer's estimate) under its budget's share
// of the rest of cctop's, measured every paceEvery, the period between
// minPeriod (or the sampling period) and maxPeriod, starting at the
// longest: cheap reads make it shorter within seconds. The rest of
// cctop's CPU time is bursty (a batch of samples, a redraw), hence a
// measure over a second. The budget is less than what reading Python may
// cost in all (at most 20% of cctop's CPU, issue 31): merging the frames
// into samples is the engine's, and the runtime's scheduling around the
// poller's sleeps is no one thread's, neither counted here. A read stands
// for the samples near it, so where the Python stack changes between
// reads a function's share is as good as the count of reads: at 5 ms, 16
// s of a script that changes function every 1 to 6 ms gave shares within
// 1.5 points of its design, 8 s within 3 (a standard deviation of 1.2).
// Each sleep is drawn around the period, so that reads do not keep step
// with a program's own periods. A sample takes the read nearest in time.
const (
	minPeriod = time.Millisecond
	maxPeriod = 5 * time.Millisecond
	paceEvery = uint64(1e9)
	// yieldAfter: the runtime's monitor preempts a goroutine that has
	// held its P for 10 ms (forcePreemptNS); the poller yields first.
	yieldAfter = uint64(8e6)
)

// DefaultBudget is what the poller may cost by default, as a share of the
// rest of cctop's CPU time.
const DefaultBudget = 0.12

// maxHot bounds the threads read every period, per process: the most a
// machine's CPUs can run at once is what matters, and reading more than
// that costs without finding more samples.
const maxHot = 256

// NewPoller starts a poller that reads running threads at most once per
// period (the sampling period), as often as costs it at most budget (a
// share, 0.12: DefaultBudget) of the rest of cctop's CPU time.
func NewPoller(period time.Duration, budget float64) *Poller {
	return newPoller(period, budget, ProcessMemory)
}

func newPoller(period time.Duration, budget float64, newMem func(int) Memory) *Poller {
	period = max(period, minPeriod)
	if budget <= 0 {
		budget = DefaultBudget
	}
	p := &Poller{base: period, share: budget, newMem: newMem, procs: map[int]*proc{},
		done: make(chan struct{}), kick: make(chan struct{}, 1)}
	p.period.Store(int64(max(period, maxPeriod)))
	p.passed = sync.NewCond(&p.mu)
	go p.run()
	return p
}

// Add has the poller look at pid for an interpreter (again, if it was
// not found: a launched program maps its libpython a moment after exec).
func (p *Poller) Add(pid int) {
	p.mu.Lock()
	if pr := p.procs[pid]; pr != nil {
		p.mu.Unlock()
		return
	}
	p.procs[pid] = &proc{pid: pid, threads: map[int]*thread{}}
	p.pending = append(p.pending, pid)
	p.mu.Unlock()
	p.wake()
}

// wake has the poller look at the processes added.
func (p *Poller) wake() {
	p.woken.Store(true)
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Forget drops what the poller knows of pid (an exec: another program, or
// another interpreter, now), and looks at it again.
func (p *Poller) Forget(pid int) {
	p.mu.Lock()
	delete(p.procs, pid)
	p.mu.Unlock()
	p.Add(pid)
}

// NewThread says that pid has a new thread: its states are listed again
// at the next pass.
func (p *Poller) NewThread(pid int) {
	p.mu.Lock()
	if pr := p.procs[pid]; pr != nil {
		pr.wantList = true
	}
	p.mu.Unlock()
}

// Close stops the poller and waits for its goroutine.
func (p *Poller) Close() {
	if p.stopped.Swap(true) {
		return
	}
	p.wake()
	<-p.done
}

// slack is how far in time a read may be from a sample and stand for it.
func (p *Poller) slack() uint64 {
	return uint64(max(2*p.period.Load(), int64(2*time.Millisecond)))
}

// At appends to dst the Python stack of thread tid of pid as read nearest to
// time t (ns, CLOCK_MONOTONIC), innermost first (Frame), and says whether
// it found one. Asking marks the thread as running: it is read every
// period for a while.
func (p *Poller) At(pid, tid int, t uint64, dst []Frame) ([]Frame, Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.procs[pid]
	if pr == nil || pr.in == nil {
		return dst, NotReadable
	}
	th := pr.threads[tid]
	if th == nil {
		pr.wantList = true
		return dst, NoThreadState
	}
	th.hotUntil = monoNow() + hotFor
	e, d := th.hist.at(t)
	if e != nil && d > 0 && t > e.t1 && e == th.hist.last() {
		// A sample newer than the thread's last read (the off-CPU
		// modes take samples as they come): the next read, within the
		// slack, may be nearer; waited for, a pass at most.
		deadline := t + p.slack()
		for seq := p.passes; monoNow() < deadline && th.gone == 0 && !p.stopped.Load(); {
			p.passed.Wait()
			if p.passes != seq {
				break
			}
		}
		e, d = th.hist.at(t)
	}
	if e == nil || d > p.slack() {
		return dst, NotRead
	}
	return append(dst, e.frames...), Found
}

// Pending says whether a read nearer to time t than any so far of thread
// tid of pid is still to come: the thread's last read is older than t, and
// the next pass is due within the slack of t. A caller that can take the
// sample later (the engine parks it until its next batch) does so rather
// than wait in At: a wait is a wake of its own a batch, which costs as
// much as the read on a VM.
func (p *Poller) Pending(pid, tid int, t uint64) bool {
	if p.stopped.Load() {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.procs[pid]
	if pr == nil || pr.in == nil {
		return false
	}
	th := pr.threads[tid]
	if th == nil || th.gone != 0 {
		return false
	}
	e := th.hist.last()
	return e != nil && e.t1 < t && monoNow() < t+p.slack()
}

// ThreadNames are pid's threads' names in Python, by tid, as last read.
func (p *Poller) ThreadNames(pid int) map[int]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]string{}
	if pr := p.procs[pid]; pr != nil {
		for tid, n := range pr.names {
			out[tid] = n
		}
	}
	return out
}

// Interpreter is the interpreter found in pid, nil if none (yet).
func (p *Poller) Interpreter(pid int) *Interpreter {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr := p.procs[pid]; pr != nil {
		return pr.in
	}
	return nil
}

// Problems says, a line per process, why a process that looked like
// CPython is not read.
func (p *Poller) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pr := range p.procs {
		switch {
		case pr.problem != "":
			out = append(out, pr.problem)
		case pr.in != nil && len(pr.threads) == 0 && pr.listProblem != "":
			out = append(out, fmt.Sprintf("pid %d: listing its threads: %s", pr.pid, pr.listProblem))
		}
	}
	sort.Strings(out)
	return out
}

// pacer estimates what the poller costs against the rest of cctop, and
// says how to change the period. The poller's goroutine is not locked to a
// thread (see run), so its CPU time is counted pass by pass: the pass's own
// time (it does not block: it reads memory) and a wake's, measured once
// (wakeCost).
type pacer struct {
	at, all uint64 // at the last measure: monotonic and process CPU time (ns)
	own     uint64 // the poller's CPU time since (ns)
	wake    uint64 // the CPU time of one sleep and its wake (ns)
}

func (pc *pacer) start(now, all, wake uint64) {
	pc.at, pc.all, pc.own, pc.wake = now, all, 0, wake
}

// pass counts a pass that took ns, and says what it counted: the pass and
// its wake.
func (pc *pacer) pass(ns uint64) uint64 {
	pc.own += ns + pc.wake
	return ns + pc.wake
}

// due says whether a measure is due (every paceEvery).
func (pc *pacer) due(now uint64) bool { return now-pc.at >= paceEvery }

// adjust, given the process's CPU time now, says the next period, in
// proportion to what the poller took of the rest of the process's CPU time
// since the last measure against its share (at most halved or doubled at
// once), and starts the next measure.
func (pc *pacer) adjust(now, all uint64, period time.Duration, share float64) (time.Duration, bool) {
	own, dAll := float64(pc.own), float64(all-pc.all)
	pc.at, pc.all, pc.own = now, all, 0
	rest := dAll - own
	if all == 0 || rest <= 0 || own <= 0 {
		return 0, false // no clock to pace by
	}
	r := min(max(own/(share*rest), 0.5), 2)
	if r > 0.9 && r < 1.1 {
		return 0, false
	}
	return time.Duration(float64(period) * r), true
}

// wakeCost is the CPU time the calling thread takes for a sleep and its
// wake (ns): on this project's VM 10 to 20 µs, a few on a bare machine.
// Measured from the thread's CPU clock over a few short sleeps, the
// goroutine locked to its thread meanwhile (the clock is the goroutine's
// only while it stays); 0 where there is no such clock.
func wakeCost() uint64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const n = 8
	t0 := threadCPU()
	for range n {
		rawSleepUntil(monoNow() + 200e3)
	}
	t1 := threadCPU()
	if t0 == 0 || t1 < t0 {
		return 0
	}
	return (t1 - t0) / n
}

// Stats are the poller's counts.
type Stats struct {
	Reads    uint64 // stacks read
	Syscalls uint64 // process_vm_readv calls for them
	Changed  uint64 // reads whose innermost frame moved while read
	Failed   uint64 // reads that failed otherwise
	ReadNS   uint64 // time spent reading
	// CPU is what the passes cost, their wakes included (the pacer's
	// estimate, ns); Wake what a wake costs (ns).
	CPU, Wake uint64
	// Period is the time between two passes now, as paced by cost.
	Period time.Duration
}

func (p *Poller) Stats() Stats {
	return Stats{p.reads.Load(), p.syscalls.Load(), p.changed.Load(), p.failed.Load(), p.readNS.Load(),
		p.cpuNS.Load(), p.wakeNS.Load(),
		time.Duration(p.period.Load())}
}

func (p *Poller) run() {
	defer close(p.done)
	// Between passes the poller sleeps in the kernel keeping its P
	// (rawSleepUntil). The other ways to sleep cost more here, measured
	// (bench/pyframes.sh, perf stat of cctop, 10 s at 999 Hz):
	//   - a Go timer or a timerfd in the netpoller parks the goroutine:
	//     each wake is the netpoller's thread's, then a hand-over to a
	//     thread with a P, 11,000 to 17,000 context switches against
	//     7,800 (cctop's CPU 10 to 15% more);
	//   - a system call the runtime sees wakes its monitor at each return;
	//   - locked to its thread, the goroutine that seems to run all along
	//     is preempted by the runtime's monitor every 10 ms, and a locked
	//     thread's preemption hands its P to another thread and back:
	//     four or five wakes each time. Unlocked, a preemption puts the
	//     goroutine back on the same thread, one wake at most.
	// GOMAXPROCS is not raised for it (it was: one P more is one more
	// for the collector's idle workers to wake, 1,400 context switches
	// more in 8 s here), except from one, where the rest of cctop would
	// wait for the poller's preemptions. And it yields (runtime.Gosched)
	// before the runtime's monitor would preempt it (forcePreemptNS, 10
	// ms), which spares the signal, its interrupted sleep and the pass
	// after it.
	// Until an interpreter is found, none of this: the goroutine waits
	// on a channel for processes to look at, which costs nothing.
	raised, reading := false, false
	defer func() {
		p.holding.Store(false)
		if raised {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) - 1)
		}
	}()
	var procs []*proc
	var next uint64
	var pace pacer
	var yielded uint64 // when the goroutine last went through the scheduler
	for !p.stopped.Load() {
		if reading {
			period := uint64(p.period.Load())
			next += period/2 + uint64(rand.Int64N(int64(period)))
			if now := monoNow(); next < now {
				next = now + period/2 // late: no burst of reads to catch up
			}
			// A signal (the runtime's preemption) ends a sleep early:
			// the call again is where the goroutine yields, and the
			// sleep goes on, so that passes keep to the period.
			for now := monoNow(); now < next && !p.stopped.Load(); now = monoNow() {
				if now-yielded > yieldAfter {
					runtime.Gosched()
					yielded = monoNow()
				}
				rawSleepUntil(next)
			}
		} else {
			// Nothing to read: asleep until a process is added or
			// looked at again (its timer), or Close. Not on a timer of
			// its own, which woke cctop a hundred times a second
			// whatever the target.
			<-p.kick
		}
		if p.woken.Swap(false) {
			p.look()
		}
		p.mu.Lock()
		procs = procs[:0]
		for _, pr := range p.procs {
			if pr.in != nil {
				procs = append(procs, pr)
			}
		}
		p.mu.Unlock()
		if len(procs) > 0 && !reading {
			p.holding.Store(true)
			if runtime.GOMAXPROCS(0) == 1 {
				runtime.GOMAXPROCS(2)
				raised = true
			}
			wake := wakeCost()
			reading, next = true, monoNow()
			yielded = next
			pace.start(next, processCPU(), wake)
			p.wakeNS.Store(wake)
		}
		t0 := monoNow()
		for _, pr := range procs {
			p.pass(pr)
		}
		now := monoNow()
		p.mu.Lock()
		p.passes++
		p.passed.Broadcast()
		p.mu.Unlock()
		if !reading {
			continue
		}
		p.cpuNS.Add(pace.pass(now - t0))
		if !pace.due(now) {
			continue
		}
		if pace.wake == 0 {
			pace.wake = wakeCost() // no thread CPU clock at start
			p.wakeNS.Store(pace.wake)
		}
		if d, ok := pace.adjust(now, processCPU(), time.Duration(p.period.Load()), p.share); ok {
			p.period.Store(int64(min(max(d, p.base), maxPeriod)))
		}
	}
	// Nobody waits for a pass that will not come.
	p.mu.Lock()
	p.passes++
	p.passed.Broadcast()
	p.mu.Unlock()
}

// HoldsP reports whether the poller reads interpreters, sleeping between
// passes in the kernel without giving up its P: the rest of cctop then
// needs a P more than its own work does (engine/procs.go).
func (p *Poller) HoldsP() bool { return p.holding.Load() }

// look tries to find the interpreters of the processes added.
func (p *Poller) look() {
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	now := monoNow()
	for _, pid := range pending {
		p.mu.Lock()
		pr := p.procs[pid]
		p.mu.Unlock()
		if pr == nil {
			continue
		}
		if pr.first == 0 {
			pr.first = now
		}
		mem := p.newMem(pid)
		in, err := Find(pid, mem)
		p.mu.Lock()
		switch {
		case err == nil:
			pr.in, pr.rd, pr.problem = in, newReader(in, mem), ""
		case NotYet(err) && now-pr.first < lookFor:
			// Looked at again after a while, longer each time: reading
			// the maps costs, and in a system-wide session most
			// processes are no Python. A launched program maps its
			// interpreter within milliseconds of exec.
			pr.looks++
			time.AfterFunc(20*time.Millisecond<<min(pr.looks, 6), func() {
				p.mu.Lock()
				p.pending = append(p.pending, pid)
				p.mu.Unlock()
				p.wake()
			})
		case errors.Is(err, ErrNotPython):
		default:
			pr.problem = fmt.Sprintf("pid %d: %v", pid, err)
		}
		p.mu.Unlock()
	}
}

// pass reads the threads of one process that are due.
func (p *Poller) pass(pr *proc) {
	now := monoNow()
	p.mu.Lock()
	// Listed often while a thread is missing, or none is listed yet (a
	// launched interpreter initializing): its samples wait for it.
	list := now-pr.listed >= listEvery || (pr.wantList || len(pr.threads) == 0) && now-pr.listed >= relistAfter
	p.mu.Unlock()
	if !list && now-pr.headChecked >= headEvery {
		// A new thread's state goes first in its interpreter's list:
		// one word read tells it is there, and its first samples find
		// reads of it.
		pr.headChecked = now
		if h, err := pr.in.firstThreadState(pr.rd.mem); err == nil && h != pr.head {
			list = true
		}
	}
	if list {
		p.list(pr, now)
	}
	p.mu.Lock()
	hot, idle := pr.hot[:0], pr.idle[:0]
	for tid, th := range pr.threads {
		switch {
		case th.gone != 0:
		case th.hotUntil > now:
			hot = append(hot, due{tid, th})
		case th.idleNext <= now:
			idle = append(idle, due{tid, th})
		}
	}
	p.mu.Unlock()
	if len(hot) > maxHot {
		sort.Slice(hot, func(i, j int) bool { return hot[i].th.hotUntil > hot[j].th.hotUntil })
		hot = hot[:maxHot]
	}
	for _, d := range hot {
		p.read(pr, d.th, false)
	}
	// Idle threads are spread over idleEvery: a hundred waiting
	// threads cost a read each per 100 ms, never all in one pass.
	for _, d := range idle {
		d.th.idleNext = now + idleEvery - uint64(d.tid%64)*uint64(time.Millisecond)/4
		p.read(pr, d.th, true)
	}
	pr.hot, pr.idle = hot[:0], idle[:0]
}

// due is a thread to read in a pass.
type due struct {
	tid int
	th  *thread
}

// read reads one thread's stack into its history.
// An idle thread's read that finds the stack of its last read extends that
// read's span: a thread that waits does not move. A running thread's reads
// stand each for itself: two that show the same frames may have others
// between them (a loop that calls one function, then another, then the
// first again), which a span would give to the first.
func (p *Poller) read(pr *proc, th *thread, idle bool) {
	rd := pr.rd
	calls := rd.pages.reads
	t0 := monoNow()
	frames, err := rd.stack(th.tstate, t0, pr.scratch[:0], &th.spec)
	if errors.Is(err, errChanged) {
		p.changed.Add(1)
		t0 = monoNow()
		frames, err = rd.stack(th.tstate, t0, pr.scratch[:0], &th.spec)
	}
	t1 := monoNow()
	pr.scratch = frames[:0]
	p.reads.Add(1)
	p.readNS.Add(t1 - t0)
	p.syscalls.Add(uint64(rd.pages.reads - calls))
	if err != nil {
		p.failed.Add(1)
		return
	}
	p.mu.Lock()
	if !sameFrames(th.last, frames) {
		// A stack that moves is a thread that runs.
		if th.last != nil {
			th.hotUntil = max(th.hotUntil, t1+hotFor)
		}
		th.last = append(th.last[:0], frames...)
	}
	th.hist.add(t0, t1, frames, idle)
	p.mu.Unlock()
}

// list reads the thread states, matching them to the threads by tid.
func (p *Poller) list(pr *proc, now uint64) {
	head, _ := pr.in.firstThreadState(pr.rd.mem)
	states, err := pr.in.threadStates(pr.rd.mem, pr.states[:0])
	pr.states = states[:0]
	pr.head, pr.headChecked = head, now
	p.mu.Lock()
	defer p.mu.Unlock()
	pr.listed, pr.wantList = now, false
	if err != nil {
		// Half a list is not a reason to forget the threads.
		pr.listProblem = err.Error()
		return
	}
	if len(states) != pr.namedN && now-pr.namedAt >= namesEvery || now-pr.namedAt >= 10*namesEvery || pr.namedAt == 0 {
		// Names come from Python objects, a few hundred µs to read: not
		// every pass, and not under mu.
		pr.namedAt, pr.namedN = now, len(states)
		p.mu.Unlock()
		byIdent, err := pr.in.ThreadNames(pr.rd.mem)
		p.mu.Lock()
		if err == nil {
			// Merged: a thread that ended keeps its name for its samples.
			if pr.names == nil {
				pr.names = map[int]string{}
			}
			for _, s := range states {
				if n, ok := byIdent[s.ident]; ok && s.tid != 0 {
					pr.names[s.tid] = n
				}
			}
		}
	}
	listed := make(map[int]bool, len(states))
	for _, s := range states {
		if s.tid == 0 {
			continue
		}
		listed[s.tid] = true
		th := pr.threads[s.tid]
		if th == nil {
			// A thread is read every period from the start: samples
			// tell the poller it runs only when the engine takes them,
			// a poll interval later.
			th = &thread{hotUntil: now + hotFor}
			pr.threads[s.tid] = th
		}
		if th.tstate != s.addr {
			th.tstate, th.last, th.spec = s.addr, nil, speculation{}
		}
		th.gone = 0
	}
	for tid, th := range pr.threads {
		if listed[tid] {
			continue
		}
		if th.gone == 0 {
			th.gone = now
		} else if now-th.gone > keepGone {
			delete(pr.threads, tid)
			if len(pr.names) > maxThreads {
				delete(pr.names, tid)
			}
		}
	}
}
