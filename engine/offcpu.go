package engine

// Off-CPU time (--mode offcpu|wall): where the target's threads waited.
//
// The session records every context switch of the target's threads
// (sampler.KindSwitch, out of the CPU and back on): they time every interval
// off the CPU exactly, per thread. Stacks say where the time went, and come
// one of two ways (sampler.Session.OffCPU says which):
//
//   - Switch samples, where the kernel lets cctop sample kernel events: a
//     sample as the thread leaves the CPU, at every switch out while they
//     are on (offcpurate.go turns them off above a budget of stacks a
//     second). A sampled interval goes to its own stack. An interval whose
//     sample was lost is shared among the thread's sampled ones in
//     proportion to their lengths: the total per thread stays exact.
//   - Probes of blocked threads' user stacks, read from /proc at a fixed
//     rate: time samples of the thread's waits. The interval a probe fell in
//     goes to the probe's stack, and so do the intervals after it that no
//     probe saw, until the next probe: each probe stands for the time off
//     the CPU around it, and the total per thread stays exact.
//
// Time a thread spent off the CPU with no stack for it (blocked since before
// the session, or never sampled) goes to one context of its own,
// "[off-cpu: stack not seen]".

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
	"github.com/cctop/cctop/tui"
)

// Modes (Options.Mode): what the time metric holds.
const (
	ModeCPU    = "cpu"    // time on the CPU, from the clock's samples
	ModeOffCPU = "offcpu" // time off the CPU, from context switches
	ModeWall   = "wall"   // both, on one time scale
)

// nextMode is the order the TUI's mode key steps through.
var nextMode = map[string]string{ModeCPU: ModeWall, ModeWall: ModeOffCPU, ModeOffCPU: ModeCPU}

// notSeen is the reason of time off the CPU before a thread's first stack.
const notSeen = "stack not seen"

// offCPU is the builder's accounting of its threads' time off the CPU.
type offCPU struct {
	// start is when the accounting began, on the records' clock
	// (CLOCK_MONOTONIC): a thread first seen coming back onto the CPU
	// had been off it since then.
	start   uint64
	threads map[uint32]*offThread
	unseen  cct.NodeID // the notSeen context, -1 until needed

	// Totals of the profile, for the summary and the counters panel.
	off, preempted uint64 // ns off the CPU; of which waiting to run again
	switches       uint64 // switches out of the CPU
	stacks, probed uint64 // off-CPU stacks taken; of which read from /proc
	unpaired       uint64 // a switch whose other half was lost
	lastTime       uint64 // the latest record time seen
	firstTime      uint64
}

// offThread is one thread's state.
type offThread struct {
	out     uint64 // when it left the CPU; 0 while on it (or not known)
	preempt bool   // it left the CPU runnable (preempted), not blocked
	// since: it is off the CPU since before the accounting began, or
	// since its creation: no switch out was there to sample. known: a
	// switch of it was counted, on the CPU or off it, so that a lone
	// switch in is a lost switch out, not a wait since the start.
	since, known bool
	// probed: its latest stack came from a probe, whose way of weighing
	// holds until a switch sample comes (the session changes source as
	// the switch rate does).
	probed bool
	// cpuNode is the context of its latest sample on the CPU, and
	// preemptNode an [off-cpu: preempted] context under it (for cpuNode
	// preemptOf): where a probed thread waits to run again. A runnable
	// thread reads as running in /proc, so no probe sees where it was
	// preempted; its last clock sample, at most a period earlier, does.
	cpuNode, preemptNode, preemptOf cct.NodeID
	// Probes: the latest stack it was seen off the CPU with (-1: none
	// yet), and the time off the CPU not given to a context yet.
	node cct.NodeID
	acc  int64
	// Switch samples: the stack sampled as it was leaving (-1: none), then
	// the stack of the interval it is off the CPU for (-1: unsampled);
	// since the last share-out, the sampled intervals and the time of the
	// unsampled ones.
	pending, sampled cct.NodeID
	shares           []offShare
	unsampled        int64
}

