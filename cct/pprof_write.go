package cct

import (
	"compress/gzip"
	"encoding/binary"
	"io"
	"slices"

	"github.com/google/pprof/profile"
)

// Label keys of a pprof sample that say which thread it was taken on.
const (
	labelThreadID   = "thread_id"   // numeric
	labelThreadName = "thread_name" // string
	labelPID        = "pid"         // numeric, when known
	// labelComm is the name of the thread's process (its main thread's,
	// as perf's comm), when known.
	labelComm = "comm"
	// labelProcess is the process frame's name, "TITLE [pid N]" (see
	// ProcessModule), on the samples of a profile of several processes.
	labelProcess = "process"
	// labelOffCPUReason is why a thread was off the CPU (futex,
	// nanosleep, preempted...), on the samples of an OffCPUFrame leaf.
	labelOffCPUReason = "offcpu_reason"
)

// WriteProfile writes t as a gzipped profile.proto (see Profile).
func (t *Tree) WriteProfile(w io.Writer, m Meta) error {
	// profile.Write compresses at the default level, which costs more than building the
	// profile; runtime/pprof uses BestSpeed too.
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if err := t.Profile(m).WriteUncompressed(zw); err != nil {
		return err
	}
	return zw.Close()
}

// Profile converts t to a pprof profile: one sample per (context, thread) with non-zero
// self metrics, labelled with the thread; value columns samples/count then
// <SampleType>/<Unit> (default cpu/nanoseconds). Inlined frames share the location of the
// frame they are inlined into, as extra lines, which is how pprof represents inlining.
//
// Addresses are module-relative, so every mapping starts at 0 with offset 0: a reader
// computing Address-Start+Offset gets the module-relative address back. Functions are
// always present (HasFunctions), so pprof never tries to symbolize against these ranges.
// A module's build ID (Meta.Modules) is its mapping's BuildID; its segment placement is
// not written, since these mappings' ranges are module-relative.
func (t *Tree) Profile(m Meta) *profile.Profile {
	m = m.withDefaults()
	cols := exportColumns(m)
	def := m.SampleType
	if m.DefaultType != "" {
		def = m.DefaultType
	}
	p := &profile.Profile{
		DefaultSampleType: def,
		PeriodType:        &profile.ValueType{Type: m.PeriodType, Unit: m.Unit},
		Period:            m.Period,
		TimeNanos:         m.TimeNanos,
		DurationNanos:     m.DurationNanos,
		Comments:          append([]string(nil), m.Comments...),
	}
	for _, c := range cols {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: c.Type, Unit: c.Unit})
	}
	b := &pprofBuilder{
		t:        t,
		p:        p,
		modules:  m.Modules,
		funcs:    make([]*profile.Function, len(t.funcs)),
		mappings: make(map[string]*profile.Mapping),
		locs:     make(map[string]*profile.Location),
	}
	// pprof takes the first mapping for the main binary (it names the profile after it):
	// that is the module of the outermost frames, not that of the first leaf written.
	for _, c := range t.Children(0) {
		if f := t.funcs[t.nodes[c].Func]; f.IsProcess() {
			// The process's own outermost frames name it.
			for _, g := range t.Children(c) {
				b.mapping(t.funcs[t.nodes[g].Func].Module)
			}
			continue
		}
		b.mapping(t.funcs[t.nodes[c].Func].Module)
	}
	for id := range t.nodes {
		if t.nodes[id].firstThread < 0 {
			continue
		}
		var st []Frame
		var proc Func // the context's process frame, if it has one
		// locs are the context's locations by its leaf's address: a
		// sample per thread and address, so that pprof's -list and
		// -disasm see where in the function the samples were taken.
		var locs map[uint64][]*profile.Location
		reason, offcpu := OffCPUReason(t.funcs[t.nodes[id].Func].Name)
		for a, ts := range t.AddrSelves(NodeID(id)) {
			if locs == nil {
				// One buffer for every context's stack: locations copy
				// what they keep of it.
				b.stack = t.appendStack(b.stack[:0], NodeID(id))
				st = b.stack
				proc = Func{}
				if n := len(st); n > 0 && t.funcs[st[n-1].Func].IsProcess() {
					// A process is labels, not code (see ProcessModule).
					proc, st = t.funcs[st[n-1].Func], st[:n-1]
				}
				locs = map[uint64][]*profile.Location{}
			}
			l, ok := locs[a.Addr]
			if !ok {
				l = b.locations(atLeaf(st, a))
				locs[a.Addr] = l
			}
			b.sample(l, ts.Self, ts.TID, cols, m, proc, offcpu, reason)
		}
	}
	return p
}

// atLeaf is stack with its leaf at address a: the leaf's physical frame
// and the frames inlined into it there share the address.
func atLeaf(stack []Frame, a AddrCount) []Frame {
	if len(stack) == 0 || stack[0].Addr == a.Addr && stack[0].Line == a.Line {
		return stack
	}
	out := slices.Clone(stack)
	out[0].Line = a.Line
	for i := range out {
		out[i].Addr = a.Addr
		if !out[i].Inlined {
			break
		}
	}
	return out
}

// sample adds one sample of self on thread tid at locs, with its labels.
// Samples of one thread, process and reason share their label maps, which
// nothing writes once made: a profile of tens of thousands of samples
// (one per context, thread and leaf address) made two maps for each,
// most of what an export added to the live view's memory.
func (b *pprofBuilder) sample(locs []*profile.Location, self Metrics, tid uint32, cols []column, m Meta, proc Func, offcpu bool, reason string) {
	s := &profile.Sample{Location: locs, Value: make([]int64, len(cols))}
	for i, c := range cols {
		s.Value[i] = *c.field(&self)
	}
	k := labelKey{tid: tid, proc: proc.Name, module: proc.Module, offcpu: offcpu, reason: reason}
	ls, ok := b.labels[k]
	if !ok {
		ls = labelsOf(tid, m, proc, offcpu, reason)
		if b.labels == nil {
			b.labels = map[labelKey]*profile.Sample{}
		}
		b.labels[k] = ls
	}
	s.Label, s.NumLabel = ls.Label, ls.NumLabel
	b.p.Sample = append(b.p.Sample, s)
}

