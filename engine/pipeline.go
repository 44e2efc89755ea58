package engine

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/ianlancetaylor/demangle"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// builder turns sampler batches into a calling context tree. It owns the
// tree and the symbol resolver (the session owns the thread table); one
// goroutine uses it.
type builder struct {
	res      *symbol.Resolver
	tree     *cct.Tree
	funcs    map[funcKey]cct.FuncID
	funcRefs *[funcSlots]funcRef // funcs by the strings' addresses
	// reused per sample
	frames    []symbol.Frame
	stack     []cct.Frame
	pcs       []uint64 // user stack unwound from a stack copy
	merged    []uint64
	alt       []symbol.Frame
	userDepth int  // user frames of the stack being built, for classify
	copyStop  bool // the unwound stack ended at the end of its stack copy
	dwarf     bool // --unwind dwarf: stack copies are meant to hold whole stacks
	// copies is the learning plan of --unwind auto (copyplan.go), nil
	// otherwise: which threads' samples carry the large copy; smallCut
	// says the sample being built was cut where its small copy fell short.
	copies      *copyPlan
	smallCut    bool
	copySample  copySample     // what the sample being built tells the plan
	learnFrames []symbol.Frame // scratch of learn's lookups
	rooted      bool           // the unwound stack ended where unwind tables mark the outermost frame
	// stop is why the unwinder ended the stack being built, when haveStop:
	// its outermost frame is the unwinder's, not the kernel chain's.
	stop     symbol.UnwindStop
	haveStop bool

	samples    uint64
	stackBytes uint64 // user stack bytes the samples carried (the kernel's dyn_size)
	unwound    completeness
	firstTime  uint64
	lastTime   uint64
	// probeSamples are the samples whose kernel frames were the handling
	// of a counting probe, folded into one cct.ProbesName frame.
	probeSamples uint64
	// probe: the sample finishStack last built was one of those
	probe bool

	// weights, when set, logs every sample for the call estimates.
	weights *weighing
	// baseline is the self weights a person took as the baseline to
	// compare against (b in the TUI), on this tree's nodes; a reset
	// starts a tree without one.
	baseline []float64

	// maxNodes caps the tree (0: no cap): past it the cold contexts fold
	// into [other], and per-node data kept with the tree (the sample
	// log, exact calls, the baseline) is moved onto the folded tree.
	maxNodes int
	folds    int
	folded   uint64 // contexts folded away, in all folds
	// reshaped counts the passes that gave the nodes new ids (folds, JIT
	// renames: remapNodes): per-node data of an older count is stale.
	reshaped int
	// jit names JIT code after the fact: a placeholder function per pc
	// that no perf map named when sampled, renamed when one does
	// (jitnames.go).
	jit jitNames
	// entries are the (module path, ELF address) of functions under a
	// counting uprobe: a clock sample that lands on one of them has its
	// caller in the stack word, not in the frame-pointer chain.
	entries map[entryKey]bool
	// branches counts the runs of the samples' branch stacks, where the
	// PMU records them: the basic-block profile of flow correction.
	branches branchProfile
	// off accounts the threads' time off the CPU, when the session
	// records context switches (nil otherwise); clock: the samples'
	// periods are ns, so that on-CPU time adds to it as wall time.
	off   *offCPU
	clock bool
	// pids is the process of each thread sampled, in a system-wide
	// session, where a profile is cut by process: the session forgets a
	// thread at its exit, its samples in the tree stay (nil otherwise).
	pids map[uint32]uint32
	// proc is the process level of a profile of several (processes.go).
	proc procLevel
	// pyPending: the last sample refused waits for its Python stack's next
	// read, not for a module (pyStacks.pending).
	pyPending bool

	// deferLoads: a sample that needs a module not loaded yet waits, with
	// the records after it, while the module loads on another goroutine
	// (parking.go). Not while time off the CPU is accounted (b.off),
	// which takes records in the order they come.
	deferLoads bool
	parked     parking
	// jitSeen counts the samples that run JIT code, per process
	// (jitregions.go).
	jitSeen jitRegions
	// longest is the most time one batch took, in ns: while the builder
	// works on one, the reader's queue fills.
	longest uint64
	// py puts the Python frames read from CPython interpreters into the
	// stacks (pystacks.go); nil: not read. pyTorn: the stack being built
	// did not match its Python stack.
	py     *pyStacks
	pyTorn bool
}

