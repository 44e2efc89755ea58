package engine

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/python"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// PythonModule is the module of the Python frames read from an
// interpreter: they run no code of a file of their own.
const PythonModule = "[python]"

// pyTornName is the frame that torn samples' native stacks go under: their
// Python stack as read did not match the native one.
const pyTornName = "[python: torn]"

// pyStacks puts the Python stacks the poller reads from CPython
// interpreters (package python) into the samples' native stacks: each
// evaluation of the interpreter's loop, a _PyEval_EvalFrameDefault frame,
// becomes the Python frames it runs. It belongs to the builder; successors
// share its poller, each profile counts its own samples.
type pyStacks struct {
	poller *python.Poller
	budget float64                 // the poller's share of cctop's CPU time
	added  map[uint32]bool         // processes given to the poller
	names  map[*python.Code]pyName // each code object's frame strings
	byKey  map[string]pyName       // the same by "QUALNAME:FILE": one string per function
	tcodes []python.Code           // trampolineFrames' codes
	interp map[uint32]string       // the interpreter's module per process, "" if none
	counts pyCounts
	// reused per sample
	frames []python.Frame
	out    []symbol.Frame
	evals  []int
	tramps []string
}

// pyName is a Python function's frame name, "py::QUALNAME:FILE", made
// once per code object.
type pyName struct{ name, file string }

// pyCounts is what happened to the samples of readable Python processes.
type pyCounts struct {
	samples  uint64 // samples of a Python process with an evaluation frame or a Python stack
	merged   uint64 // with their Python frames
	mismatch uint64 // torn: the read stack's evaluations differ from the native stack's
	notRead  uint64 // torn: no read of the thread near the sample's time
	// Against the perf trampolines' frames, where a 3.12+ interpreter runs
	// with them: exact truth of the Python function of each evaluation.
	// trampOnly: samples whose read named other functions than the
	// trampolines, which the tree takes instead.
	tramp, trampAgree, trampOnly uint64
	truth, read                  map[string]uint64 // innermost Python function by source
}

// newPyStacks starts the poller, which reads running threads once per
// sampling period.
func newPyStacks(freq uint64, budget float64) *pyStacks {
	period := time.Millisecond
	if freq > 0 {
		period = time.Duration(1e9 / freq)
	}
	if budget <= 0 {
		budget = python.DefaultBudget
	}
	return &pyStacks{
		poller: python.NewPoller(period, budget), budget: budget,
		added: map[uint32]bool{}, names: map[*python.Code]pyName{}, byKey: map[string]pyName{}, interp: map[uint32]string{},
		counts: pyCounts{truth: map[string]uint64{}, read: map[string]uint64{}},
	}
}

// add has the poller look at pid, once.
func (ps *pyStacks) add(pid uint32) {
	if !ps.added[pid] {
		ps.added[pid] = true
		ps.poller.Add(int(pid))
	}
}

// pending says whether the poller will read r's thread nearer to r's time
// than it has: the sample is better taken with the next batch.
func (ps *pyStacks) pending(r *sampler.Record) bool {
	return ps != nil && r.PID != 0 && ps.added[r.PID] && ps.poller.Pending(int(r.PID), int(r.TID), r.Time)
}

// fork: a child process is looked at (multiprocessing's workers are
// interpreters too), a new thread's state listed.
func (ps *pyStacks) fork(r *sampler.Record) {
	switch {
	case ps == nil:
	case r.PID != r.PPID:
		ps.add(r.PID)
	default:
		ps.poller.NewThread(int(r.PID))
	}
}

// exec: the process runs another program now, maybe another interpreter.
func (ps *pyStacks) exec(pid uint32) {
	if ps != nil {
		ps.added[pid] = true
		delete(ps.interp, pid)
		ps.poller.Forget(int(pid))
	}
}

// successor shares the poller and starts new counts.
func (ps *pyStacks) successor() *pyStacks {
	if ps == nil {
		return nil
	}
	n := *ps
	n.counts = pyCounts{truth: map[string]uint64{}, read: map[string]uint64{}}
	n.frames, n.out, n.evals, n.tramps = nil, nil, nil, nil
	return &n
}

func (ps *pyStacks) close() {
	if ps != nil {
		ps.poller.Close()
	}
}

// isEval says whether a native frame is an evaluation of CPython's loop
// (its cold part too).
func isEval(name string) bool {
	rest, ok := strings.CutPrefix(name, "_PyEval_EvalFrameDefault")
	return ok && (rest == "" || rest[0] == '.')
}