// labelKey is what a sample's labels depend on.
type labelKey struct {
	tid          uint32
	proc, module string
	offcpu       bool
	reason       string
}

// labelsOf is a sample holding the labels of a sample on thread tid.
func labelsOf(tid uint32, m Meta, proc Func, offcpu bool, reason string) *profile.Sample {
	s := &profile.Sample{}
	th, known := m.Threads[tid]
	if known || tid != 0 {
		s.NumLabel = map[string][]int64{labelThreadID: {int64(tid)}}
		if th.PID != 0 {
			s.NumLabel[labelPID] = []int64{int64(th.PID)}
		}
		if th.Name != "" {
			s.Label = map[string][]string{labelThreadName: {th.Name}}
		}
		if comm := m.Threads[th.PID].Name; th.PID != 0 && comm != "" && m.Threads[th.PID].PID == th.PID {
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label[labelComm] = []string{comm}
		}
	}
	if proc.IsProcess() {
		if s.Label == nil {
			s.Label = map[string][]string{}
		}
		s.Label[labelProcess] = []string{proc.Name}
		if c := proc.Comm(); c != "" {
			s.Label[labelComm] = []string{c}
		}
		if s.NumLabel == nil {
			s.NumLabel = map[string][]int64{}
		}
		if pid := proc.ProcessPID(); pid != 0 && len(s.NumLabel[labelPID]) == 0 {
			s.NumLabel[labelPID] = []int64{int64(pid)}
		}
	}
	if offcpu {
		if s.Label == nil {
			s.Label = map[string][]string{}
		}
		s.Label[labelOffCPUReason] = []string{reason}
	}
	return s
}

type pprofBuilder struct {
	t        *Tree
	p        *profile.Profile
	modules  map[string]Module
	funcs    []*profile.Function // by FuncID
	mappings map[string]*profile.Mapping
	locs     map[string]*profile.Location
	key      []byte
	labels   map[labelKey]*profile.Sample // each label set's maps, shared (sample)
	stack    []Frame                      // the context's stack being written
}

// locations turns a leaf-first stack into pprof locations, folding each run of inlined
// frames into the location of the outer frame they are inlined into.
func (b *pprofBuilder) locations(stack []Frame) []*profile.Location {
	locs := make([]*profile.Location, 0, len(stack))
	for i := 0; i < len(stack); {
		j := i
		for j+1 < len(stack) && stack[j].Inlined {
			j++
		}
		locs = append(locs, b.location(stack[i:j+1]))
		i = j + 1
	}
	return locs
}

// location returns the location for one pc: group is innermost first, its last frame the
// physical one. Locations are shared by every sample with the same module, pc and lines.
func (b *pprofBuilder) location(group []Frame) *profile.Location {
	outer := group[len(group)-1]
	module := b.t.funcs[outer.Func].Module
	b.key = append(b.key[:0], module...)
	b.key = append(b.key, 0)
	b.key = binary.AppendUvarint(b.key, outer.Addr)
	for _, f := range group {
		b.key = binary.AppendUvarint(b.key, uint64(f.Func))
		b.key = binary.AppendVarint(b.key, int64(f.Line))
	}
	if l, ok := b.locs[string(b.key)]; ok {
		return l
	}
	l := &profile.Location{
		ID:      uint64(len(b.p.Location) + 1),
		Mapping: b.mapping(module),
		Address: outer.Addr,
	}
	for _, f := range group {
		l.Line = append(l.Line, profile.Line{Function: b.function(f.Func), Line: int64(f.Line)})
	}
	if m := l.Mapping; m != nil {
		if outer.Addr >= m.Limit {
			m.Limit = outer.Addr + 1
			if m.Limit == 0 { // the top of the address space
				m.Limit = ^uint64(0)
			}
		}
		m.HasInlineFrames = m.HasInlineFrames || len(group) > 1
		for _, f := range group {
			m.HasFilenames = m.HasFilenames || b.t.funcs[f.Func].File != ""
			m.HasLineNumbers = m.HasLineNumbers || f.Line != 0
		}
	}
	b.p.Location = append(b.p.Location, l)
	b.locs[string(b.key)] = l
	return l
}

// mapping returns the mapping of module; frames outside any module have none.
func (b *pprofBuilder) mapping(module string) *profile.Mapping {
	if module == "" {
		return nil
	}
	if m, ok := b.mappings[module]; ok {
		return m
	}
	m := &profile.Mapping{
		ID:           uint64(len(b.p.Mapping) + 1),
		File:         module,
		BuildID:      b.modules[module].BuildID,
		HasFunctions: true,
	}
	b.p.Mapping = append(b.p.Mapping, m)
	b.mappings[module] = m
	return m
}

func (b *pprofBuilder) function(id FuncID) *profile.Function {
	if f := b.funcs[id]; f != nil {
		return f
	}
	fn := b.t.funcs[id]
	f := &profile.Function{
		ID:         uint64(len(b.p.Function) + 1),
		Name:       fn.Name,
		SystemName: fn.LinkName(),
		Filename:   fn.File,
	}
	b.p.Function = append(b.p.Function, f)
	b.funcs[id] = f
	return f
}
