package symbol

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"strconv"
)

// Mapping is one executable mapping of a process, from /proc/PID/maps or a MMAP2 record.
type Mapping struct {
	Start, Limit uint64 // [Start, Limit) in the process's address space
	Offset       uint64 // file offset mapped at Start
	Path         string // file path as the kernel reports it; "[vdso]" for the vdso
	Major, Minor uint32 // device (0 when unknown)
	Inode        uint64 // 0 when unknown
	BuildID      []byte // from MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID, else nil
}

// Frame is one logical frame of a stack.
type Frame struct {
	Func    string // symbol name as in the binary (mangled; the pipeline demangles); "" if unknown
	File    string // source file, when known (Go pclntab, DWARF)
	Line    int    // source line, when known
	Module  string // mapping path, "[vdso]", "[kernel.kallsyms]", or "" if no mapping covers pc
	Addr    uint64 // module-relative address (ELF virtual address of pc in Module); pc itself if no module
	Inlined bool   // inlined into the next (outer) frame, which holds its code
	// Unnamed: no symbol covers the address, and Func is the placeholder
	// "[module+0xOFFSET]" (unnamed.go).
	Unnamed bool
	// JIT: code in anonymous memory that no perf map names yet; Func is
	// empty and Addr is the pc. A later read of the process's perf map
	// may name it (PerfMap).
	JIT bool
}

// Resolver maps (pid, pc) to frames. It is NOT safe for concurrent use: it is
// owned by the goroutine that reads the sample stream, which is also the one
// that sees MMAP2/FORK/EXEC/EXIT, so no locking is needed on the hot path.
// Modules may be read on other goroutines (loads.go), which hand them over
// whole.
type Resolver struct {
	procs map[int]*proc
	// perfMapPIDs are the processes whose perf maps were looked for, in
	// order, bounded (PerfMapPIDs).
	perfMapPIDs []int
	mods        moduleCache
	paths       map[string]string // interned mapping paths: thousands of processes map the same libraries
	// livePaths is how many paths the live processes mapped when paths
	// was last rebuilt from them (reintern).
	livePaths int

	kernel *kallsyms // nil until the first LookupKernel

	stackUsed int // StackUsed's

	// gen changes with anything that may change what Lookup answers for
	// a pid and pc it answered before (Generation).
	gen     uint64
	looks   lookupCache // Lookup's answers by pid and pc, each of a generation
	steps   stepCache   // CFI rules by pid and pc, each of a generation
	fpSteps fpStepCache // FrameStep's answers by pid and pc, each of a generation

	loads loads // modules being loaded on other goroutines (loads.go)

	dumps jitDumps // the sample's time, the problems of jitdumps read (jitdump.go)
}

// Generation changes whenever an answer of Lookup may no longer hold: a
// process's mappings changed (mmap, exec, exit: its pid may come back as
// another process), or modules were dropped. The caches by pid and pc
// take their entries of older generations for empty slots.
func (r *Resolver) Generation() uint64 { return r.gen }

// proc is the address space of one process as far as symbolization cares.
type proc struct {
	maps []mapping // sorted by Start, non-overlapping
	// jit is the process's perf map, opened on the first lookup in
	// anonymous code. A forked child starts without one: it writes its
	// own file, under its own pid, if it compiles anything.
	jit *perfMap
	// dump is the process's jitdump (jitdump.go), read from when its
	// marker mapping is seen; nil without one.
	dump *jitDump
}

type mapping struct {
	Mapping
	mod    *module // nil for mappings with nothing to read (anonymous, [vsyscall], ...)
	loaded bool    // mod has been resolved (possibly to nil)
	anon   bool    // anonCode(Path): JIT code a perf map may name
	// mem caches code read from the process's memory for the unwinder's
	// checks, where there is no file (memcode.go); a mapping made anew
	// over the range starts without it.
	mem *memCode
}

func newMapping(m Mapping) mapping { return mapping{Mapping: m, anon: anonCode(m.Path)} }