type entryKey struct {
	module string
	addr   uint64
}

type funcKey struct{ module, name string }

// funcRef is a funcKey by its strings' addresses: the symbol tables hand
// out the same strings for a function every time, and a slot picked by a
// hash of two pointers is a fraction of hashing a path and a name in a
// map (a fifth of ingest). The slot holds the pointers, checked on each
// hit, and keeps the strings alive, so an address never comes to stand
// for another name.
type funcRef struct {
	module, name unsafe.Pointer
	ml, nl       int
	id           cct.FuncID
}

// funcSlots is the size of the direct-mapped cache of funcRefs: a
// reference whose slot is taken takes it over.
const funcSlots = 1 << 12

// slot is the reference's place in the cache.
func (r *funcRef) slot() uint64 {
	h := uint64(uintptr(r.module))*0x9e3779b97f4a7c15 ^ uint64(uintptr(r.name))*0xc2b2ae3d27d4eb4f ^ uint64(r.nl)
	return h >> (64 - 12)
}

func newBuilder(res *symbol.Resolver) *builder {
	return &builder{
		res:   res,
		tree:  cct.New(),
		funcs: map[funcKey]cct.FuncID{}, funcRefs: new([funcSlots]funcRef),
	}
}

// handle applies one batch: the records that change a process's mappings in
// order, samples into the tree. Records wait behind a sample whose modules
// are loading (parking.go), in order, and go in once they are loaded.
func (b *builder) handle(batch *sampler.Batch) {
	start := sampler.MonoNow()
	defer func() { b.longest = max(b.longest, sampler.MonoNow()-start) }()
	if len(b.parked.recs) > 0 {
		b.replay(false)
	}
	for i := range batch.Records {
		r := &batch.Records[i]
		if len(b.parked.recs) > 0 || !b.apply(r) {
			b.park(r)
		}
	}
	b.jitAfterBatch(start)
	if b.res.RestDebugInfo(time.Now()) > 0 {
		// The sections are the run's largest garbage at once (libc's
		// debug info, 28 MB): collected now, the heap's next goal is set
		// from what stays, not from what was loaded.
		debug.FreeOSMemory()
	}
}

// apply takes one record into the profile. It reports false, having
// changed nothing, for a sample that needs a module still loading.
func (b *builder) apply(r *sampler.Record) bool {
	switch r.Kind {
	case sampler.KindSample:
		return b.sample(r)
	case sampler.KindComm:
		if r.Exec() {
			b.forgetProcess(r.PID)
			b.retireJIT(r.PID)
			b.res.Exec(int(r.PID))
			b.py.exec(r.PID)
		}
		b.noteComm(r.PID, r.TID, r.Comm)
	case sampler.KindMmap:
		b.res.AddMapping(int(r.PID), symbol.Mapping{
			Start: r.Addr, Limit: r.Addr + r.Len, Offset: r.PgOff, Path: r.Filename,
			Major: r.Major, Minor: r.Minor, Inode: r.Inode, BuildID: r.BuildID,
		})
	case sampler.KindFork:
		if r.PID != r.PPID {
			b.res.Fork(int(r.PPID), int(r.PID))
		}
		b.py.fork(r)
		if b.off != nil {
			b.forkedThread(r)
		}
	case sampler.KindNewProcess:
		// First seen by a system-wide session: the kernel
		// reported its mappings before, if ever. A process gone
		// already, or refused, keeps its frames unnamed.
		b.res.LoadProc(int(r.PID))
		if b.py != nil {
			// An interpreter running before the session: its Python
			// frames are read from its first sample on.
			b.py.add(r.PID)
		}
	case sampler.KindGone:
		b.forgetProcess(r.PID)
		b.retireJIT(r.PID)
		b.res.Exit(int(r.PID))
	case sampler.KindSwitch:
		if b.off != nil {
			b.switched(r)
		}
	case sampler.KindExit:
		if r.PID == r.TID {
			b.jitLeaderExited(r.PID)
		}
		b.copies.forget(r.TID)
		if b.off != nil {
			b.exitedThread(r)
		}
	}
	return true
}

