package engine

import (
	"fmt"
	"github.com/cctop/cctop/lang"
	"strconv"
	"strings"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/symbol"
	"github.com/cctop/cctop/tui"
)

// JIT code named after the fact. A JIT names its code in /tmp/perf-PID.map
// (symbol/perfmap.go), but runtimes publish names late: the JVM with
// -XX:+DumpPerfMapAtExit writes the map only as it exits, `jcmd PID
// Compiler.perfmap` on demand, and any JIT a moment after it compiled. A
// pc that no map names when it is sampled gets a placeholder function of
// its own (jitFunc), shown as its mapping's name ("[anon]", "[memfd:...]")
// as such code always was; when the process's map names it later, the
// placeholder is renamed, and contexts that become one merge (cct's
// Relabel, the per-node data following through remapNodes as after a
// fold). A process's map is read again when it grew (checked once per
// jitCheckEvery, one stat), at the process's exit, and at the profile's
// end (finish), where the placeholders still unnamed merge into their
// mapping's one name: a profile carries no placeholder. Until then the
// live view's snapshots and exports show them merged so (showJIT,
// jitExported): a view's rows are functions, and a placeholder per pc
// would split one "[anon]" into a row per sampled pc.

const (
	// maxJITPerProc bounds the placeholders of one process not named
	// yet: past it, its unnamed pcs get their mapping's name at once,
	// as before names could come late.
	maxJITPerProc = 4096
	// maxJITFuncs bounds the placeholders a tree interns, all told:
	// functions are never removed from a tree, renamed or not.
	maxJITFuncs = 1 << 15
	// jitCheckEvery is how often the maps of running processes are
	// checked for new names: the live view refreshes about as often.
	jitCheckEvery = uint64(time.Second)
	// maxJITReports bounds the processes the summary names one by one.
	maxJITReports = 8
)

// jitNames is the builder's placeholders for JIT code not named yet.
type jitNames struct {
	pid   uint32              // the process of the stack being built (frameStack)
	procs map[uint32]*jitProc // running processes that had placeholders
	// retired are processes that exited or exec'd with placeholders:
	// named at the batch's end from the map they left.
	retired   []*jitProc
	interned  int    // placeholders the tree interned (maxJITFuncs)
	made      uint32 // jitProcs made, numbering them
	lastCheck uint64 // MonoNow of the last check of the running processes' maps
	due       bool   // a process's main thread ended: check at the batch's end
	reports   []*jitReport
	others    jitReport // of the processes past maxJITReports, summed
	nOthers   int
}

// jitProc is one process's placeholders.
type jitProc struct {
	pid     uint32
	seq     uint32           // its number among the builder's jitProcs
	pcs     map[uint64]jitPC // unnamed pcs and their placeholders
	pm      symbol.PerfMap   // its map, taken at its exit or exec (retired)
	version uint64           // the map's Version when last looked at
	force   bool             // read the map now: the process is ending
	report  *jitReport       // nil until something is named or merged
	capped  int              // unnamed pcs past maxJITPerProc or maxJITFuncs
}

// jitPC is the placeholder of one pc, and the function of its mapping,
// which it merges into if no map ever names it.
type jitPC struct{ id, mapping cct.FuncID }

// Phases in which a placeholder was named.
const (
	jitGrew = iota // a running process's map grew
	jitExit        // the process exited (or exec'd): its last map
	jitEnd         // the profile's end
	jitPhases
)

// jitReport is what naming after the fact did for one process.
type jitReport struct {
	pid         uint32
	path        string // its perf map, as the process names it
	found       bool   // the map was there at the last read
	entries     int    // ranges the map named then
	named       [jitPhases]int
	namedTime   int64 // self time of the contexts named, when they were
	unnamed     int   // pcs no map named, merged into their mapping's name at the end
	unnamedTime int64
	capped      int // unnamed pcs that got their mapping's name at once (bounds)
}