// offShare is a sampled interval off the CPU: its stack and length.
type offShare struct {
	node cct.NodeID
	d    int64
}

func newOffCPU(start uint64) *offCPU {
	return &offCPU{start: start, threads: map[uint32]*offThread{}, unseen: -1}
}

// newOffThread is a thread with no stack of any kind yet.
func newOffThread() *offThread {
	return &offThread{node: -1, pending: -1, sampled: -1, cpuNode: -1, preemptNode: -1, preemptOf: -1}
}

// beginOffCPU starts b's off-CPU accounting of sess at start: a new one, or
// the profile's own again (its time so far stays, its threads' state goes:
// no switch was recorded since). Threads asleep now are off the CPU since
// then, and the stacks come from the probes until the switch rate is known
// (offcpurate.go): a target switching 300,000 times a second would fill the
// rings with stacks before that.
func beginOffCPU(sess *sampler.Session, b *builder, start uint64) error {
	// The accounting takes records in the order they come.
	b.flushParked()
	if b.off == nil {
		b.off = newOffCPU(start)
	} else {
		b.off.start, b.off.threads = start, map[uint32]*offThread{}
	}
	b.off.blockedSince(sess.PID())
	return sess.SetSwitchSamples(false)
}

// monoNow is now on the records' clock when they record switches.
func monoNow() uint64 { return sampler.MonoNow() }

// blockedSince marks pid's threads that are asleep now as off the CPU since
// the accounting began: a thread that blocked before the session and stays
// blocked writes no switch to say so.
func (o *offCPU) blockedSince(pid int) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		tid, err := strconv.ParseUint(e.Name(), 10, 32)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The state follows the command name, which may hold spaces
		// and parentheses: it is after the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		switch s[i+2] {
		case 'S', 'D', 'I':
			t := o.thread(uint32(tid))
			if t.out == 0 {
				t.out, t.since = o.start, true
			}
		}
	}
}

func (o *offCPU) thread(tid uint32) *offThread {
	t := o.threads[tid]
	if t == nil {
		t = newOffThread()
		o.threads[tid] = t
	}
	return t
}

// carry is a new accounting for a reset profile that keeps which threads
// are off the CPU now and since when: only their stacks and time so far go.
func (o *offCPU) carry(now uint64) *offCPU {
	n := newOffCPU(now)
	for tid, t := range o.threads {
		if t.out != 0 {
			c := newOffThread()
			c.out, c.preempt, c.since = max(t.out, now), t.preempt, true
			n.threads[tid] = c
		}
	}
	return n
}

// switched takes one context switch of thread r.TID.
func (b *builder) switched(r *sampler.Record) {
	o := b.off
	o.seen(r.Time)
	t := o.thread(r.TID)
	if r.SwitchOut() {
		o.switches++
		if t.out != 0 {
			// The switch back in was lost: the interval's end is not
			// known, and nothing of it is counted.
			o.unpaired++
		}
		t.out, t.preempt, t.since = r.Time, r.Preempted(), false
		t.sampled, t.pending = t.pending, -1
		return
	}
	if t.out == 0 {
		// Back on the CPU with no switch out seen: the thread was off
		// it since the accounting began, unless its switch out was lost.
		if t.known {
			o.unpaired++
			return
		}
		t.out, t.since = o.start, true
	}
	if r.Time > t.out {
		b.offFor(r.TID, t, int64(r.Time-t.out))
	}
	t.out, t.sampled, t.since, t.known = 0, -1, false, true
}