// mergePython rewrites the user part of b.frames (from nk) with the Python
// stack read nearest to r's time. It sets b.pyTorn when the two do not
// match, and b.rooted when the Python stack completes a native one cut
// short.
func (b *builder) mergePython(r *sampler.Record, nk int) {
	ps := b.py
	b.pyTorn = false
	if ps == nil || r.PID == 0 {
		return
	}
	ps.add(r.PID)
	frames, st := ps.poller.At(int(r.PID), int(r.TID), r.Time, ps.frames[:0])
	ps.frames = frames[:0]
	if st == python.NotReadable {
		// Not an interpreter (most processes): no frame to look at.
		return
	}
	user := b.frames[nk:]
	ps.evals, ps.tramps = ps.evals[:0], ps.tramps[:0]
	for i, f := range user {
		switch {
		case isEval(f.Func) && !f.Inlined:
			ps.evals = append(ps.evals, i)
		case strings.HasPrefix(f.Func, pyPrefix):
			ps.tramps = append(ps.tramps, f.Func)
		}
	}
	if st == python.NoThreadState && len(ps.evals) == 0 {
		return
	}
	nPy := python.Evaluations(frames)
	if len(ps.evals) == 0 && nPy == 0 {
		return
	}
	c := &ps.counts
	c.samples++
	if len(ps.tramps) > 0 {
		ps.againstTrampolines(frames)
	}
	if len(ps.tramps) > 0 && (st != python.Found || nPy != len(ps.evals) || !ps.trampolinesAgree(frames)) {
		// The trampolines are exact: their functions stand, without
		// lines, where the read is missing or saw another moment.
		c.trampOnly++
		if len(ps.tramps) == len(ps.evals) {
			frames = ps.trampolineFrames()
			b.frames = append(b.frames[:nk], ps.merge(r.PID, user, frames)...)
		}
		return
	}
	switch {
	case st != python.Found:
		c.notRead++
		b.pyTorn = true
		return
	case nPy < len(ps.evals), nPy > len(ps.evals) && !b.cutShort():
		c.mismatch++
		b.pyTorn = true
		return
	}
	c.merged++
	b.frames = append(b.frames[:nk], ps.merge(r.PID, user, frames)...)
	if nPy > len(ps.evals) {
		// The native stack stopped short; the interpreter's frames go on
		// to the thread's first Python frame.
		b.rooted = true
	}
}

// cutShort says whether the stack being built stops short of its thread's
// entry: only then may a read with more evaluations than it complete it.
func (b *builder) cutShort() bool {
	return classify(b.frames, b.userDepth) != "" && !b.rooted
}

// merge is user with each evaluation frame replaced by its Python frames
// (innermost evaluation first), the trampolines dropped (their frames are
// the Python frames), the interpreter's own frames between two Python
// frames dropped (calls from Python to Python through the interpreter's C
// functions, as a Python programmer reads them), and what the native stack
// lacks of the outermost evaluations appended.
func (ps *pyStacks) merge(pid uint32, user []symbol.Frame, frames []python.Frame) []symbol.Frame {
	interp := ps.interpreterModule(pid)
	out := ps.out[:0]
	next := 0 // the next Python frame to place
	placed := 0
	evalAt := 0
	for i := 0; i < len(user); i++ {
		f := user[i]
		// The inlined frames at an evaluation's pc belong to it.
		if evalAt < len(ps.evals) && f.Inlined && inlinedInto(user, i, ps.evals[evalAt]) {
			continue
		}
		if evalAt < len(ps.evals) && i == ps.evals[evalAt] {
			evalAt++
			for next < len(frames) {
				pf := frames[next]
				next++
				if pf.Code == nil {
					break
				}
				out = append(out, ps.frame(pf))
			}
			placed++
			continue
		}
		if strings.HasPrefix(f.Func, pyPrefix) {
			continue
		}
		if placed > 0 && evalAt < len(ps.evals) && interp != "" && f.Module == interp {
			continue // between two evaluations: the interpreter calling itself
		}
		out = append(out, f)
	}
	for next < len(frames) {
		if pf := frames[next]; pf.Code != nil {
			out = append(out, ps.frame(pf))
		}
		next++
	}
	ps.out = out[:0]
	return out
}

