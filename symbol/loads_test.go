package symbol

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// gatedLoads makes res's background loads wait for the returned gate to
// close, and counts them.
func gatedLoads(res *Resolver) (gate chan struct{}, started *atomic.Int32) {
	gate, started = make(chan struct{}), new(atomic.Int32)
	res.loads.load = func(pid int, m *Mapping, lines bool) *module {
		started.Add(1)
		<-gate
		return loadFile(pid, m, lines)
	}
	return gate, started
}

// TestDeferredLookupLoadsAside: a deferred lookup that needs a module not
// loaded starts one load on another goroutine, answers without the module
// and says so, as do the lookups after it while the load runs; once the
// load is collected the same pc is named, and nothing is missed. The
// caches keep nothing of the answers given without the module.
func TestDeferredLookupLoadsAside(t *testing.T) {
	const pid = 4243
	m, pc := libcMalloc(t)
	res := NewResolver()
	gate, started := gatedLoads(res)
	loaded := make(chan struct{}, 4)
	res.OnLoaded(func() { loaded <- struct{}{} })
	res.AddMapping(pid, m)
	name := func() string {
		fs := res.Lookup(pid, pc, nil)
		return fs[len(fs)-1].Func
	}

	res.SetDeferred(true)
	for i := range 3 {
		if got := name(); got != "" {
			t.Fatalf("lookup %d while libc loads: %q", i, got)
		}
		if !res.TakeMissed() {
			t.Fatalf("lookup %d while libc loads: not missed", i)
		}
	}
	if res.TakeMissed() {
		t.Error("TakeMissed did not start over")
	}
	if n := res.Loading(); n != 1 {
		t.Errorf("%d loads in flight, want 1", n)
	}
	if n := res.Collect(); n != 1 {
		t.Errorf("Collect before the load ended: %d in flight, want 1", n)
	}
	close(gate)
	select {
	case <-loaded:
	case <-time.After(10 * time.Second):
		t.Fatal("OnLoaded was not called")
	}
	if n := res.Collect(); n != 0 {
		t.Errorf("Collect after the load ended: %d in flight", n)
	}
	if got := name(); got != "malloc" || res.TakeMissed() {
		t.Errorf("after the load: %q, missed %v", got, res.TakeMissed())
	}
	if n := started.Load(); n != 1 {
		t.Errorf("%d loads started for one file", n)
	}
}

// TestLookupWaitsForLoadInFlight: a lookup that is not deferred, of a
// module a deferred one started loading, waits for that load rather than
// read the file a second time, and WaitLoads leaves nothing in flight.
func TestLookupWaitsForLoadInFlight(t *testing.T) {
	const pid = 4244
	m, pc := libcMalloc(t)
	res := NewResolver()
	gate, started := gatedLoads(res)
	res.AddMapping(pid, m)
	res.SetDeferred(true)
	res.Lookup(pid, pc, nil)
	res.SetDeferred(false)
	if !res.TakeMissed() {
		t.Fatal("the deferred lookup did not miss")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(gate)
	}()
	fs := res.Lookup(pid, pc, nil)
	if got := fs[len(fs)-1].Func; got != "malloc" || res.TakeMissed() {
		t.Errorf("a lookup that waits: %q", got)
	}
	if n := started.Load(); n != 1 || res.Loading() != 0 {
		t.Errorf("%d loads started, %d in flight; want 1 and 0", n, res.Loading())
	}

	// WaitLoads: a second process's module, loading, is in after it.
	res2 := NewResolver()
	gate2, _ := gatedLoads(res2)
	res2.AddMapping(pid, m)
	res2.SetDeferred(true)
	res2.Lookup(pid, pc, nil)
	res2.TakeMissed()
	close(gate2)
	res2.WaitLoads()
	if res2.Loading() != 0 {
		t.Fatalf("%d loads in flight after WaitLoads", res2.Loading())
	}
	if fs := res2.Lookup(pid, pc, nil); fs[len(fs)-1].Func != "malloc" || res2.TakeMissed() {
		t.Errorf("after WaitLoads: %q", fs[len(fs)-1].Func)
	}
}

// TestDeferredKernelTable: the kernel's table too is read aside when
// lookups are deferred, and names the pc once collected.
func TestDeferredKernelTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kallsyms")
	if err := os.WriteFile(path, []byte("ffffffff81000000 T _stext\nffffffff81001000 T do_syscall_64\nffffffff81002000 T end_thing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := kallsymsPath
	kallsymsPath = path
	t.Cleanup(func() { kallsymsPath = old })

	res := NewResolver()
	res.SetDeferred(true)
	fs := res.LookupKernel(0xffffffff81001010, nil)
	missed := res.TakeMissed()
	// The read may be quick: either it missed, or it named the pc.
	if fs[0].Func != "" && !missed {
		if fs[0].Func != "do_syscall_64" {
			t.Fatalf("named %q", fs[0].Func)
		}
	} else if fs[0].Func != "" || !missed {
		t.Fatalf("while the table loads: %q, missed %v", fs[0].Func, missed)
	}
	res.WaitLoads()
	if fs := res.LookupKernel(0xffffffff81001010, nil); fs[0].Func != "do_syscall_64" || res.TakeMissed() {
		t.Errorf("after the load: %q", fs[0].Func)
	}
}
