package symbol

import (
	"runtime"
	"sync/atomic"
)

// Loading a module reads its symbol tables, its CFI and its debug info:
// 2 ms for a small library, 80-150 ms for libc with its debug file, seconds
// for a library the size of libtorch's. Done where a sample first needs
// it, that is time the goroutine reading the samples spends not reading
// them, and on a host with many libraries the loads come one after the
// other. With deferred lookups (SetDeferred), a lookup that needs a module
// not loaded yet starts loading it on another goroutine, answers without
// it and says so (TakeMissed); the caller keeps the sample and asks again
// once the load is in (Collect). Loads run side by side, a few at a time.
//
// A load touches nothing of the Resolver: loadFile builds a module from
// the file alone, and the Resolver's goroutine puts it in the cache when
// it collects it, so the Resolver stays single-goroutine.

// loading is one module being read on another goroutine.
type loading struct {
	pid    int
	m      Mapping
	lines  bool
	reload bool
	mod    *module       // set before ready is closed
	ready  chan struct{} // closed when mod is set
}

// loads is the Resolver's loads in flight.
type loads struct {
	inflight map[fileKey]*loading
	// deferred: lookups start loads and answer without the module
	// (SetDeferred); missed: one did since the last TakeMissed.
	deferred, missed bool
	// slots bounds how many loads run at once: each holds a file's
	// tables in memory while it parses them.
	slots chan struct{}
	// onLoaded is called, from the loading goroutine, when a load ends.
	onLoaded atomic.Pointer[func()]
	// load reads a module (loadFile; tests slow it down).
	load func(pid int, m *Mapping, lines bool) *module
	// installed counts the loads put in the cache (LoadsInstalled).
	installed uint64
	// kernel is the kernel's symbol table being read (/proc/kallsyms
	// takes the kernel 45 ms to format), nil when none is.
	kernel *kernelLoading
}

// kernelLoading is the kernel's symbol table being read.
type kernelLoading struct {
	t     *kallsyms     // set before ready is closed
	ready chan struct{} // closed when t is set
}

// maxParallelLoads bounds the loads in flight at once.
func maxParallelLoads() int { return max(1, min(runtime.NumCPU()/2, 8)) }

func newLoads() loads {
	return loads{inflight: map[fileKey]*loading{}, slots: make(chan struct{}, maxParallelLoads()), load: loadFile}
}

// SetDeferred turns deferred lookups on or off. While on, Lookup, the
// unwinder and the code checks do not wait for a module that is not
// loaded: they start its load and go on without it, and TakeMissed
// reports that their answer lacked it. While off, a lookup that needs a
// module in flight waits for it.
func (r *Resolver) SetDeferred(on bool) { r.loads.deferred = on }

// TakeMissed reports whether a deferred lookup since the last call went
// without a module that is still loading, and starts over.
func (r *Resolver) TakeMissed() bool {
	m := r.loads.missed
	r.loads.missed = false
	return m
}

// Loading is how many modules (the kernel's table counted as one) are
// being loaded on other goroutines.
func (r *Resolver) Loading() int {
	n := len(r.loads.inflight)
	if r.loads.kernel != nil {
		n++
	}
	return n
}

// LoadsInstalled counts the background loads put in the cache so far: a
// deferred lookup that missed cannot come out otherwise before it moves.
func (r *Resolver) LoadsInstalled() uint64 { return r.loads.installed }

// OnLoaded sets f to be called, on the loading goroutine, whenever a
// background load ends: a reader that waits on its own can then come
// back for Collect. f must be safe to call from any goroutine.
func (r *Resolver) OnLoaded(f func()) { r.loads.onLoaded.Store(&f) }

// Collect puts the modules whose loads have ended in the cache, without
// waiting, and returns how many loads are still in flight.
func (r *Resolver) Collect() int {
	for key, ld := range r.loads.inflight {
		select {
		case <-ld.ready:
			r.install(key, ld)
		default:
		}
	}
	if k := r.loads.kernel; k != nil {
		select {
		case <-k.ready:
			r.installKernel()
		default:
		}
	}
	return r.Loading()
}

// WaitLoads waits for every load in flight and puts the modules in the
// cache.
func (r *Resolver) WaitLoads() {
	for key, ld := range r.loads.inflight {
		<-ld.ready
		r.install(key, ld)
	}
	if k := r.loads.kernel; k != nil {
		<-k.ready
		r.installKernel()
	}
}

// kernelTable is the kernel's symbol table, read now, or, deferred, read
// on another goroutine (nil until it is in).
func (r *Resolver) kernelTable() *kallsyms {
	if r.kernel != nil {
		return r.kernel
	}
	k := r.loads.kernel
	if k == nil {
		if !r.loads.deferred {
			r.kernel = readKallsyms(kallsymsPath)
			return r.kernel
		}
		k = &kernelLoading{ready: make(chan struct{})}
		r.loads.kernel = k
		lds := &r.loads
		go func() {
			k.t = readKallsyms(kallsymsPath)
			close(k.ready)
			lds.ended()
		}()
	}
	if !r.settle(k.ready) {
		return nil
	}
	r.installKernel()
	return r.kernel
}

// settle reports whether the load whose ready channel is given has ended,
// waiting for it unless lookups are deferred; a deferred lookup that finds
// it running goes without it, and is counted missed.
func (r *Resolver) settle(ready chan struct{}) bool {
	select {
	case <-ready:
		return true
	default:
	}
	if r.loads.deferred {
		r.loads.missed = true
		return false
	}
	<-ready
	return true
}

// ended tells whoever asked (OnLoaded) that a load has ended. From the
// loading goroutine.
func (l *loads) ended() {
	if f := l.onLoaded.Load(); f != nil {
		(*f)()
	}
}

// installKernel takes the kernel's table from its finished load.
func (r *Resolver) installKernel() {
	r.loads.installed++
	if r.kernel == nil {
		r.kernel = r.loads.kernel.t
	}
	r.loads.kernel = nil
}

// startLoad reads the file behind m on another goroutine.
func (r *Resolver) startLoad(pid int, m *Mapping, key fileKey, reload bool) {
	ld := &loading{pid: pid, m: *m, lines: !r.mods.namesOnly, reload: reload, ready: make(chan struct{})}
	r.loads.inflight[key] = ld
	load, slots, lds := r.loads.load, r.loads.slots, &r.loads
	go func() {
		slots <- struct{}{}
		ld.mod = load(ld.pid, &ld.m, ld.lines)
		<-slots
		close(ld.ready)
		lds.ended()
	}()
}

// install puts a finished load's module in the cache.
func (r *Resolver) install(key fileKey, ld *loading) {
	delete(r.loads.inflight, key)
	r.loads.installed++
	if _, ok := r.mods.byFile[key]; ok {
		return // loaded meanwhile by a lookup that could not wait
	}
	r.insertLoaded(key, &ld.m, ld.mod, ld.reload)
	// What was answered without the module may be answered with it now.
	r.gen++
}

// waitLoad waits for the load of key, in flight, and installs it.
func (r *Resolver) waitLoad(key fileKey) *module {
	ld := r.loads.inflight[key]
	<-ld.ready
	r.install(key, ld)
	return r.mods.byFile[key]
}