// atProbe reports whether a sample's first user frame sits on a counting
// probe, where the frame-pointer chain does not have the caller yet, or one
// byte past it: int3 is a trap, so a sample taken while the probe is handled
// sees that IP, as does one taken after the probed PUSHQ BP ran (or was
// emulated). Record.CallerAtEntry tells the two stack layouts apart.
func (b *builder) atProbe(f symbol.Frame) bool {
	return b.entries[entryKey{f.Module, f.Addr}] || b.entries[entryKey{f.Module, f.Addr - 1}]
}

// userFrames appends the symbolized frames of a frame-pointer user chain.
func (b *builder) userFrames(r *sampler.Record, user []uint64, dst []symbol.Frame) []symbol.Frame {
	b.userDepth = len(user)
	for i, pc := range user {
		if i > 0 {
			pc--
		}
		n := len(dst)
		dst = b.res.Lookup(int(r.PID), pc, dst)
		if i == 0 && len(b.entries) > 0 && len(dst) > n && b.atProbe(dst[n]) {
			if ret, ok := r.CallerAtEntry(); ok && (len(user) < 2 || user[1] != ret) {
				dst = b.res.Lookup(int(r.PID), ret-1, dst)
			}
		}
	}
	return dst
}

// sample takes one sample into the tree. With deferred loads it reports
// false, and changes nothing, when a module the stack needs is loading.
func (b *builder) sample(r *sampler.Record) bool {
	if r.OffCPU {
		if b.off != nil {
			b.offSample(r)
		}
		return true
	}
	deferred := b.deferLoads && b.off == nil
	b.pyPending = deferred && b.py.pending(r)
	if b.pyPending {
		// Its Python stack is read after it: with the next batch.
		return false
	}
	nk, folded := b.frameStack(r, deferred)
	if deferred && b.res.TakeMissed() {
		return false
	}
	b.mergePython(r, nk)
	if b.firstTime == 0 {
		b.firstTime = r.Time
	}
	b.lastTime = r.Time
	b.samples++
	b.stackBytes += uint64(len(r.Stack))
	if len(r.Branches) > 0 {
		b.branches.add(r)
	}
	b.finishStack(nk, folded)
	b.addJIT(r.PID, b.frames[nk:])
	m := cct.Metrics{Samples: 1, Time: int64(r.Period)}
	if b.off != nil && b.clock {
		// On one time scale with the time off the CPU.
		m.Wall = m.Time
	}
	node := b.tree.Add(b.stack, r.TID, m)
	if b.pids != nil {
		if _, ok := b.pids[r.TID]; !ok {
			b.pids[r.TID] = r.PID
		}
	}
	if b.off != nil {
		b.off.onCPU(r.TID, node)
	}
	if b.weights != nil {
		// cctop's own probe handling weighs nothing in any corrected
		// column: its calls would otherwise make the probes the
		// program's hottest code (issue 29).
		logged := node
		if b.probe {
			logged = -1
		}
		b.weights.add(r, logged)
	}
	b.foldIfFull()
	return true
}

// foldIfFull folds the tree when it has grown past its cap.
func (b *builder) foldIfFull() {
	if b.maxNodes > 0 && b.tree.Len() > b.maxNodes {
		b.fold()
	}
}

// buildStack symbolizes and unwinds r's stack into b.frames and the tree's
// frames into b.stack, and counts its completeness. It returns how many of
// b.frames are the kernel's.
func (b *builder) buildStack(r *sampler.Record) int {
	nk, folded := b.frameStack(r, false)
	b.mergePython(r, nk)
	b.finishStack(nk, folded)
	return nk
}