// inlinedInto says whether user[i], an inlined frame, is one of the frames
// inlined at the pc of the evaluation frame at e: the run of inlined frames
// just before it.
func inlinedInto(user []symbol.Frame, i, e int) bool {
	if i >= e {
		return false
	}
	for j := i; j < e; j++ {
		if !user[j].Inlined {
			return false
		}
	}
	return true
}

// frame is the symbol frame of a Python frame: named as the perf
// trampolines name theirs, "py::QUALNAME:FILE", which the tree shows as
// "QUALNAME (file.py)" (pyframes.go), so that a function is one whichever
// names it; its line is the frame's, and so is its address: Python code
// has no machine address, and the tree counts a leaf's samples and tells
// call sites apart by address, so the line stands for one (the annotate
// view's rows by line, a caller's cum by the line it calls from).
func (ps *pyStacks) frame(pf python.Frame) symbol.Frame {
	c := pf.Code
	n, ok := ps.names[c]
	if !ok {
		key := c.Qualname + ":" + c.File
		if n, ok = ps.byKey[key]; !ok {
			n = pyName{name: pyPrefix + key, file: c.File}
			if len(ps.byKey) > 1<<16 {
				clear(ps.byKey)
			}
			ps.byKey[key] = n
		}
		if c.FirstLine > 0 { // read, not made from a trampoline's name
			if len(ps.names) > 1<<16 {
				clear(ps.names)
			}
			ps.names[c] = n
		}
	}
	return symbol.Frame{Func: n.name, File: n.file, Line: pf.Line, Addr: uint64(max(pf.Line, 0)), Module: PythonModule}
}

// interpreterModule is the file of pid's interpreter, once found.
func (ps *pyStacks) interpreterModule(pid uint32) string {
	if m, ok := ps.interp[pid]; ok {
		return m
	}
	in := ps.poller.Interpreter(int(pid))
	if in == nil {
		return ""
	}
	ps.interp[pid] = in.Module
	return in.Module
}

// againstTrampolines counts whether the innermost Python function read
// is the one the innermost perf trampoline of the native stack names.
func (ps *pyStacks) againstTrampolines(frames []python.Frame) {
	c := &ps.counts
	c.tramp++
	truth := trampolineKey(ps.tramps[0])
	read := "(none)"
	for _, f := range frames {
		if f.Code != nil {
			if isTrampolineOf(truth, f.Code) {
				c.trampAgree++
				read = truth
			} else {
				read = f.Code.Qualname + ":" + f.Code.File
			}
			break
		}
	}
	if len(c.truth) < 4096 || c.truth[truth] > 0 {
		c.truth[truth]++
	}
	if len(c.read) < 4096 || c.read[read] > 0 {
		c.read[read]++
	}
}

// trampolineFrames are the Python frames the trampolines name, one per
// evaluation, without lines.
func (ps *pyStacks) trampolineFrames() []python.Frame {
	ps.tcodes = ps.tcodes[:0]
	for _, t := range ps.tramps {
		qual, file, _ := strings.Cut(trampolineKey(t), ":")
		ps.tcodes = append(ps.tcodes, python.Code{Name: qual, Qualname: qual, File: file})
	}
	frames := ps.frames[:0]
	for i := range ps.tcodes {
		frames = append(frames, python.Frame{Code: &ps.tcodes[i]}, python.Frame{})
	}
	ps.frames = frames[:0]
	return frames
}

// isTrampolineOf says whether key, a trampoline's "QUALNAME:FILE", names
// code c, without building the string on the sampling path.
func isTrampolineOf(key string, c *python.Code) bool {
	return len(key) == len(c.Qualname)+1+len(c.File) && strings.HasPrefix(key, c.Qualname) &&
		key[len(c.Qualname)] == ':' && strings.HasSuffix(key, c.File)
}

// trampolineKey is a perf trampoline's "py::QUAL:FILE" as "QUAL:FILE".
func trampolineKey(name string) string { return strings.TrimPrefix(name, pyPrefix) }

// trampolinesAgree says whether each evaluation's outermost Python frame
// is the function its trampoline names, innermost first.
func (ps *pyStacks) trampolinesAgree(frames []python.Frame) bool {
	t := 0
	var outer *python.Code
	for _, f := range frames {
		if f.Code != nil {
			outer = f.Code
			continue
		}
		if outer == nil {
			continue
		}
		if t == len(ps.tramps) {
			return true
		}
		if !isTrampolineOf(trampolineKey(ps.tramps[t]), outer) {
			return false
		}
		t++
		outer = nil
	}
	return true
}

