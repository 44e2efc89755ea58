package engine

import (
	"slices"
	"strings"
	"testing"
)

// feedCopies gives the plan n samples of tid, each of the copy size large, of
// which every k-th needed the large copy (k 0: none).
func feedCopies(p *copyPlan, tid uint32, n int, large bool, k int, module string) {
	for i := 1; i <= n; i++ {
		size := p.small
		if large {
			size = p.large
			if t := p.threads[tid]; t != nil && t.large {
				size = t.size
			}
		}
		p.observe(tid, copySample{size: size, needed: k > 0 && i%k == 0, module: module})
	}
}

// copiesDone plays the sampler: the changes asked for are made.
func copiesDone(p *copyPlan) map[int]int {
	asked := map[int]int{}
	for tid, n := range p.want {
		asked[tid] = n
		if t := p.threads[uint32(tid)]; t != nil {
			t.pending, t.large, t.settle = false, n > p.small, copyWindow
			if t.large {
				t.size = n
			}
		}
		delete(p.want, tid)
	}
	return asked
}

// TestCopyPlanDown: a thread on the large copy whose stacks never need it
// goes to the small one after copyHoldMin windows, not before; one whose
// stacks need it one sample in fifty stays.
func TestCopyPlanDown(t *testing.T) {
	p := newCopyPlan(512, 8192)
	feedCopies(p, 1, copyWindow*copyHoldMin-1, true, 0, "")
	feedCopies(p, 2, copyWindow*copyHoldMin*4, true, 50, "libpython3.11.so")
	if len(p.want) != 0 {
		t.Fatalf("asked for %v before the hold", p.want)
	}
	feedCopies(p, 1, 1, true, 0, "")
	if got := copiesDone(p); len(got) != 1 || got[1] != 512 {
		t.Fatalf("after %d quiet windows: asked %v, want thread 1 to 512", copyHoldMin, got)
	}
	if !strings.Contains(p.String(), "needed in libpython3.11.so") {
		t.Errorf("the plan does not name the module that needed the copy: %s", p)
	}
}

// TestCopyPlanUp: on the small copy, two samples of a window that needed
// the large one send the thread back at once; one alone does not. A
// thread that came back waits twice as long before going down again.
func TestCopyPlanUp(t *testing.T) {
	p := newCopyPlan(512, 8192)
	feedCopies(p, 7, copyWindow*copyHoldMin, true, 0, "")
	copiesDone(p)
	// Samples taken before the change and read after it do not count
	// as the thread's new state.
	feedCopies(p, 7, 10, true, 0, "")
	if p.threads[7].large {
		t.Fatal("samples in flight from before the change undid it")
	}
	feedCopies(p, 7, copyWindow-1, false, copyWindow-1, "libfoo.so") // one need in a window
	feedCopies(p, 7, 1, false, 0, "")
	if len(p.want) != 0 {
		t.Fatalf("one sample that needed the copy sent the thread back: %v", p.want)
	}
	feedCopies(p, 7, 2, false, 1, "libfoo.so")
	if got := copiesDone(p); got[7] != 8192 {
		t.Fatalf("two needs in a window: asked %v, want thread 7 to 8192", got)
	}
	feedCopies(p, 7, copyWindow*copyHoldMin, true, 0, "")
	if len(p.want) != 0 {
		t.Errorf("back on the large copy, the thread went down after %d windows, want %d", copyHoldMin, 2*copyHoldMin)
	}
	feedCopies(p, 7, copyWindow*copyHoldMin, true, 0, "")
	if got := copiesDone(p); got[7] != 512 {
		t.Errorf("after %d quiet windows: asked %v", 2*copyHoldMin, got)
	}
	if p.ups != 1 || p.downs != 2 {
		t.Errorf("switches: %d up, %d down; want 1 and 2", p.ups, p.downs)
	}
}

// TestCopyPlanInherited: a thread first seen on the small copy (it
// inherited its creator's) is on it; a pending change keeps the thread
// from asking again.
func TestCopyPlanInherited(t *testing.T) {
	p := newCopyPlan(512, 8192)
	feedCopies(p, 3, 5, false, 0, "")
	if p.threads[3].large {
		t.Fatal("a thread seen on the small copy is taken as on the large one")
	}
	feedCopies(p, 3, 4, false, 1, "libc.so.6")
	if len(p.want) != 1 || p.ups != 1 {
		t.Fatalf("want one request up, got %v (%d ups)", p.want, p.ups)
	}
	feedCopies(p, 3, copyWindow*3, false, 1, "libc.so.6")
	if p.ups != 1 {
		t.Errorf("a pending change was asked again: %d ups", p.ups)
	}
	// What govern counts when the sampler reopened every event for it.
	p.reopens = 2
	if s := p.String(); !strings.Contains(s, "1 switches up, 0 down (2 by reopening every event)") {
		t.Errorf("the plan does not say its reopens: %s", s)
	}
	p.forget(3)
	if len(p.threads) != 0 {
		t.Errorf("forget kept %v", p.threads)
	}
}