// frameStack symbolizes and unwinds r's stack into b.frames, changing
// nothing else the profile keeps: with deferred, a module still loading
// leaves it short, and the resolver's TakeMissed says so. It returns how
// many of b.frames are the kernel's, and whether they were the handling of
// a counting probe, folded into one frame.
func (b *builder) frameStack(r *sampler.Record, deferred bool) (nk int, folded bool) {
	if deferred {
		b.res.SetDeferred(true)
		defer b.res.SetDeferred(false)
	}
	b.res.SetTime(r.Time) // JIT code a jitdump names is named as of then
	b.proc.pid = r.PID
	kernel, user := sampler.SplitChain(r.Chain)
	b.frames = b.frames[:0]
	b.jit.pid = r.PID // whose JIT code intern names
	// The first address of each part is where the thread was interrupted;
	// the others are return addresses, which point after their call
	// instruction: step back one byte to land inside it.
	for i, pc := range kernel {
		if i > 0 {
			pc--
		}
		b.frames = b.res.LookupKernel(pc, b.frames)
	}
	// The kernel handling cctop's own counting probes is the profiler's
	// cost, not the program's: one frame under the probed function.
	nk, folded = b.foldProbes(len(b.frames))
	b.copyStop, b.rooted, b.haveStop, b.smallCut = false, false, false, false
	if len(r.Stack) > 0 && len(r.Regs) > 0 {
		b.frames = b.unwindUser(r, user, nk)
	} else {
		b.frames = b.userFrames(r, user, b.frames)
	}
	if len(kernel) == 0 && len(user) == 0 && len(b.frames) == 0 && r.IP != 0 {
		b.frames = b.res.Lookup(int(r.PID), r.IP, b.frames)
	}
	return nk, folded
}

// finishStack builds the tree's frames of the stack frameStack left in
// b.frames into b.stack, and counts its completeness.
func (b *builder) finishStack(nk int, folded bool) {
	b.probe = folded
	if folded {
		b.probeSamples++
	}
	b.stack = b.stack[:0]
	for _, f := range b.frames {
		b.stack = append(b.stack, cct.Frame{Func: b.intern(f), Addr: f.Addr, Line: f.Line, Inlined: f.Inlined})
	}
	b.foldXOL(nk)
	// A stack that stops short of a thread's entry goes under [truncated]
	// (design §5): its outermost frames are missing, and at the top level
	// it would pass for a root of its own.
	reason := classify(b.frames, b.userDepth)
	switch {
	case reason == "" || b.rooted:
		reason = ""
	case b.copyStop:
		reason = truncStackCopy
	case b.smallCut:
		reason = truncSmallCopy
	}
	b.unwound.add(reason)
	if reason != "" {
		b.unwound.addStop(stopModule(b.frames[nk:]), b.stopWhy(reason))
	}
	if reason != "" {
		b.stack = append(b.stack, cct.Frame{Func: b.tree.Intern(cct.Func{Name: cct.TruncatedName})})
	}
	if b.pyTorn {
		b.stack = append(b.stack, b.tornFrame())
	}
	if f, ok := b.processFrame(); ok {
		b.stack = append(b.stack, f)
	}
}

// bounds says what the memory bounds cost the profile, a line each: cold
// contexts folded into [other], and samples gone from the log.
func (b *builder) bounds() []string {
	var out []string
	if b.folds > 0 {
		out = append(out, fmt.Sprintf("tree capped at %d contexts (--max-nodes): %d cold ones folded into %s, %.1f%% of samples",
			b.maxNodes, b.folded, cct.OtherName, b.otherShare()))
	}
	if w := b.weights; w != nil && w.log.Dropped() > 0 {
		out = append(out, fmt.Sprintf("sample log capped at %d (--max-log): call estimates cover the newest %d of %d samples",
			w.log.Cap(), w.log.Len(), uint64(w.log.Len())+w.log.Dropped()))
	}
	return out
}

// otherShare is the percentage of samples in [other] nodes.
func (b *builder) otherShare() float64 {
	total := b.tree.Total().Samples
	if total == 0 {
		return 0
	}
	return 100 * float64(b.tree.OtherSamples()) / float64(total)
}