// jitFunc is the function of a frame of JIT code no perf map names yet
// (symbol.Frame.JIT): a placeholder for its pc in b.jit.pid, shown as the
// mapping's name, or past the bounds the mapping's function itself.
func (b *builder) jitFunc(f symbol.Frame) cct.FuncID {
	j := &b.jit
	p := j.procs[j.pid]
	if p != nil {
		if e, ok := p.pcs[f.Addr]; ok {
			return e.id
		}
	}
	mapping := b.internName(symbol.Frame{Module: f.Module})
	if j.interned >= maxJITFuncs || (p != nil && len(p.pcs) >= maxJITPerProc) {
		if p != nil {
			p.capped++
		}
		return mapping
	}
	if p == nil {
		if j.procs == nil {
			j.procs = map[uint32]*jitProc{}
		}
		j.made++
		p = &jitProc{pid: j.pid, seq: j.made, pcs: map[uint64]jitPC{}}
		j.procs[j.pid] = p
	}
	fn := b.tree.Func(mapping)
	n := b.tree.NumFuncs()
	// The file keeps placeholders apart (a function is its name, module
	// and file), each process's from another's that had its pid before;
	// rows show the name alone, and a line number never comes with one,
	// so it is not shown.
	id := b.tree.Intern(cct.Func{Name: fn.Name, Short: fn.Short, Module: fn.Module,
		File: "[JIT pc 0x" + strconv.FormatUint(f.Addr, 16) + " of pid " + strconv.FormatUint(uint64(j.pid), 10) +
			" (" + strconv.FormatUint(uint64(p.seq), 10) + "), not named yet]"})
	if b.tree.NumFuncs() > n {
		j.interned++
	}
	p.pcs[f.Addr] = jitPC{id, mapping}
	return id
}

// retireJIT takes the perf map of a process that exits or execs, before
// the resolver drops it, so that its placeholders are named from the
// map's last lines at the batch's end.
func (b *builder) retireJIT(pid uint32) {
	j := &b.jit
	p := j.procs[pid]
	if p == nil {
		return
	}
	delete(j.procs, pid)
	p.pm, p.force = b.res.PerfMap(int(pid)), true
	j.retired = append(j.retired, p)
}

// jitLeaderExited: the main thread of pid ended, its process with it as a
// rule. A runtime writes its map as it exits: read it at the batch's end.
func (b *builder) jitLeaderExited(pid uint32) {
	if p := b.jit.procs[pid]; p != nil {
		p.force, b.jit.due = true, true
	}
}

// jitAfterBatch names what it can at a batch's end: the placeholders of
// processes that ended, and, at most once per jitCheckEvery, those of
// running processes whose maps grew.
func (b *builder) jitAfterBatch(now uint64) {
	j := &b.jit
	if len(j.procs) == 0 && len(j.retired) == 0 {
		return
	}
	if !j.due && len(j.retired) == 0 && now-j.lastCheck < jitCheckEvery {
		return
	}
	j.lastCheck, j.due = now, false
	b.renameJIT(false)
}

// jitMove is one placeholder given its function.
type jitMove struct {
	from, to cct.FuncID
	rep      *jitReport
	named    bool
}