// offFor counts d ns of the thread's current interval off the CPU: to the
// interval's own stack where it was sampled at its switch out, to the
// unsampled ones' share-out where switches are sampled, or to the latest
// stack a probe saw.
func (b *builder) offFor(tid uint32, t *offThread, d int64) {
	o := b.off
	o.off += uint64(d)
	if t.preempt {
		o.preempted += uint64(d)
	}
	t.known = true
	if w := b.weights; w != nil && w.offNS != nil {
		w.offNS[tid] += uint64(d)
	}
	switch {
	case t.probed && t.preempt && !t.since && t.cpuNode >= 0:
		b.tree.AddSelf(b.preemptedAt(tid, t), tid, cct.Metrics{OffCPU: d, Wall: d})
	case t.probed, t.since:
		// With switch samples a thread keeps no node: since goes to
		// notSeen.
		t.acc += d
		b.giveOff(tid, t)
	case t.sampled >= 0:
		b.tree.AddSelf(t.sampled, tid, cct.Metrics{OffCPU: d, Wall: d})
		if n := len(t.shares); n > 0 && t.shares[n-1].node == t.sampled {
			t.shares[n-1].d += d
		} else {
			t.shares = append(t.shares, offShare{t.sampled, d})
		}
	default:
		t.unsampled += d
	}
}

// preemptedAt is the [off-cpu: preempted] context under the thread's
// latest sample on the CPU.
func (b *builder) preemptedAt(tid uint32, t *offThread) cct.NodeID {
	if t.preemptOf != t.cpuNode || t.preemptNode < 0 {
		st := b.tree.Stack(t.cpuNode)
		fn := b.tree.Intern(cct.Func{Name: cct.OffCPUFrame("preempted")})
		st = append([]cct.Frame{{Func: fn}}, st...)
		t.preemptNode, t.preemptOf = b.tree.Add(st, tid, cct.Metrics{}), t.cpuNode
	}
	return t.preemptNode
}

// onCPU notes a thread's latest sample on the CPU.
func (o *offCPU) onCPU(tid uint32, node cct.NodeID) {
	if t := o.threads[tid]; t != nil {
		t.cpuNode = node
	}
}

// shareOut gives a thread's unsampled time off the CPU to its sampled
// intervals since the last share-out, in proportion to their lengths; with
// none, it waits for them, or goes to notSeen when final.
func (b *builder) shareOut(tid uint32, t *offThread, final bool) {
	if t.unsampled == 0 {
		t.shares = t.shares[:0]
		return
	}
	var sum int64
	for _, s := range t.shares {
		sum += s.d
	}
	if sum == 0 {
		if final {
			t.acc, t.node = t.unsampled, -1
			t.unsampled = 0
			b.giveOff(tid, t)
		}
		return
	}
	left := t.unsampled
	for i, s := range t.shares {
		x := int64(float64(t.unsampled) * float64(s.d) / float64(sum))
		if i == len(t.shares)-1 {
			x = left
		}
		left -= x
		b.tree.AddSelf(s.node, tid, cct.Metrics{OffCPU: x, Wall: x})
	}
	t.unsampled, t.shares = 0, t.shares[:0]
}

// giveOff adds the thread's time off the CPU so far to its latest stack.
func (b *builder) giveOff(tid uint32, t *offThread) {
	if t.acc == 0 {
		return
	}
	node := t.node
	if node < 0 {
		o := b.off
		if o.unseen < 0 {
			fn := b.tree.Intern(cct.Func{Name: cct.OffCPUFrame(notSeen)})
			o.unseen = b.tree.Add([]cct.Frame{{Func: fn}}, tid, cct.Metrics{})
		}
		node = o.unseen
	}
	b.tree.AddSelf(node, tid, cct.Metrics{OffCPU: t.acc, Wall: t.acc})
	t.acc = 0
}

// settle counts the time of threads still off the CPU up to now, so that a
// snapshot or the end of a recording holds every thread's whole time.
func (b *builder) settle(now uint64) {
	o := b.off
	if o == nil || now == 0 {
		return
	}
	for tid, t := range o.threads {
		if t.out != 0 && now > t.out {
			b.offFor(tid, t, int64(now-t.out))
			t.out = now
		}
		b.shareOut(tid, t, false)
	}
}

