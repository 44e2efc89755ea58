package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// The unwinding plan that learns (--unwind auto): the samples of a thread
// whose stacks keep frame pointers carry the kernel's frame-pointer chain
// and a small stack copy (enough for the leaf and its caller); those of a
// thread whose stacks pass through code without them, a large copy
// (--stack-size) unwound with CFI. Each sample's stack is checked frame by
// frame against the modules' CFI (symbol.FrameStep): where a frame's
// function keeps no frame pointer, the chain past it is wrong. On a large
// copy the check says whether the chain would have done; a thread whose
// samples have not needed the copy for a while goes to the small one. On
// a small copy the stack is cut at such a frame, and a thread whose
// samples keep running into them goes back to the large copy. Threads
// start on the large copy, so nothing is lost while a thread's needs are
// learned, but threads created later start on their creator's. So a
// program built with frame pointers pays for perf -g's stacks after its
// first second, and one without, or the phases of a thread spent in a
// library without them, for DWARF's, thread by thread.

// copyWindow is how many of a thread's samples make one judgement: about
// an eighth of a second of a busy thread at 999 Hz.
const copyWindow = 128

// copyNeed is how many samples of a window on the small copy that needed
// a larger one send the thread to the large copy: two, so that one stray
// sample in a library without frame pointers does not.
const copyNeed = 2

// copyHold bounds the quiet windows on the large copy before a thread goes
// back to the small one: the first time copyHoldMin, doubled at each
// return to the large copy, up to copyHoldMax (a thread that switches
// phases often settles on the large copy).
const (
	copyHoldMin = 4
	copyHoldMax = 256
)

// copyMin is the least copy a thread whose stacks need CFI is given, and
// copyRoom how much more than its deepest stack: the large copy is sized
// to the stacks it carries (fit), since every sample's copy is written to
// the ring, read and decoded whole, however little of it the stack fills.
// A thread whose stacks outgrow its copy (copyNeed samples of a window
// whose unwinding ran off its end) goes back to --stack-size at once.
const (
	copyMin  = 1024
	copyRoom = 2 // the deepest stack times this, at most --stack-size
)

// copyReopenGap is the least time between two reopens of every event (the
// way a thread that inherited its events changes copy size): each costs
// an open per thread and CPU and restarts the counters. Doubled at each,
// up to copyReopenMax.
const (
	copyReopenGap = 2 * time.Second
	copyReopenMax = 60 * time.Second
)

// copyPlan is the learning plan of one session: each thread's copy and its
// current window, the changes waiting for the sampler, and what the
// summary says of it.
type copyPlan struct {
	small, large int
	threads      map[uint32]*copyThread
	want         map[int]int // changes not made yet: tid -> bytes
	nextReopen   time.Time
	reopenGap    time.Duration
	off          string // why the plan stopped learning (a change failed)
	noReopen     bool   // never reopen every event (off-CPU and wall modes)

	// bottoms are the frames past a thread's first frame of a root
	// function (bottomKey), as large copies unwound them: the kernel's
	// chain ends at that frame, in a C library without frame pointers
	// (__libc_start_call_main, start_thread), and a small copy's stack
	// gets the same bottom frames as a large copy's, not a context of its
	// own one frame short.
	bottoms map[bottomKey][]uint64

	samples, largeSamples uint64
	largeBytes            uint64            // the large copies' bytes, summed
	cut                   uint64            // small-copy samples cut where a frame needed CFI
	needBy                map[string]uint64 // samples that needed the large copy, by the module of the frame
	ups, downs, reopens   int
	fitted, outgrown      int // large copies made smaller for a thread, and back to --stack-size
}

// bottomKey is a root function's frame: its process and return address.
type bottomKey struct {
	pid uint32
	pc  uint64
}

// maxBottoms bounds the bottoms kept: a few per process.
const maxBottoms = 4096

// bottom is what a small copy's stack ending at pc (a frame of a root
// function) lacks, and whether a large copy has shown it (possibly
// nothing: the stack ends there).
func (p *copyPlan) bottom(pid uint32, pc uint64) ([]uint64, bool) {
	rest, ok := p.bottoms[bottomKey{pid, pc}]
	return rest, ok
}

// keepBottom remembers the frames past pc, once.
func (p *copyPlan) keepBottom(pid uint32, pc uint64, rest []uint64) {
	k := bottomKey{pid, pc}
	if _, ok := p.bottoms[k]; ok {
		return
	}
	if p.bottoms == nil || len(p.bottoms) >= maxBottoms {
		p.bottoms = map[bottomKey][]uint64{}
	}
	p.bottoms[k] = append([]uint64(nil), rest...)
}