// fold brings the tree back under its cap. It folds down to three quarters
// of the cap, so that new contexts have room to show whether they are hot
// before the next fold, and folds are rare: each costs a pass over the tree
// and the sample log.
func (b *builder) fold() {
	remap, n := b.tree.Fold(b.maxNodes - b.maxNodes/4)
	if remap == nil {
		return
	}
	b.folds++
	b.folded += uint64(n)
	b.remapNodes(remap)
}

// remapNodes moves what is kept per node besides the tree (the sample log,
// exact calls, the baseline, the threads off the CPU) onto the nodes'
// new ids, remap[old] the new id of each old node: after a fold, or a JIT
// rename's merge (renameJIT).
func (b *builder) remapNodes(remap []cct.NodeID) {
	b.reshaped++
	if w := b.weights; w != nil {
		w.log.Remap(func(n int32) int32 { return int32(remap[n]) })
		if len(w.exact) > 0 {
			w.exact = cct.Remap(w.exact, remap, b.tree.Len())
		}
	}
	if b.baseline != nil {
		b.baseline = cct.Remap(b.baseline, remap, b.tree.Len())
	}
	if o := b.off; o != nil {
		if o.unseen >= 0 {
			o.unseen = remap[o.unseen]
		}
		re := func(n cct.NodeID) cct.NodeID {
			if n >= 0 {
				return remap[n]
			}
			return n
		}
		for _, t := range o.threads {
			t.node, t.pending, t.sampled = re(t.node), re(t.pending), re(t.sampled)
			t.cpuNode, t.preemptNode, t.preemptOf = re(t.cpuNode), re(t.preemptNode), re(t.preemptOf)
			for i := range t.shares {
				t.shares[i].node = re(t.shares[i].node)
			}
		}
	}
}

// intern maps a symbolized frame to a function of the tree. The symbol
// layer names every address of a mapped file, "[libfoo.so+0x1a2b0]" where
// no symbol does; what comes unnamed is code with no file to read, grouped
// per mapping ("[vdso]", "[heap]", "[memfd:jit]") or, outside any, as
// "[unknown]", rather than one node per address. JIT code that no perf map
// names yet has a placeholder per pc, shown as its mapping's name, until
// one does (jitnames.go).
func (b *builder) intern(f symbol.Frame) cct.FuncID {
	if f.JIT {
		return b.jitFunc(f)
	}
	ref := funcRef{module: unsafe.Pointer(unsafe.StringData(f.Module)), name: unsafe.Pointer(unsafe.StringData(f.Func)), ml: len(f.Module), nl: len(f.Func)}
	e := &b.funcRefs[ref.slot()]
	if e.name == ref.name && e.module == ref.module && e.ml == ref.ml && e.nl == ref.nl && e.name != nil {
		return e.id
	}
	ref.id = b.internName(f)
	if !f.Unnamed && ref.name != nil { // an unnamed frame's name is made anew each time
		*e = ref
	}
	return ref.id
}

// internName is intern by the strings' contents.
func (b *builder) internName(f symbol.Frame) cct.FuncID {
	k := funcKey{f.Module, f.Func}
	if id, ok := b.funcs[k]; ok {
		return id
	}
	name := f.Func
	if name == "" {
		switch {
		case f.Module == "":
			name = "[unknown]"
		case f.Module[0] == '[':
			name = f.Module
		default:
			name = "[" + filepath.Base(f.Module) + "]"
		}
	}
	if pf, ok := pyFunc(name, f.Module); ok {
		id := b.tree.Intern(pf)
		b.funcs[k] = id
		return id
	}
	var sys string
	// A PLT stub is named after the function it jumps to, "_ZdlPv@plt":
	// demangled, it keeps the suffix, as perf shows it.
	stem, plt := strings.CutSuffix(name, "@plt")
	if d := demangle.Filter(stem); d != stem {
		// C++ (Itanium) and Rust (legacy and v0) names are shown
		// demangled; the linkage name stays for probes and pprof.
		sys, name = name, d
		if plt {
			name += "@plt"
		}
	}
	id := b.tree.Intern(cct.Func{Name: name, Module: f.Module, File: f.File, System: sys})
	b.funcs[k] = id
	return id
}