// finish settles every thread up to now and gives the time still waiting
// for a sampled interval to notSeen: the end of a recording. JIT code is
// named from the processes' perf maps as they are now (jitnames.go).
func (b *builder) finish(now uint64) {
	b.flushParked()
	b.renameJIT(true)
	if b.off == nil {
		return
	}
	b.settle(now)
	for tid, t := range b.off.threads {
		b.shareOut(tid, t, true)
	}
}

// forkedThread: a new thread waits to run from its creation.
func (b *builder) forkedThread(r *sampler.Record) {
	t := b.off.thread(r.TID)
	if t.out == 0 {
		t.out, t.preempt, t.since = r.Time, true, true
	}
}

// exitedThread forgets a thread that ended (on the CPU, as threads do).
func (b *builder) exitedThread(r *sampler.Record) {
	if t := b.off.threads[r.TID]; t != nil {
		b.giveOff(r.TID, t)
		b.shareOut(r.TID, t, true)
		delete(b.off.threads, r.TID)
	}
	if w := b.weights; w != nil && w.offNS != nil {
		// A thread that comes with the TID again starts from zero, as
		// its events do.
		delete(w.offNS, r.TID)
	}
}

func (o *offCPU) seen(tm uint64) {
	if o.firstTime == 0 {
		o.firstTime = tm
	}
	o.lastTime = max(o.lastTime, tm)
}

// offSample takes a stack of thread r.TID off the CPU: the intervals from
// now on go to it.
func (b *builder) offSample(r *sampler.Record) {
	o := b.off
	o.seen(r.Time)
	o.stacks++
	if r.Probed {
		o.probed++
	}
	t := o.thread(r.TID)
	switch {
	case r.Probed && !t.probed:
		// From switch samples to probes: what waits for a share-out
		// goes to the sampled intervals, or with none to the stack
		// before.
		b.shareOut(r.TID, t, false)
		t.acc += t.unsampled
		t.unsampled, t.probed, t.node = 0, true, -1
		b.giveOff(r.TID, t)
	case r.Probed:
		b.giveOff(r.TID, t) // what came before goes to the stack before
	case t.probed:
		// From probes to switch samples.
		b.giveOff(r.TID, t)
		t.probed = false
	}
	nk := b.buildStack(r)
	reason := b.offReason(r, b.frames[:nk])
	fn := b.tree.Intern(cct.Func{Name: cct.OffCPUFrame(reason)})
	b.stack = append(b.stack, cct.Frame{})
	copy(b.stack[1:], b.stack)
	b.stack[0] = cct.Frame{Func: fn}
	node := b.tree.Add(b.stack, r.TID, cct.Metrics{})
	switch {
	case !r.Probed:
		// Taken as the thread leaves: its switch out comes next.
		t.pending = node
	case t.out == 0 && !t.known:
		// Blocked with no switch seen: since before the accounting.
		t.node, t.out, t.since = node, o.start, true
	default:
		t.node = node
	}
	b.foldIfFull()
}

// offReason says why a thread was off the CPU: from its kernel frames where
// they were sampled (the wait they show, else the system call), from the
// system call a probe saw it blocked in, or "preempted".
func (b *builder) offReason(r *sampler.Record, kernel []symbol.Frame) string {
	if r.Probed {
		if r.Syscall < 0 {
			return "preempted"
		}
		if n, ok := syscallNames[r.Syscall]; ok {
			return n
		}
		return fmt.Sprintf("syscall %d", r.Syscall)
	}
	if len(kernel) == 0 {
		return "unknown"
	}
	sys := ""
	for _, f := range kernel {
		if w := kernelWait(f.Func); w != "" {
			return w
		}
		if sys == "" {
			sys = syscallOfFrame(f.Func)
		}
	}
	if sys != "" {
		return sys
	}
	return "kernel"
}

