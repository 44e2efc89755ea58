package symbol

import (
	"bytes"
	"cmp"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// realModule is an ELF file of this machine, mapped the way the loader
// maps its executable segment, with addresses of its functions.
type realModule struct {
	path string
	m    Mapping  // at address 0: mapOne places it
	offs []uint64 // addresses inside functions, as offsets into the mapping
}

// realModules returns up to n ELF files from the system's library and
// binary directories, in a fixed order, each no larger than maxSize and
// with sized function symbols in its executable segment, and up to
// perMod addresses inside those functions.
func realModules(t *testing.T, n int, maxSize int64, perMod int) []realModule {
	t.Helper()
	libs, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/*.so*")
	bins, _ := filepath.Glob("/usr/bin/*")
	slices.Sort(libs)
	slices.Sort(bins)
	var paths []string
	for i := 0; i < len(libs) || i < len(bins); i++ {
		if i < len(libs) {
			paths = append(paths, libs[i])
		}
		if i < len(bins) {
			paths = append(paths, bins[i])
		}
	}
	seen := map[string]bool{}
	var out []realModule
	for _, p := range paths {
		if len(out) == n {
			break
		}
		rp, err := filepath.EvalSymlinks(p)
		if err != nil || seen[rp] {
			continue
		}
		seen[rp] = true
		if st, err := os.Stat(rp); err != nil || !st.Mode().IsRegular() || st.Size() > maxSize || st.Size() < 16<<10 {
			continue
		}
		if rm, ok := readRealModule(rp, perMod); ok {
			out = append(out, rm)
		}
	}
	if len(out) < n {
		t.Skipf("found %d usable ELF files, want %d", len(out), n)
	}
	return out
}

// readRealModule reads path's executable PT_LOAD and picks perMod
// addresses inside its sized functions, spread over the symbol table,
// with debug/elf alone.
func readRealModule(path string, perMod int) (realModule, bool) {
	f, err := elf.Open(path)
	if err != nil {
		return realModule{}, false
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return realModule{}, false
	}
	var text *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Filesz > 0 {
			text = p
			break
		}
	}
	if text == nil {
		return realModule{}, false
	}
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	var fns []uint64
	for _, s := range append(syms, dyn...) {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 8 && s.Value >= text.Vaddr && s.Value+s.Size <= text.Vaddr+text.Filesz {
			fns = append(fns, s.Value+s.Size/2)
		}
	}
	slices.Sort(fns)
	fns = slices.Compact(fns)
	if len(fns) < perMod {
		return realModule{}, false
	}
	pageOff := text.Off &^ (pageSize - 1)
	rm := realModule{path: path, m: Mapping{
		Limit:  (text.Off + text.Filesz - pageOff + pageSize - 1) &^ (pageSize - 1),
		Offset: pageOff,
		Path:   path,
	}}
	for i := range perMod {
		v := fns[i*len(fns)/perMod]
		rm.offs = append(rm.offs, v-text.Vaddr+text.Off-pageOff)
	}
	return rm, true
}

// mapOne maps rm into pid in slot (256 MiB each) and returns the pcs of
// its functions there.
func mapOne(r *Resolver, pid, slot int, rm realModule) []uint64 {
	base := uint64(slot+1) << 28
	m := rm.m
	m.Start, m.Limit = base, base+rm.m.Limit
	r.AddMapping(pid, m)
	pcs := make([]uint64, len(rm.offs))
	for i, o := range rm.offs {
		pcs[i] = base + o
	}
	return pcs
}

// lookupAll resolves every pc of rm mapped in pid at slot.
func lookupAll(r *Resolver, pid, slot int, rm realModule) {
	for _, pc := range mapOne(r, pid, slot, rm) {
		r.Lookup(pid, pc, nil)
	}
}

// fakePID is a pid no process has (above the kernel's pid_max), so a
// module's file is opened by its path.
const fakePID = 1 << 23

// TestBudgetEvictsAndReloads resolves functions of more real modules than
// the budget holds: after every lookup the total stays within the budget
// plus one module, modules are evicted, and evicted ones, reloaded, give
// the very frames an unbounded resolver gives.
func TestBudgetEvictsAndReloads(t *testing.T) {
	mods := realModules(t, 80, 8<<20, 6)
	self := os.Getpid()
	var selfPCs []uint64
	for _, fn := range []any{selfTestFunc, NewResolver, (*Resolver).Lookup, parseMapsLine, readRealModule} {
		selfPCs = append(selfPCs, uint64(reflect.ValueOf(fn).Pointer())+3)
	}

	// The reference: no budget.
	ref := NewResolver()
	if err := ref.LoadProc(self); err != nil {
		t.Fatal(err)
	}
	pcs := make([][]uint64, len(mods))
	for i, rm := range mods {
		pcs[i] = mapOne(ref, fakePID, i, rm)
	}
	want := map[[2]uint64][]Frame{}
	resolveAll := func(r *Resolver, check func(pid int, pc uint64, got []Frame)) {
		for i := range mods {
			for _, pc := range pcs[i] {
				check(fakePID, pc, r.Lookup(fakePID, pc, nil))
			}
		}
		for _, pc := range selfPCs {
			check(self, pc, r.Lookup(self, pc, nil))
		}
	}
	named := 0
	resolveAll(ref, func(pid int, pc uint64, got []Frame) {
		want[[2]uint64{uint64(pid), pc}] = got
		if got[len(got)-1].Func != "" && !got[len(got)-1].Unnamed {
			named++
		}
	})
	if named < len(want)*3/4 {
		t.Fatalf("only %d of %d addresses named by the reference", named, len(want))
	}
	var maxMod int64
	for _, mod := range ref.mods.byFile {
		maxMod = max(maxMod, mod.acct.n)
	}
	st := ref.MemStats()
	if st.Evictions != 0 || st.Budget != 0 {
		t.Fatalf("unbounded resolver: %+v", st)
	}
	budget := max(st.Bytes/4, 2*maxMod)
	if st.Bytes < budget*3/2 {
		t.Skipf("modules hold %d bytes, the largest %d: too few to overflow a budget", st.Bytes, maxMod)
	}
	t.Logf("reference: %d modules, %d bytes, largest %d; budget %d", st.Modules, st.Bytes, maxMod, budget)

	r := NewResolver()
	r.SetBudget(budget)
	if err := r.LoadProc(self); err != nil {
		t.Fatal(err)
	}
	for i, rm := range mods {
		mapOne(r, fakePID, i, rm)
	}
	for pass := range 2 {
		resolveAll(r, func(pid int, pc uint64, got []Frame) {
			if w := want[[2]uint64{uint64(pid), pc}]; !reflect.DeepEqual(got, w) {
				t.Errorf("pass %d: pid %d pc %#x: %+v, want %+v", pass, pid, pc, got, w)
			}
			if s := r.MemStats(); s.Bytes > budget+maxMod {
				t.Fatalf("pass %d: %d bytes held, budget %d plus the largest module %d", pass, s.Bytes, budget, maxMod)
			}
		})
		s := r.MemStats()
		t.Logf("pass %d: %+v", pass, s)
		if s.Evictions == 0 || s.Modules >= st.Modules || s.Budget != budget {
			t.Errorf("pass %d: %+v: want evictions and fewer than %d modules", pass, s, st.Modules)
		}
		if pass == 1 && s.Reloads == 0 {
			t.Errorf("second pass reloaded nothing: %+v", s)
		}
	}
	// A module dropped while its mapping lives reloads and is counted in
	// full again: the totals agree with a walk over what is cached.
	var sum int64
	for _, mod := range r.mods.byFile {
		sum += mod.acct.n
	}
	for _, mod := range r.mods.vdso {
		sum += mod.acct.n
	}
	if s := r.MemStats(); sum != s.Bytes {
		t.Errorf("modules hold %d bytes, total says %d", sum, s.Bytes)
	}
}

// TestBudgetDeadFirst: the modules no live process maps are evicted
// before a live process's, even one used longer ago.
func TestBudgetDeadFirst(t *testing.T) {
	mods := realModules(t, 6, 8<<20, 4)
	size := func(rm realModule) int64 {
		r := NewResolver()
		lookupAll(r, fakePID, 0, rm)
		return r.MemStats().Bytes
	}
	live, dead, newest := mods[0], mods[1:5], mods[5]
	var deadBytes int64
	for _, rm := range dead {
		deadBytes += size(rm)
	}
	keep := size(live) + size(newest)
	// Over the budget by the dead modules, with room for the others.
	budget := keep*8/7 + 1
	if deadBytes <= budget-keep {
		t.Skipf("dead modules hold %d bytes, too few against %d", deadBytes, keep)
	}

	// Everything loaded without a bound, then the budget set: the trim
	// it makes has the choice.
	r := NewResolver()
	livePC := mapOne(r, fakePID, 0, live)[0]
	r.Lookup(fakePID, livePC, nil) // used first: the least recent
	for i, rm := range dead {
		pid := fakePID + 1 + i
		lookupAll(r, pid, 0, rm)
		r.Exit(pid)
	}
	newestPC := mapOne(r, fakePID+100, 0, newest)[0]
	r.Lookup(fakePID+100, newestPC, nil)
	r.SetBudget(budget)
	s := r.MemStats()
	if s.Evictions == 0 || s.Bytes > budget {
		t.Fatalf("%+v, budget %d", s, budget)
	}
	for _, c := range []struct {
		pid int
		pc  uint64
	}{{fakePID, livePC}, {fakePID + 100, newestPC}} {
		if m := r.procs[c.pid].find(c.pc); m == nil || !m.loaded || m.mod == nil || m.mod.dropped {
			t.Errorf("pid %d: a live process's module was evicted before dead ones: %+v", c.pid, s)
		}
	}
}

// TestChurnBounded: 200 processes come and go, each mapping real files
// (some shared, one of its own), some of them real children read through
// /proc: afterwards no process is kept, and the bytes held stay within
// the budget throughout, whatever the number of processes.
func TestChurnBounded(t *testing.T) {
	pool := realModules(t, 48, 4<<20, 4)
	var maxMod, total int64
	for _, rm := range pool {
		r := NewResolver()
		lookupAll(r, fakePID, 0, rm)
		maxMod = max(maxMod, r.MemStats().Bytes)
		total += r.MemStats().Bytes
	}
	budget := max(total/3, maxMod*5/4)
	if total < budget*5/4 {
		t.Skipf("the pool holds %d bytes, the largest module %d: too few to overflow a budget", total, maxMod)
	}
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	// A real process maps the libc and its debug file may be larger
	// than the budget: the bound is the budget plus the largest module.
	sleeper := func(r *Resolver) (pid int, stop func()) {
		cmd := exec.Command(sleepPath, "1000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid = cmd.Process.Pid
		waitAsleep(t, pid)
		if err := r.LoadProc(pid); err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Mappings(pid) {
			if f := r.Lookup(pid, m.Start+(m.Limit-m.Start)/2, nil); f[0].Module != m.Path {
				t.Errorf("sleep %d: %+v in mapping of %s", pid, f[0], m.Path)
			}
		}
		return pid, func() { cmd.Process.Kill(); cmd.Wait() }
	}
	ref := NewResolver()
	_, stop := sleeper(ref)
	stop()
	for _, mod := range ref.mods.byFile {
		maxMod = max(maxMod, mod.acct.n)
	}

	r := NewResolver()
	r.SetBudget(budget)
	base := r.MemStats()
	var peak int64
	check := func(i int) {
		s := r.MemStats()
		peak = max(peak, s.Bytes)
		if s.Bytes > budget+maxMod {
			t.Fatalf("process %d: %d bytes held, budget %d plus the largest module %d", i, s.Bytes, budget, maxMod)
		}
	}
	for i := range 200 {
		pid := fakePID + i
		if i%40 == 0 {
			// A real process, read from /proc.
			pid, stop := sleeper(r)
			check(i)
			r.Exit(pid)
			stop()
			continue
		}
		// Three distinct shared files (1 to 4 apart in the pool), and one of its own that cannot be read, like a
		// per-run temporary binary that is gone: an empty module.
		var first uint64
		for k := range 3 {
			rm := pool[(i+k*(1+i%4))%len(pool)]
			for _, pc := range mapOne(r, pid, k, rm) {
				first = cmp.Or(first, pc)
				if f := r.Lookup(pid, pc, nil); f[len(f)-1].Module != rm.path {
					t.Fatalf("process %d: %+v, want a frame of %s", i, f, rm.path)
				}
			}
		}
		own := fmt.Sprintf("/nonexistent/cctop-churn/%d/a.out", i)
		r.AddMapping(pid, Mapping{Start: 0x7000_0000_0000, Limit: 0x7000_0000_1000, Path: own})
		if f := r.Lookup(pid, 0x7000_0000_0010, nil); f[0].Func != "[a.out+0x10]" {
			t.Fatalf("process %d: %+v in its own file", i, f[0])
		}
		if i%10 == 1 {
			r.Fork(pid, pid+100000)
			r.Lookup(pid+100000, first, nil)
			r.Exit(pid + 100000)
		}
		check(i)
		r.Exit(pid)
	}
	s := r.MemStats()
	t.Logf("after 200 processes: %+v, peak %d, budget %d", s, peak, budget)
	if s.Processes != base.Processes {
		t.Errorf("%d processes kept after all exited, %d before", s.Processes, base.Processes)
	}
	if s.Evictions == 0 {
		t.Errorf("200 processes' modules held without eviction: %+v, budget %d", s, budget)
	}
	if s.Modules >= 100 {
		t.Errorf("%d modules kept after 200 processes, each with a file of its own", s.Modules)
	}
}

// TestInternedPathsBounded: the interned paths of processes that exited
// are let go, so a churn of per-run binaries does not grow them.
func TestInternedPathsBounded(t *testing.T) {
	r := NewResolver()
	r.AddMapping(1, mp(0x1000, 0x2000, 0, "/usr/lib/kept.so"))
	for i := range 5000 {
		pid := 1000 + i
		r.AddMapping(pid, mp(0x1000, 0x2000, 0, fmt.Sprintf("/tmp/run-%d/a.out", i)))
		r.Exit(pid)
		if len(r.paths) > 2*r.livePaths+1024+1 {
			t.Fatalf("after %d processes: %d paths interned, %d live", i+1, len(r.paths), r.livePaths)
		}
	}
	if got := r.Mappings(1); len(got) != 1 || got[0].Path != "/usr/lib/kept.so" {
		t.Errorf("live mapping after rebuilds: %+v", got)
	}
	if r.Processes() != 1 {
		t.Errorf("%d processes", r.Processes())
	}
}

// waitAsleep waits until process pid sleeps, its libraries mapped: right
// after exec only the loader is.
func waitAsleep(t *testing.T, pid int) {
	t.Helper()
	for range 3000 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// pid (comm) state ...: comm may hold spaces, not ')'.
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && b[i+2] == 'S' {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never slept", pid)
}

// TestLookupCachedNoAllocBudget: under a budget that holds the modules, a
// cached lookup still allocates nothing and evicts nothing.
func TestLookupCachedNoAllocBudget(t *testing.T) {
	r, pid, pcs := cachedSetup(t)
	r.SetBudget(r.MemStats().Bytes * 2)
	dst := make([]Frame, 0, 16)
	allocs := testing.AllocsPerRun(100, func() {
		for _, pc := range pcs {
			dst = r.Lookup(pid, pc, dst[:0])
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per cached lookup round", allocs)
	}
	if s := r.MemStats(); s.Evictions != 0 || s.Reloads != 0 {
		t.Errorf("%+v", s)
	}
}

// TestDropUnmapped: after a process exits, DropUnmapped evicts the modules
// only it mapped and keeps those a live process maps; both still resolve.
func TestDropUnmapped(t *testing.T) {
	live, gone := startSleep(t), startSleep(t)
	r := NewResolver()
	for _, pid := range []int{live, gone} {
		if err := r.LoadProc(pid); err != nil {
			t.Fatal(err)
		}
	}
	frames := func(pid int) []Frame {
		var out []Frame
		for _, m := range r.Mappings(pid) {
			if strings.HasPrefix(m.Path, "/") {
				out = append(out, r.Lookup(pid, m.Start+(m.Limit-m.Start)/2, nil)...)
			}
		}
		return out
	}
	before := frames(live)
	frames(gone)
	loaded := r.MemStats().Modules
	if n := r.DropUnmapped(); n != 0 {
		t.Errorf("both processes live: %d modules dropped", n)
	}
	r.Exit(gone) // the same binaries: nothing is only its
	if n := r.DropUnmapped(); n != 0 {
		t.Errorf("a process mapping the same files as a live one exited: %d modules dropped", n)
	}
	r.Exit(live)
	// The vdso images stay (a reload could not read a gone process's).
	if n := r.DropUnmapped(); n == 0 || n != loaded-len(r.mods.vdso) || r.MemStats().Modules != len(r.mods.vdso) {
		t.Errorf("no process left: %d dropped, %+v (had %d modules)", n, r.MemStats(), loaded)
	}
	if err := r.LoadProc(live); err != nil {
		t.Fatal(err)
	}
	if after := frames(live); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after the drop, frames %v; before %v", after, before)
	}
	// Used in the window that ends, gone at its cut: kept one more
	// window, then dropped.
	r.Exit(live)
	if n := r.DropUnmapped(); n != 0 {
		t.Errorf("modules used since the last drop: %d dropped", n)
	}
	if n := r.DropUnmapped(); n == 0 || r.MemStats().Modules != len(r.mods.vdso) {
		t.Errorf("a window later: %d dropped, %+v", n, r.MemStats())
	}
}
