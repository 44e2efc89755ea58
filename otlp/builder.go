package otlp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

// Process is the profile of one process over one window: its tree and what its file
// would say besides (cct.Meta), and the OTLP resource it is of.
type Process struct {
	Resource Resource
	Tree     *cct.Tree
	Meta     cct.Meta
	// Version is the cctop version, written as the instrumentation scope's version
	// (not read back).
	Version string
}

// Append adds one ResourceProfiles per process to ps. See Builder.Append.
func Append(ps pprofile.Profiles, procs ...Process) error {
	var b Builder
	return b.Append(ps, procs...)
}

// Builder converts trees into OTLP profiles. It keeps the maps that deduplicate the
// dictionary from one Append to the next, so an agent converting a window every few
// seconds does not regrow them. The zero Builder is ready; it is not safe for
// concurrent use.
type Builder struct {
	dict dict
	// Per process, reset by each.
	funcs   []int32          // by FuncID: function index, 0 not yet
	modules map[string]int32 // module path → mapping index
	above   []int32          // by NodeID c: location of the frames above c, 0 not yet
	threads map[uint32][]int32
	reasons map[cct.FuncID]int32 // off-CPU leaf → reason attribute
	byAddr  map[uint64]int32     // one context's stack index by its leaf's address
	lines   []line
	locs    []int32
	attrs   []int32
	cols    []cct.Column
	profs   []pprofile.Profile
}

// Append adds to ps one ResourceProfiles per process, with the process's resource
// attributes, one ScopeProfiles (scope "cctop") and in it one Profile per value
// column of the process's profile (cct.Columns: samples/count, the trigger's metric,
// the call estimates, off-CPU and wall time, as the Meta says), the column a viewer
// shows first (Meta.DefaultSampleType) first. All share ps's dictionary, which Append
// creates or extends.
//
// Each Profile has a sample per (context, thread, leaf address) whose self value in its
// column is not zero, as cct's pprof files do: the stack leaf first, inlined frames as extra
// lines of the location of the frame they are inlined into, innermost first;
// thread.id and thread.name attributes when the thread is known (process.pid too if
// it is not the resource's); off-CPU leaves with their reason. Locations' addresses
// are the module-relative ones cctop has, in a mapping per module placed by
// Meta.Modules when known (else covering every address) and carrying its build ID.
func (b *Builder) Append(ps pprofile.Profiles, procs ...Process) error {
	if ps.IsReadOnly() {
		return errors.New("otlp: the profiles to append to are read-only")
	}
	for i, p := range procs {
		if p.Tree == nil {
			return fmt.Errorf("otlp: process %d (pid %d) has no tree", i, p.Resource.PID)
		}
	}
	b.dict.sync(ps.Dictionary())
	for _, p := range procs {
		rp := ps.ResourceProfiles().AppendEmpty()
		p.Resource.put(rp.Resource().Attributes())
		sp := rp.ScopeProfiles().AppendEmpty()
		sp.Scope().SetName(ScopeName)
		sp.Scope().SetVersion(p.Version)
		b.process(sp, p)
	}
	return nil
}

// columns is the process's columns, the default one first.
func (b *Builder) columns(m cct.Meta) []cct.Column {
	b.cols = append(b.cols[:0], cct.Columns(m)...)
	def := m.DefaultSampleType()
	if i := slices.IndexFunc(b.cols, func(c cct.Column) bool { return c.Type == def }); i > 0 {
		c := b.cols[i]
		copy(b.cols[1:i+1], b.cols[:i])
		b.cols[0] = c
	}
	return b.cols
}

func (b *Builder) process(sp pprofile.ScopeProfiles, p Process) {
	t, m := p.Tree, p.Meta.WithDefaults()
	cols := b.columns(m)
	x := &b.dict

	// The profiles' common header.
	var params int32 = -1
	if len(m.Comments) > 0 {
		params = x.attrStrs(AttrParameters, m.Comments)
	}
	periodType, unit := x.str(m.PeriodType), x.str(m.Unit)
	b.profs = b.profs[:0]
	sp.Profiles().EnsureCapacity(len(cols))
	for _, c := range cols {
		pr := sp.Profiles().AppendEmpty()
		pr.SampleType().SetTypeStrindex(x.str(c.Type))
		pr.SampleType().SetUnitStrindex(x.str(c.Unit))
		pr.PeriodType().SetTypeStrindex(periodType)
		pr.PeriodType().SetUnitStrindex(unit)
		pr.SetPeriod(m.Period)
		pr.SetTime(pcommon.Timestamp(max(m.TimeNanos, 0)))
		pr.SetDurationNano(uint64(max(m.DurationNanos, 0)))
		var id pprofile.ProfileID
		_, _ = rand.Read(id[:]) // never fails (crypto/rand)
		pr.SetProfileID(id)
		if params >= 0 {
			pr.AttributeIndices().Append(params)
		}
		b.profs = append(b.profs, pr)
	}

	b.funcs = reset(b.funcs, t.NumFuncs())
	b.above = reset(b.above, t.Len())
	b.modules = resetMap(b.modules)
	b.threads = resetMap(b.threads)
	b.reasons = resetMap(b.reasons)
	b.byAddr = resetMap(b.byAddr)
	for id := range cct.NodeID(t.Len()) {
		// A sample per thread and leaf address, each address its own
		// location (cct.Tree.AddrSelves), as the pprof writer has them.
		clear(b.byAddr)
		for a, ts := range t.AddrSelves(id) {
			tid, self := ts.TID, ts.Self
			if !b.anyValue(self) {
				continue
			}
			stack, ok := b.byAddr[a.Addr]
			if !ok {
				stack = b.stack(t, id, a, m)
				b.byAddr[a.Addr] = stack
			}
			attrs := b.sampleAttrs(t, id, tid, p, m)
			for i, c := range cols {
				v := c.Of(self)
				if v == 0 {
					continue
				}
				s := b.profs[i].Samples().AppendEmpty()
				s.SetStackIndex(stack)
				s.Values().Append(v)
				if len(attrs) > 0 {
					s.AttributeIndices().Append(attrs...)
				}
			}
		}
	}
}