// kernelWaits are kernel functions that say what a thread waits for, by the
// substring that names them, in the order they are tried from the leaf.
var kernelWaits = []struct{ substr, reason string }{
	{"exit_to_user_mode", "preempted"}, {"preempt_schedule", "preempted"}, {"irqentry_exit", "preempted"},
	{"futex", "futex"}, {"nanosleep", "nanosleep"}, {"ep_poll", "epoll"}, {"do_epoll_wait", "epoll"},
	{"pipe_read", "pipe read"}, {"pipe_write", "pipe write"}, {"pipe_wait", "pipe"},
	{"do_sys_poll", "poll"}, {"do_select", "select"}, {"core_sys_select", "select"},
	{"sk_wait_data", "socket read"}, {"inet_csk_accept", "accept"}, {"unix_stream_read", "socket read"},
	{"unix_stream_data_wait", "socket read"}, {"sock_alloc_send", "socket write"}, {"wait_woken", "socket"},
	{"io_schedule", "io"}, {"folio_wait", "io"}, {"blk_mq", "io"}, {"jbd2", "io"},
	{"exc_page_fault", "page fault"}, {"handle_mm_fault", "page fault"},
	{"do_wait", "wait child"}, {"kernel_wait4", "wait child"}, {"msleep", "sleep"},
	{"sys_sched_yield", "sched_yield"}, {"do_sigtimedwait", "signal"}, {"sigsuspend", "signal"},
	{"rwsem_down", "kernel lock"}, {"mutex_lock", "kernel lock"}, {"wait_for_completion", "completion"},
}

func kernelWait(fn string) string {
	for _, w := range kernelWaits {
		if strings.Contains(fn, w.substr) {
			return w.reason
		}
	}
	return ""
}

// syscallOfFrame is the system call of a syscall entry's kernel frame
// (__x64_sys_read, __arm64_sys_read, __se_sys_read), or "".
func syscallOfFrame(fn string) string {
	for _, p := range []string{"__x64_sys_", "__arm64_sys_", "__se_sys_", "__do_sys_", "ksys_"} {
		if s, ok := strings.CutPrefix(fn, p); ok && s != "" {
			return s
		}
	}
	return ""
}

// idleThreads are the threads that spent almost all of their time off the
// CPU, of a profile's totals per thread (cct.Tree.ThreadTotals): a pool
// waiting for work, say. They would drown the busy threads' off-CPU time,
// so the TUI hides them unless asked.
func idleThreads(totals map[uint32]cct.Metrics) map[uint32]bool {
	idle := map[uint32]bool{}
	for tid, m := range totals {
		if m.OffCPU > 0 && m.Time*idleOnCPU < m.Time+m.OffCPU {
			idle[tid] = true
		}
	}
	return idle
}

// idleOnCPU: a thread is idle when under 1/idleOnCPU of its time was on the
// CPU.
const idleOnCPU = 50

// modeTime is the time metric of mode: on the CPU, off it, or both.
func modeTime(mode string) func(cct.Metrics) int64 {
	switch mode {
	case ModeOffCPU:
		return func(m cct.Metrics) int64 { return m.OffCPU }
	case ModeWall:
		return func(m cct.Metrics) int64 { return m.Wall }
	}
	return func(m cct.Metrics) int64 { return m.Time }
}

// describe is the off-CPU accounting in a line, for the summary and the
// counters panel.
func (o *offCPU) describe(source string) string {
	secs := float64(o.lastTime-o.firstTime) / 1e9
	rate := ""
	if secs > 0 {
		rate = fmt.Sprintf(" (%s/s)", tui.FormatCount(float64(o.switches)/secs))
	}
	s := fmt.Sprintf("%s switches out%s, %s stacks by %s, %.3fs off the CPU (%.0f%% waiting to run)",
		tui.FormatCount(float64(o.switches)), rate, tui.FormatCount(float64(o.stacks)), source,
		float64(o.off)/1e9, 100*float64(o.preempted)/float64(max(o.off, 1)))
	if o.unpaired > 0 {
		s += fmt.Sprintf(", %d switches unpaired (their other half lost)", o.unpaired)
	}
	return s
}