// NewResolver returns an empty Resolver.
func NewResolver() *Resolver {
	return &Resolver{
		procs: make(map[int]*proc),
		mods:  newModuleCache(),
		paths: make(map[string]string),
		loads: newLoads(),
	}
}

// LoadProc replaces what is known of pid's address space with the executable
// mappings of /proc/PID/maps. The vdso image is read right away, while the
// process is surely alive; files are opened on first lookup.
func (r *Resolver) LoadProc(pid int) error {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return err
	}
	defer f.Close()
	var ms []Mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m, exec, ok := parseMapsLine(sc.Text())
		if ok && exec {
			ms = append(ms, m)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	p := &proc{}
	for _, m := range ms {
		m.Path = r.intern(m.Path)
		// The kernel lists mappings sorted and disjoint; inserting keeps
		// that invariant even if it ever does not.
		p.maps = insertMapping(p.maps, newMapping(m))
	}
	for i := range p.maps {
		if m := &p.maps[i]; m.Path == vdsoPath {
			m.mod, m.loaded = r.vdsoModule(pid, &m.Mapping), true
		}
	}
	r.loadJITDumps(pid, r.procs[pid], p)
	r.procs[pid] = p
	r.gen++
	return nil
}

// AddMapping records a mapping from a MMAP2 record. Like mmap(MAP_FIXED), it
// replaces whatever pid had mapped over [m.Start, m.Limit): overlapped
// mappings are trimmed or split, keeping their file offsets consistent.
// Only executable mappings should be passed.
func (r *Resolver) AddMapping(pid int, m Mapping) {
	if m.Limit <= m.Start {
		return
	}
	m.Path = r.intern(m.Path)
	// The caller's BuildID usually points into a ring buffer that is reused.
	m.BuildID = bytes.Clone(m.BuildID)
	p := r.procs[pid]
	if p == nil {
		p = &proc{}
		r.procs[pid] = p
	}
	p.maps = insertMapping(p.maps, newMapping(m))
	r.noteJITDump(pid, p, m)
	r.gen++
}

// Fork gives pid a copy of ppid's mappings; modules stay shared.
func (r *Resolver) Fork(ppid, pid int) {
	if ppid == pid {
		return
	}
	p := &proc{}
	if pp := r.procs[ppid]; pp != nil {
		p.maps = slices.Clone(pp.maps)
	}
	r.procs[pid] = p
}

// Exec drops pid's mappings: after exec the old image is gone and the new
// one arrives as MMAP2 records.
func (r *Resolver) Exec(pid int) {
	r.gen++
	r.retireJITDump(pid)
	if p := r.procs[pid]; p != nil {
		// The new image's JIT, if any, starts a new perf map; the
		// old one's names describe code that is gone.
		p.maps, p.jit = nil, nil
		return
	}
	r.procs[pid] = &proc{}
}

// Exit forgets pid, its perf map included. Loaded modules stay cached for
// other processes; under a budget, those no live process maps are the
// first evicted (budget.go).
func (r *Resolver) Exit(pid int) {
	r.retireJITDump(pid)
	delete(r.procs, pid)
	r.gen++
	if len(r.paths) > 2*r.livePaths+1024 {
		r.reintern()
	}
}

// Processes is how many processes the resolver keeps mappings of.
func (r *Resolver) Processes() int { return len(r.procs) }

// Mappings returns a copy of the mappings known for pid, sorted by Start.
func (r *Resolver) Mappings(pid int) []Mapping {
	p := r.procs[pid]
	if p == nil {
		return nil
	}
	out := make([]Mapping, len(p.maps))
	for i := range p.maps {
		out[i] = p.maps[i].Mapping
	}
	return out
}