// copyThread is one thread's state.
type copyThread struct {
	large   bool // its samples carry the large copy
	pending bool // a change was asked for
	n, need int  // the window under way: samples, and those that needed the large copy
	quiet   int  // windows on the large copy in a row that did not need it
	hold    int  // quiet windows needed before going back
	settle  int  // samples of the old size still taken as in flight after a change

	size int // its large copy's bytes: --stack-size, or less (fit)
	deep int // the most bytes of its copy a sample's unwinding read, this window
	over int // samples of this window whose stack ran past a copy under --stack-size
	fits int // windows in a row whose stacks would fit a copy of 3/4 of size or less
	// fitHold is the windows of fits before the copy is made smaller:
	// copyHoldMin, doubled at each return to --stack-size.
	fitHold int
}

// copySample is what one sample tells the plan: its copy's size, whether
// it needed the large copy (module: the frame that did), and for a large
// copy how many of its bytes the unwinding read and whether it ran off
// the end of a copy the thread has made smaller.
type copySample struct {
	size    int
	needed  bool
	module  string
	used    int
	overran bool
}

// fit is the copy for a thread whose deepest stack used bytes.
func (p *copyPlan) fit(used int) int {
	n := (used*copyRoom + copyMin - 1) / copyMin * copyMin
	return min(max(n, copyMin), p.large)
}

// newWindow starts the thread's next window.
func (t *copyThread) newWindow() { t.n, t.need, t.deep, t.over = 0, 0, 0, 0 }

// restart starts the thread's judgement over: a change was asked for or
// seen.
func (t *copyThread) restart() {
	t.newWindow()
	t.quiet, t.fits = 0, 0
}

func newCopyPlan(small, large int) *copyPlan {
	return &copyPlan{small: small, large: large, threads: map[uint32]*copyThread{}, want: map[int]int{},
		needBy: map[string]uint64{}, reopenGap: copyReopenGap}
}

// isLarge says whether a sample's copy is the large one.
func (p *copyPlan) isLarge(r *sampler.Record) bool { return int(r.StackSize) > p.small }

// observe takes one sample of tid.
func (p *copyPlan) observe(tid uint32, c copySample) {
	large, needed, module := c.size > p.small, c.needed, c.module
	p.samples++
	if large {
		p.largeSamples++
		p.largeBytes += uint64(c.size)
	}
	if needed {
		p.needBy[cmp.Or(module, stopNoModule)]++
	}
	t := p.threads[tid]
	if t == nil {
		t = &copyThread{hold: copyHoldMin, fitHold: copyHoldMin, size: p.large}
		p.threads[tid] = t
	}
	if (t.large != large || (large && t.size != c.size)) && !t.pending {
		if t.settle > 0 {
			// Taken before the change, read after it.
			t.settle--
			return
		}
		// A new thread took its creator's copy, or a reopen changed it.
		t.large = large
		t.restart()
		if large {
			t.size = c.size
		}
	}
	t.n++
	if needed {
		t.need++
	}
	if large && t.size == c.size {
		t.deep = max(t.deep, c.used)
		if c.overran && t.size < p.large {
			t.over++
		}
	}
	if p.off != "" || t.pending {
		if t.n >= copyWindow {
			t.newWindow()
		}
		return
	}
	if !t.large && t.need >= copyNeed {
		p.ask(tid, t, true)
		return
	}
	if t.large && t.over >= copyNeed {
		// Stacks deeper than the copy made for them: --stack-size
		// again, and a longer wait before the next fit.
		t.fitHold = min(t.fitHold*2, copyHoldMax)
		p.resize(tid, t, p.large)
		return
	}
	if t.n < copyWindow {
		return
	}
	if t.large {
		// Quiet: at most one sample in 200 would have needed it.
		if t.need*200 <= t.n {
			t.quiet++
		} else {
			t.quiet = 0
		}
		fit := p.fit(t.deep)
		if t.deep > 0 && fit*4 <= t.size*3 {
			t.fits++
		} else {
			t.fits = 0
		}
		switch {
		case t.quiet >= t.hold:
			p.ask(tid, t, false)
		case t.fits >= t.fitHold:
			p.resize(tid, t, fit)
		}
	}
	t.newWindow()
}

// resize asks for a large copy of size bytes for tid.
func (p *copyPlan) resize(tid uint32, t *copyThread, size int) {
	t.pending = true
	t.restart()
	p.want[int(tid)] = size
	if size < t.size {
		p.fitted++
	} else {
		p.outgrown++
	}
}