func (b *Builder) anyValue(self cct.Metrics) bool {
	for _, c := range b.cols {
		if c.Of(self) != 0 {
			return true
		}
	}
	return false
}

// reset is s with n zeros.
func reset(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func resetMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return make(map[K]V)
	}
	clear(m)
	return m
}

// sampleAttrs is the attribute indices of id's samples on thread tid.
func (b *Builder) sampleAttrs(t *cct.Tree, id cct.NodeID, tid uint32, p Process, m cct.Meta) []int32 {
	th, ok := b.threads[tid]
	if !ok {
		info, known := m.Threads[tid]
		if known || tid != 0 {
			th = append(th, b.dict.attrInt(AttrThreadID, int64(tid)))
			if info.Name != "" {
				th = append(th, b.dict.attrStr(AttrThreadName, info.Name))
			}
			if info.PID != 0 && int64(info.PID) != p.Resource.PID {
				th = append(th, b.dict.attrInt(AttrPID, int64(info.PID)))
			}
		}
		b.threads[tid] = th
	}
	fn := t.Node(id).Func
	r, ok := b.reasons[fn]
	if !ok {
		r = -1
		if reason, offcpu := cct.OffCPUReason(t.Func(fn).Name); offcpu && id != t.Root() {
			r = b.dict.attrStr(AttrOffCPUReason, reason)
		}
		b.reasons[fn] = r
	}
	if r < 0 {
		return th
	}
	b.attrs = append(append(b.attrs[:0], th...), r)
	return b.attrs
}

// stack is the stack index of context id: its frames leaf first, each run of inlined
// frames folded with the frame they are inlined into as one location, as
// cct.Tree.Stack and the pprof writer have them. The location of the frames above a
// context c depends only on c (the parent frame's pc is c's call site), so it is
// memoized per c and shared by every context below c.
func (b *Builder) stack(t *cct.Tree, id cct.NodeID, leaf cct.AddrCount, m cct.Meta) int32 {
	b.locs = b.locs[:0]
	if id == t.Root() {
		return 0 // the empty stack is the zero entry
	}
	// The leaf's group: its own pc and line.
	addr, ln := leaf.Addr, leaf.Line
	n := t.Node(id)
	b.lines = append(b.lines[:0], line{b.function(t, n.Func), int64(ln), 0})
	x := id
	for n.Inlined && n.Parent > 0 {
		addr = n.CallSite
		b.lines = append(b.lines, line{b.function(t, t.Node(n.Parent).Func), int64(n.Line), 0})
		x, n = n.Parent, t.Node(n.Parent)
	}
	b.locs = append(b.locs, b.dict.location(b.mapping(t.Func(n.Func).Module, m), addr, nil, b.lines))
	// Each group above: x is the (outlined) context whose parent starts it.
	for n.Parent > 0 {
		c := x
		loc := b.above[c]
		x, n = n.Parent, t.Node(n.Parent)
		if loc != 0 {
			for n.Inlined && n.Parent > 0 {
				x, n = n.Parent, t.Node(n.Parent)
			}
		} else {
			cn := t.Node(c)
			addr := cn.CallSite
			b.lines = append(b.lines[:0], line{b.function(t, n.Func), int64(cn.Line), 0})
			for n.Inlined && n.Parent > 0 {
				addr = n.CallSite
				b.lines = append(b.lines, line{b.function(t, t.Node(n.Parent).Func), int64(n.Line), 0})
				x, n = n.Parent, t.Node(n.Parent)
			}
			loc = b.dict.location(b.mapping(t.Func(n.Func).Module, m), addr, nil, b.lines)
			b.above[c] = loc
		}
		b.locs = append(b.locs, loc)
	}
	return b.dict.stack(b.locs)
}

// function is the function index of fn.
func (b *Builder) function(t *cct.Tree, fn cct.FuncID) int32 {
	if i := b.funcs[fn]; i != 0 {
		return i
	}
	f := t.Func(fn)
	i := b.dict.function(b.dict.str(f.Name), b.dict.str(f.LinkName()), b.dict.str(f.File), 0)
	b.funcs[fn] = i
	return i
}

// mapping is the mapping index of module: 0 for frames outside any.
func (b *Builder) mapping(module string, m cct.Meta) int32 {
	if module == "" {
		return 0
	}
	if i, ok := b.modules[module]; ok {
		return i
	}
	mod := m.Modules[module]
	start, limit, offset := mod.Start, mod.Limit, mod.Offset
	if start >= limit {
		// Unknown placement: a range that holds every address, so that consumers
		// checking Address against it accept the module-relative ones.
		start, limit, offset = 0, math.MaxUint64, 0
	}
	var attrs []int32
	if mod.BuildID != "" {
		attrs = append(attrs, b.dict.attrStr(AttrBuildID, mod.BuildID))
	}
	if mod.GoBuildID != "" {
		attrs = append(attrs, b.dict.attrStr(AttrGoBuildID, mod.GoBuildID))
	}
	i := b.dict.mapping(b.dict.str(module), start, limit, offset, attrs)
	b.modules[module] = i
	return i
}