// Lookup appends the frames for pc to dst: its inline chain, innermost
// first, every frame but the last marked Inlined.
// Callers pass pc-1 for return addresses (every frame but the leaf).
//
// For a pid and pc seen before, the cost is a hash and a check
// (lookupcache.go), with no allocation beyond growing dst. A pc in
// anonymous memory is named from the process's JIT perf map, if it writes
// one (perfmap.go).
func (r *Resolver) Lookup(pid int, pc uint64, dst []Frame) []Frame {
	gen := r.gen
	e := r.looks.slot(pid, pc)
	if e.hit(pid, pc, gen) {
		r.mods.clock++
		e.mod.used = r.mods.clock // the budget's LRU order sees the use
		return r.looks.append(e, dst)
	}
	n := len(dst)
	dst, mod := r.lookup(pid, pc, dst)
	if mod != nil && r.gen == gen {
		r.looks.put(e, pid, pc, gen, mod, dst[n:])
	}
	return dst
}

// lookup is Lookup without the cache. It returns the module that named
// pc when the answer holds until Generation changes: not for JIT code,
// which a perf map may name later, nor a pc outside any file.
func (r *Resolver) lookup(pid int, pc uint64, dst []Frame) ([]Frame, *module) {
	p := r.procs[pid]
	if p == nil {
		return append(dst, Frame{Addr: pc}), nil
	}
	m := p.find(pc)
	if m == nil {
		return append(dst, Frame{Addr: pc}), nil
	}
	if m.anon {
		if dst, ok := r.jitDumpLookup(p, pc, dst); ok {
			return dst, nil
		}
		// JIT code: only the process's perf map can name it.
		if p.jit == nil {
			p.jit = newPerfMap(pid)
			r.notePerfMap(pid)
		}
		if name, ok := p.jit.lookup(pc); ok {
			return append(dst, Frame{Func: name, Module: jitModule, Addr: pc}), nil
		}
	}
	r.mods.clock++
	mod := r.attach(pid, m)
	if mod == nil {
		// Anonymous executable memory that no perf map names, and pseudo
		// mappings: no file to read, so the absolute pc is the only
		// stable name.
		return append(dst, Frame{Module: m.Path, Addr: pc, JIT: m.anon}), nil
	}
	n := len(dst)
	off := pc - m.Start + m.Offset
	if addr, ok := offsetToVaddr(mod.segs, off); ok {
		dst = mod.frames(addr, m.Path, dst)
	} else {
		dst = append(dst, mod.outside(off, m.Path))
	}
	if r.mods.overBudget() {
		r.trim()
	}
	if m.anon {
		return unnamedJIT(dst, n, pc), nil
	}
	return dst, mod
}

func (p *proc) find(pc uint64) *mapping {
	ms := p.maps
	// Largest i with ms[i].Start <= pc.
	lo, hi := 0, len(ms)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if ms[h].Start <= pc {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo == 0 || pc >= ms[lo-1].Limit {
		return nil
	}
	return &ms[lo-1]
}

// insertMapping returns ms with n added, after removing from ms whatever n
// overlaps. Pieces of a split mapping keep its module.
func insertMapping(ms []mapping, n mapping) []mapping {
	out := make([]mapping, 0, len(ms)+2)
	for _, o := range ms {
		if o.Limit <= n.Start || o.Start >= n.Limit {
			out = append(out, o)
			continue
		}
		if o.Start < n.Start {
			head := o
			head.Limit = n.Start
			out = append(out, head)
		}
		if o.Limit > n.Limit {
			tail := o
			tail.Offset += n.Limit - o.Start
			tail.Start = n.Limit
			out = append(out, tail)
		}
	}
	i, _ := slices.BinarySearchFunc(out, n.Start, func(m mapping, start uint64) int {
		switch {
		case m.Start < start:
			return -1
		case m.Start > start:
			return 1
		}
		return 0
	})
	return slices.Insert(out, i, n)
}

func (r *Resolver) intern(s string) string {
	if v, ok := r.paths[s]; ok {
		return v
	}
	r.paths[s] = s
	return s
}

// reintern rebuilds the interned paths from the live processes' mappings:
// the paths of processes that exited (a build tree's tools, per-run
// temporary files) would otherwise stay interned forever.
func (r *Resolver) reintern() {
	r.paths = make(map[string]string, 2*r.livePaths)
	for _, p := range r.procs {
		for i := range p.maps {
			p.maps[i].Path = r.intern(p.maps[i].Path)
		}
	}
	r.livePaths = len(r.paths)
}