// TestCopyPlanNoReopen: where every event is never reopened, a thread whose
// change needs that keeps its copy and asks no more.
func TestCopyPlanNoReopen(t *testing.T) {
	p := newCopyPlan(512, 8192)
	p.noReopen = true
	feedCopies(p, 5, copyWindow*copyHoldMin, true, 0, "")
	if len(p.want) != 1 {
		t.Fatalf("want %v, one request down", p.want)
	}
	// What govern does with the sampler's answer that it is pending.
	for tid := range p.want {
		delete(p.want, tid)
	}
	feedCopies(p, 5, copyWindow*copyHoldMax, true, 0, "")
	if len(p.want) != 0 || p.downs != 1 {
		t.Errorf("a thread that cannot change asked again: want %v, %d downs", p.want, p.downs)
	}
}

// feedDeep gives the plan n samples of tid on its large copy, each needing
// it (CFI code throughout), whose unwinding read used bytes of the copy;
// overran says it ran off the copy's end.
func feedDeep(p *copyPlan, tid uint32, n, used int, overran bool) {
	for range n {
		size := p.large
		if t := p.threads[tid]; t != nil {
			size = t.size
		}
		p.observe(tid, copySample{size: size, needed: true, module: "libstdc++.so.6", used: used, overran: overran})
	}
}

// TestCopyPlanFit: a thread whose stacks need CFI but fill a fraction of
// --stack-size gets a copy fitted to its deepest stack after copyHoldMin
// windows, not before; stacks that outgrow it send it back to
// --stack-size at once, and it waits twice as long before the next fit.
func TestCopyPlanFit(t *testing.T) {
	p := newCopyPlan(512, 8192)
	if got := []int{p.fit(0), p.fit(400), p.fit(1500), p.fit(5000)}; !slices.Equal(got, []int{1024, 1024, 3072, 8192}) {
		t.Fatalf("fit of 0, 400, 1500, 5000 bytes: %v", got)
	}
	feedDeep(p, 3, copyWindow*copyHoldMin-1, 1500, false)
	if len(p.want) != 0 {
		t.Fatalf("asked for %v before %d windows", p.want, copyHoldMin)
	}
	feedDeep(p, 3, 1, 1200, false)
	if got := copiesDone(p); got[3] != 3072 {
		t.Fatalf("asked %v, want thread 3 to 3072 bytes", got)
	}
	if th := p.threads[3]; !th.large || th.size != 3072 {
		t.Fatalf("thread after the change: large %v, size %d", th.large, th.size)
	}
	// Fitted: it stays.
	feedDeep(p, 3, copyWindow*copyHoldMin*4, 1500, false)
	if len(p.want) != 0 {
		t.Fatalf("a fitted copy changed again: %v", p.want)
	}
	// One stack too deep is not enough; two in a window are.
	feedDeep(p, 3, 1, 3072, true)
	feedDeep(p, 3, copyWindow, 1500, false)
	if len(p.want) != 0 {
		t.Fatalf("one overrun in a window sent the thread back: %v", p.want)
	}
	feedDeep(p, 3, 2, 3072, true)
	if got := copiesDone(p); got[3] != 8192 {
		t.Fatalf("two overruns: asked %v, want thread 3 to 8192", got)
	}
	feedDeep(p, 3, copyWindow*copyHoldMin, 1500, false)
	if len(p.want) != 0 {
		t.Errorf("outgrown, the thread was fitted again after %d windows, want %d", copyHoldMin, 2*copyHoldMin)
	}
	feedDeep(p, 3, copyWindow*copyHoldMin, 1500, false)
	if got := copiesDone(p); got[3] != 3072 {
		t.Errorf("after %d windows: asked %v", 2*copyHoldMin, got)
	}
	if p.fitted != 2 || p.outgrown != 1 {
		t.Errorf("fitted %d, outgrown %d; want 2 and 1", p.fitted, p.outgrown)
	}
	if s := p.String(); !strings.Contains(s, "up to 8 KiB (") || !strings.Contains(s, "2 copies fitted") {
		t.Errorf("the plan does not say its fitted copies: %s", s)
	}
}