// renameJIT renames the placeholders whose pcs the processes' maps now
// name: those of ended processes and, where their maps changed, of running
// ones. At the profile's end (final) every map is read to its end and
// what no map names merges into its mapping's name.
func (b *builder) renameJIT(final bool) {
	j := &b.jit
	var moves []jitMove
	visit := func(p *jitProc, pm symbol.PerfMap, phase int, end bool) {
		pm.Refresh(end || p.force)
		if !end && !p.force && pm.Version() == p.version {
			return
		}
		p.force, p.version = false, pm.Version()
		var rep *jitReport
		report := func() *jitReport {
			if rep == nil {
				rep = b.jitReport(p)
				rep.path, rep.found, rep.entries = pm.Path(), pm.Found(), pm.Entries()
			}
			return rep
		}
		for pc, e := range p.pcs {
			if f, ok := pm.Frame(pc); ok {
				report().named[phase]++
				moves = append(moves, jitMove{e.id, b.internName(f), rep, true})
				delete(p.pcs, pc)
			} else if end {
				report().unnamed++
				moves = append(moves, jitMove{e.id, e.mapping, rep, false})
				delete(p.pcs, pc)
			}
		}
		if end && p.capped > 0 {
			report().capped += p.capped
			p.capped = 0
		}
	}
	for i, p := range j.retired {
		visit(p, p.pm, jitExit, true)
		j.retired[i] = nil
	}
	j.retired = j.retired[:0]
	for pid, p := range j.procs {
		if len(p.pcs) == 0 && !final {
			// All named: kept, with its report, while the process runs.
			continue
		}
		phase := jitGrew
		switch {
		case final:
			phase = jitEnd
		case p.force:
			phase = jitExit
		}
		visit(p, b.res.PerfMap(int(pid)), phase, final)
		if final {
			delete(j.procs, pid)
		}
	}
	if len(moves) == 0 {
		return
	}
	to := make([]cct.FuncID, b.tree.NumFuncs())
	for i := range to {
		to[i] = cct.FuncID(i)
	}
	move := make(map[cct.FuncID]*jitMove, len(moves))
	for i := range moves {
		m := &moves[i]
		to[m.from], move[m.from] = m.to, m
	}
	// The self time each report's pcs held, before the contexts merge.
	for id := range b.tree.Len() {
		n := b.tree.Node(cct.NodeID(id))
		if m := move[n.Func]; m != nil && n.Self.Time != 0 {
			if m.named {
				m.rep.namedTime += n.Self.Time
			} else {
				m.rep.unnamedTime += n.Self.Time
			}
		}
	}
	// Where no contexts merged, ids are as they were: what is kept per
	// node stays, and the live flow correction in flight with it.
	if remap := b.tree.Relabel(to); remap != nil && b.tree.Len() != len(remap) {
		b.remapNodes(remap)
	}
}

// jitReport is p's report, made on first use; past maxJITReports
// processes, the one they share.
func (b *builder) jitReport(p *jitProc) *jitReport {
	if p.report != nil {
		return p.report
	}
	j := &b.jit
	if len(j.reports) < maxJITReports {
		p.report = &jitReport{pid: p.pid}
		j.reports = append(j.reports, p.report)
	} else {
		p.report = &j.others
		j.nOthers++
	}
	return p.report
}