// pyThreadNames names the threads of Python processes as threading names
// them ("worker-1"), in place of the kernel's comm.
func (b *builder) pyThreadNames(names map[uint32]cct.Thread) map[uint32]cct.Thread {
	ps := b.py
	if ps == nil {
		return names
	}
	for pid := range ps.added {
		for tid, n := range ps.poller.ThreadNames(int(pid)) {
			if th, ok := names[uint32(tid)]; ok && n != "" {
				th.Name = n
				names[uint32(tid)] = th
			}
		}
	}
	return names
}

// pyLines says what reading Python stacks did, for the summary: a line per
// process that is Python but not read, and the counts.
func (b *builder) pyLines() []string {
	ps := b.py
	if ps == nil {
		return nil
	}
	var out []string
	for _, p := range ps.poller.Problems() {
		out = append(out, "python frames not read: "+p+"; native frames only")
	}
	c := &ps.counts
	if c.samples == 0 {
		return out
	}
	torn := c.mismatch + c.notRead
	line := fmt.Sprintf("python frames: %s; %d of %d samples merged, %.1f%% torn",
		ps.versions(), c.merged, c.samples, pctOf(torn, c.samples))
	if torn > 0 {
		var why []string
		if c.mismatch > 0 {
			why = append(why, fmt.Sprintf("%.1f%% did not match the native stack", pctOf(c.mismatch, c.samples)))
		}
		if c.notRead > 0 {
			why = append(why, fmt.Sprintf("%.1f%% not read in time", pctOf(c.notRead, c.samples)))
		}
		line += " (" + strings.Join(why, ", ") + ", under " + pyTornName + ")"
	}
	out = append(out, line)
	if c.tramp > 0 {
		out = append(out, fmt.Sprintf("python frames against the perf trampolines (exact): the read named every evaluation's function in %.1f%% of %d samples, the innermost in %.1f%%, self shares overlap %.1f%%; the others have the trampolines' functions, without lines",
			100-pctOf(c.trampOnly, c.tramp), c.tramp, pctOf(c.trampAgree, c.tramp), 100*shareOverlap(c.truth, c.read)))
	}
	st := ps.poller.Stats()
	if st.Reads > 0 {
		out = append(out, fmt.Sprintf("python reads: %d stacks, %.1f system calls and %.1f µs each; a running thread read every %.1f ms (paced to cost at most %.0f%% of cctop's own CPU time: %.0f ms here, %.1f µs a wake)",
			st.Reads, float64(st.Syscalls)/float64(st.Reads), float64(st.ReadNS)/float64(st.Reads)/1e3,
			float64(st.Period)/1e6, 100*ps.budget, float64(st.CPU)/1e6, float64(st.Wake)/1e3))
	}
	return out
}

// versions names the interpreters read.
func (ps *pyStacks) versions() string {
	seen := map[string]bool{}
	var vs []string
	for pid := range ps.added {
		if in := ps.poller.Interpreter(int(pid)); in != nil {
			v := "CPython " + in.Version.String()
			if !seen[v] {
				seen[v] = true
				vs = append(vs, v)
			}
		}
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}

// pyHeader is the header's brief of the same, "" if nothing to say.
func (b *builder) pyHeader() string {
	ps := b.py
	if ps == nil {
		return ""
	}
	if p := ps.poller.Problems(); len(p) > 0 {
		return "python frames not read: " + p[0]
	}
	c := &ps.counts
	if c.samples == 0 {
		return ""
	}
	return fmt.Sprintf("%s frames read, %.1f%% torn", ps.versions(), pctOf(c.mismatch+c.notRead, c.samples))
}

func pctOf(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// shareOverlap is the overlap of two distributions given as counts: the
// sum over keys of the smaller share.
func shareOverlap(a, b map[string]uint64) float64 {
	var ta, tb uint64
	for _, v := range a {
		ta += v
	}
	for _, v := range b {
		tb += v
	}
	if ta == 0 || tb == 0 {
		return 0
	}
	s := 0.0
	for k, v := range a {
		s += min(float64(v)/float64(ta), float64(b[k])/float64(tb))
	}
	return s
}

// tornFrame is the tree's function for the marker of torn samples.
func (b *builder) tornFrame() cct.Frame {
	return cct.Frame{Func: b.tree.Intern(cct.Func{Name: pyTornName})}
}