func (p *copyPlan) ask(tid uint32, t *copyThread, large bool) {
	t.pending = true
	t.restart()
	if large {
		p.want[int(tid)] = p.large
		p.ups++
		if p.downs > 0 {
			t.hold = min(t.hold*2, copyHoldMax)
		}
	} else {
		p.want[int(tid)] = p.small
		p.downs++
	}
}

// govern asks the sampler for the changes waiting, between batches; a
// reopen of every event is allowed copyReopenGap after the last. It
// returns the old events' records when it reopened them, for the builder,
// and a note when a change failed (the plan then stops learning).
func (p *copyPlan) govern(sess *sampler.Session, now time.Time) (*sampler.Batch, string) {
	if p == nil || len(p.want) == 0 {
		return nil, ""
	}
	reopen := !now.Before(p.nextReopen) && !p.noReopen
	c, err := sess.SetUserStacks(p.want, reopen)
	for _, tid := range c.Changed {
		if t := p.threads[uint32(tid)]; t != nil {
			t.pending, t.large, t.settle = false, p.want[tid] > p.small, copyWindow
			if t.large {
				t.size = p.want[tid]
			}
		}
		delete(p.want, tid)
	}
	for tid := range p.want {
		if slices.Contains(c.Pending, tid) {
			if p.noReopen {
				// It can change only with every event, which is
				// never reopened here: it keeps its copy, and stays
				// pending so that it asks no more (not at every batch).
				delete(p.want, tid)
			}
			continue
		}
		// Gone, or already at that size.
		if t := p.threads[uint32(tid)]; t != nil {
			t.pending = false
		}
		delete(p.want, tid)
	}
	if c.Reopened {
		p.reopens++
		p.nextReopen = now.Add(p.reopenGap)
		p.reopenGap = min(p.reopenGap*2, copyReopenMax)
	}
	if err != nil && p.off == "" {
		p.off = err.Error()
		clear(p.want)
		for _, t := range p.threads {
			t.pending = false
		}
		return c.Batch, "stack copies stay as they are: " + p.off
	}
	return c.Batch, ""
}

// forget drops the threads that are gone.
func (p *copyPlan) forget(tid uint32) {
	if p != nil {
		delete(p.threads, tid)
	}
}

// String is the plan as the summary and the counters panel say it:
// "fp + 512 B copies, 8 KiB for 3.1% of samples (libpython3.11.so 2.9%)".
func (p *copyPlan) String() string {
	s := fmt.Sprintf("fp + %s copies", bytesShort(p.small))
	if p.samples == 0 {
		return s + ", " + bytesShort(p.large) + " for threads whose stacks need CFI"
	}
	large := bytesShort(p.large)
	if p.fitted > 0 && p.largeSamples > 0 {
		// Sizes fitted to the stacks: what the large copies were.
		large = fmt.Sprintf("up to %s (%.1f KiB on average)", large, float64(p.largeBytes)/float64(p.largeSamples)/1024)
	}
	s += fmt.Sprintf(", %s for %.1f%% of samples", large, 100*float64(p.largeSamples)/float64(p.samples))
	type mod struct {
		name string
		n    uint64
	}
	var mods []mod
	for m, n := range p.needBy {
		mods = append(mods, mod{m, n})
	}
	slices.SortFunc(mods, func(a, b mod) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	var parts []string
	for _, m := range mods[:min(3, len(mods))] {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", symbol.ModuleBase(m.name), 100*float64(m.n)/float64(p.samples)))
	}
	if len(parts) > 0 {
		s += " (needed in " + strings.Join(parts, ", ") + ")"
	}
	if p.cut > 0 {
		s += fmt.Sprintf(", %.1f%% cut before their thread's switch", 100*float64(p.cut)/float64(p.samples))
	}
	if p.ups+p.downs > 0 {
		s += fmt.Sprintf(", %d switches up, %d down", p.ups, p.downs)
	}
	if p.fitted+p.outgrown > 0 {
		s += fmt.Sprintf(", %d copies fitted to their thread's stacks, %d outgrown", p.fitted, p.outgrown)
	}
	if p.reopens > 0 {
		// Threads on inherited events change only with every event:
		// what that cost on a big machine is threads × CPUs opens.
		s += fmt.Sprintf(" (%d by reopening every event)", p.reopens)
	}
	if p.off != "" {
		s += "; stopped learning: " + p.off
	}
	return s
}

// bytesShort writes a copy size: "512 B", "8 KiB".
func bytesShort(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}