// jitLines says what naming after the fact did, a line per process, for
// the summary; names are the session's threads, a process's main one
// naming it.
func (b *builder) jitLines(names map[uint32]cct.Thread) []string {
	j := &b.jit
	total := b.tree.Total().Time
	pct := func(v int64) float64 { return 100 * float64(v) / float64(max(total, 1)) }
	var out []string
	line := func(r *jitReport, who string) {
		named := r.named[jitGrew] + r.named[jitExit] + r.named[jitEnd]
		switch {
		case named > 0:
			var when []string
			for ph, w := range [jitPhases]string{"as it grew", "written at exit", "read at the end"} {
				if r.named[ph] > 0 {
					when = append(when, fmt.Sprintf("%d %s", r.named[ph], w))
				}
			}
			s := fmt.Sprintf("JIT names: %s of %s named from %s after they were sampled (%s), %.1f%% of self time",
				pcs(named), who, r.path, strings.Join(when, ", "), pct(r.namedTime))
			if r.unnamed > 0 {
				s += fmt.Sprintf("; %s (%.1f%% of self time) no map named", pcs(r.unnamed), pct(r.unnamedTime))
			}
			out = append(out, s)
		case r.unnamed > 0 && r.found:
			// (With no map at all, jitRegionLines says so, and the fix.)
			out = append(out, fmt.Sprintf("JIT code: %s of %s (%.1f%% of self time) in anonymous memory stayed unnamed: %s (%d entries) does not name them; %s",
				pcs(r.unnamed), who, pct(r.unnamedTime), r.path, r.entries, jitHint(who)))
		}
		if r.capped > 0 {
			out = append(out, fmt.Sprintf("JIT code: %s of %s past %d waiting for a name took their mapping's name at once",
				pcs(r.capped), who, maxJITPerProc))
		}
	}
	for _, r := range j.reports {
		who := "pid " + strconv.FormatUint(uint64(r.pid), 10)
		if th, ok := names[r.pid]; ok && th.Name != "" {
			who = th.Name + " (" + who + ")"
		}
		line(r, who)
	}
	if o := &j.others; j.nOthers > 0 {
		named := o.named[jitGrew] + o.named[jitExit] + o.named[jitEnd]
		out = append(out, fmt.Sprintf("JIT names: %d more processes: %s named from their perf maps after they were sampled (%.1f%% of self time), %s no map named (%.1f%%), %d past the bound",
			j.nOthers, pcs(named), pct(o.namedTime), pcs(o.unnamed), pct(o.unnamedTime), o.capped))
	}
	return out
}

// pcs is n pcs, in words.
func pcs(n int) string {
	if n == 1 {
		return "1 pc"
	}
	return strconv.Itoa(n) + " pcs"
}

// jitHint says how a runtime is made to name its code, by what the
// process is called ("java (pid 42)").
func jitHint(who string) string {
	name, _, _ := strings.Cut(who, " ")
	return lang.JITAdvice(lang.Runtime(name))
}

// jitUnnamed is Relabel's map for a tree of n functions that merges every
// placeholder waiting for a name into its mapping's function; nil when
// none waits.
func (b *builder) jitUnnamed(n int) []cct.FuncID {
	j := &b.jit
	waiting := len(j.retired) > 0
	for _, p := range j.procs {
		waiting = waiting || len(p.pcs) > 0
	}
	if !waiting {
		return nil
	}
	to := make([]cct.FuncID, n)
	for i := range to {
		to[i] = cct.FuncID(i)
	}
	merge := func(p *jitProc) {
		for _, e := range p.pcs {
			if int(e.id) < n {
				to[e.id] = e.mapping
			}
		}
	}
	for _, p := range j.procs {
		merge(p)
	}
	for _, p := range j.retired {
		merge(p)
	}
	return to
}

// showJIT shows a snapshot's placeholders as their mapping's function,
// the name they display: its tree becomes a relabeled copy, and the
// weights it carries per node move onto the copy's nodes.
func (b *builder) showJIT(s *tui.Snapshot) {
	to := b.jitUnnamed(s.Tree.NumFuncs())
	if to == nil {
		return
	}
	nt, remap := s.Tree.Relabeled(to)
	if nt == nil {
		return
	}
	n := nt.Len()
	s.Tree = nt
	if s.Self != nil {
		s.Self = cct.Remap(s.Self, remap, n)
	}
	if s.Compare != nil {
		s.Compare = cct.Remap(s.Compare, remap, n)
	}
	if ts := s.ThreadSelf; ts != nil {
		// ts weighs the nodes of the tree before the copy.
		s.ThreadSelf = func(tid uint32) []float64 {
			if w := ts(tid); w != nil {
				return cct.Remap(w, remap, n)
			}
			return nil
		}
	}
}

// jitExported is the tree to write while placeholders wait for names: a
// copy with them merged into their mappings' functions; the tree itself
// when none waits.
func (b *builder) jitExported() *cct.Tree {
	if to := b.jitUnnamed(b.tree.NumFuncs()); to != nil {
		if nt, _ := b.tree.Relabeled(to); nt != nil {
			return nt
		}
	}
	return b.tree
}
