package otlp

import (
	"fmt"
	"path/filepath"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

// maxDepth bounds the frames of one stack read, as cct's pprof reader does: a small
// corrupt message can name a location of many lines many times over.
const maxDepth = 1 << 14

// Trees rebuilds a tree and its Meta per ResourceProfiles of ps, from the profiles of
// all its scopes:
//
//   - Each profile is one value column, matched to cct's metrics by sample type name
//     and unit as cct's pprof reader matches columns (cct.ImportColumns): samples/count,
//     cpu/nanoseconds or the trigger's type, calls/count... Profiles of one type add up;
//     a type cct has no field for is left out. The first profile's type is the default
//     one (Meta.DefaultType when not the trigger's).
//   - A sample's value is the sum of its values, or with timestamps only, their count.
//   - Locations' lines become frames, all but the last inlined into the next; a frame
//     with no function name is named module+0xoffset (the file offset, when the address
//     is within its mapping) or 0xaddress.
//   - thread.id, thread.name and process.pid sample attributes fill Meta.Threads (the
//     resource's pid when the sample has none); a sample with an off-CPU reason
//     attribute whose leaf is not cct's off-CPU frame gets one.
//   - Mappings give Meta.Modules their build IDs and placement; the parameters
//     attribute, Meta.Comments; the profiles' times, the span they cover.
//
// Every index followed into the dictionary is checked: an index out of its table is
// an error naming where it is.
func Trees(ps pprofile.Profiles) ([]Process, error) {
	r := newReader(ps.Dictionary())
	var out []Process
	for i, rp := range ps.ResourceProfiles().All() {
		p, err := r.resource(rp)
		if err != nil {
			return nil, fmt.Errorf("otlp: resource %d: %w", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// attrInfo is what a sample attribute says, decoded once per attribute index.
type attrInfo struct {
	done bool
	key  string
	v    pcommon.Value
}

type funcKey struct{ fn, mapping int32 }

// reader decodes the profiles of one dictionary. Its caches of frames and functions
// hold FuncIDs of the tree being built, so they are cleared per resource.
type reader struct {
	d       pprofile.ProfilesDictionary
	attrs   []attrInfo
	locs    map[int32][]cct.Frame
	funcs   map[funcKey]cct.FuncID
	modules map[string]cct.Module
	t       *cct.Tree
	frames  []cct.Frame
}

func newReader(d pprofile.ProfilesDictionary) *reader {
	return &reader{
		d:     d,
		attrs: make([]attrInfo, d.AttributeTable().Len()),
		locs:  make(map[int32][]cct.Frame),
		funcs: make(map[funcKey]cct.FuncID),
	}
}

// Index 0 of every table is the zero entry ("", no function, the empty stack...): a
// producer that leaves a table empty still means that by 0, and it reads so.

func (r *reader) str(i int32) (string, error) {
	if i == 0 && r.d.StringTable().Len() == 0 {
		return "", nil
	}
	if i < 0 || int(i) >= r.d.StringTable().Len() {
		return "", fmt.Errorf("string index %d out of range [0, %d)", i, r.d.StringTable().Len())
	}
	return r.d.StringTable().At(int(i)), nil
}

// prof is one profile of a resource and the column its type is.
type prof struct {
	p    pprofile.Profile
	typ  int
	name string
}

func (r *reader) resource(rp pprofile.ResourceProfiles) (Process, error) {
	proc := Process{Resource: resourceOf(rp.Resource().Attributes())}
	clear(r.locs)
	clear(r.funcs)
	r.modules = nil
	r.t = cct.New()

	// The columns: every distinct sample type, in order of first appearance.
	var types []*profile.ValueType
	var profs []prof
	typeIndex := map[[2]string]int{}
	for si, sp := range rp.ScopeProfiles().All() {
		if proc.Version == "" {
			proc.Version = sp.Scope().Version()
		}
		for pi, p := range sp.Profiles().All() {
			name := fmt.Sprintf("scope %d, profile %d", si, pi)
			typ, err := r.str(p.SampleType().TypeStrindex())
			if err != nil {
				return proc, fmt.Errorf("%s: sample type: %w", name, err)
			}
			unit, err := r.str(p.SampleType().UnitStrindex())
			if err != nil {
				return proc, fmt.Errorf("%s: sample unit: %w", name, err)
			}
			i, ok := typeIndex[[2]string{typ, unit}]
			if !ok {
				i = len(types)
				typeIndex[[2]string{typ, unit}] = i
				types = append(types, &profile.ValueType{Type: typ, Unit: unit})
			}
			profs = append(profs, prof{p, i, fmt.Sprintf("%s (%q)", name, typ+"/"+unit)})
		}
	}
	meta, err := r.meta(types, profs)
	if err != nil {
		return proc, err
	}
	bound, _ := cct.ImportColumns(types)
	fields := make([][]cct.Column, len(types))
	for _, b := range bound {
		fields[b.Index] = append(fields[b.Index], b.Column)
	}

	for _, pr := range profs {
		if len(fields[pr.typ]) == 0 {
			continue
		}
		for i, s := range pr.p.Samples().All() {
			if err := r.sample(s, fields[pr.typ], &proc, &meta); err != nil {
				return proc, fmt.Errorf("%s, sample %d: %w", pr.name, i, err)
			}
		}
	}
	meta.Modules = r.modules
	proc.Tree, proc.Meta = r.t, meta
	return proc, nil
}

// meta is what the profiles of a resource say besides their samples.
func (r *reader) meta(types []*profile.ValueType, profs []prof) (cct.Meta, error) {
	var m cct.Meta
	if len(profs) == 0 {
		return m, nil
	}
	_, tm := cct.ImportColumns(types)
	if tm >= 0 {
		m.SampleType, m.Unit = types[tm].Type, types[tm].Unit
	}
	for _, vt := range types {
		switch vt.Type {
		case "calls", "calls_adjusted":
			m.Calls = true
		case "calls_flow":
			m.Flow = true
		case cct.OffCPUType:
			m.OffCPU = true
		case cct.WallType:
			m.Wall = true
		}
	}
	if def := types[profs[0].typ].Type; def != m.SampleType {
		m.DefaultType = def
	}
	// The period of the trigger's column, else of the first.
	pp := profs[0]
	for _, pr := range profs {
		if pr.typ == tm {
			pp = pr
			break
		}
	}
	pt, err := r.str(pp.p.PeriodType().TypeStrindex())
	if err != nil {
		return m, fmt.Errorf("%s: period type: %w", pp.name, err)
	}
	m.PeriodType, m.Period = pt, pp.p.Period()

	var start, end uint64
	for _, pr := range profs {
		t := uint64(pr.p.Time())
		if t == 0 {
			continue
		}
		if start == 0 || t < start {
			start = t
		}
		end = max(end, t+pr.p.DurationNano())
	}
	if start <= end && end-start <= 1<<63-1 && start <= 1<<63-1 {
		m.TimeNanos, m.DurationNanos = int64(start), int64(end-start)
	}

	seen, seenAttr := map[string]bool{}, map[int32]bool{}
	for _, pr := range profs {
		for _, ai := range pr.p.AttributeIndices().All() {
			a, err := r.attr(ai)
			if err != nil {
				return m, fmt.Errorf("%s: %w", pr.name, err)
			}
			if a.key != AttrParameters || seenAttr[ai] {
				continue
			}
			seenAttr[ai] = true
			var params []string
			if a.v.Type() == pcommon.ValueTypeSlice {
				for _, v := range a.v.Slice().All() {
					params = append(params, v.AsString())
				}
			} else {
				params = append(params, a.v.AsString())
			}
			for _, c := range params {
				if !seen[c] {
					seen[c] = true
					m.Comments = append(m.Comments, c)
				}
			}
		}
	}
	return m, nil
}

// attr decodes attribute i of the dictionary's table, once.
func (r *reader) attr(i int32) (*attrInfo, error) {
	if i == 0 && len(r.attrs) == 0 {
		return &attrInfo{done: true, v: pcommon.NewValueEmpty()}, nil
	}
	if i < 0 || int(i) >= len(r.attrs) {
		return nil, fmt.Errorf("attribute index %d out of range [0, %d)", i, len(r.attrs))
	}
	a := &r.attrs[i]
	if !a.done {
		kv := r.d.AttributeTable().At(int(i))
		k, err := r.str(kv.KeyStrindex())
		if err != nil {
			return nil, fmt.Errorf("attribute %d key: %w", i, err)
		}
		a.key, a.v, a.done = k, kv.Value(), true
	}
	return a, nil
}

// sampleValue is what one sample weighs: the sum of its values, or one per timestamp
// when it has only timestamps.
func sampleValue(s pprofile.Sample) int64 {
	if s.Values().Len() == 0 {
		return int64(s.TimestampsUnixNano().Len())
	}
	var v int64
	for _, x := range s.Values().All() {
		v += x
	}
	return v
}

func (r *reader) sample(s pprofile.Sample, fields []cct.Column, proc *Process, meta *cct.Meta) error {
	v := sampleValue(s)
	if v == 0 {
		return nil
	}
	var m cct.Metrics
	for _, c := range fields {
		c.AddTo(&m, v)
	}
	frames, err := r.stack(s.StackIndex())
	if err != nil {
		return err
	}
	var th cct.Thread
	var known bool
	var reason string
	for _, ai := range s.AttributeIndices().All() {
		a, err := r.attr(ai)
		if err != nil {
			return err
		}
		switch a.key {
		case AttrThreadID:
			th.TID, known = uint32(intOf(a.v)), true
		case AttrThreadName:
			th.Name = a.v.AsString()
		case AttrPID:
			th.PID = uint32(intOf(a.v))
		case AttrOffCPUReason:
			reason = a.v.AsString()
		}
	}
	if reason != "" && (len(frames) == 0 || !r.isOffCPU(frames[0], reason)) {
		// A producer that says why but has no frame for it: the frame cct would have.
		f := r.t.Intern(cct.Func{Name: cct.OffCPUFrame(reason)})
		frames = append(frames, cct.Frame{})
		copy(frames[1:], frames)
		frames[0] = cct.Frame{Func: f}
		r.frames = frames
	}
	if known {
		if meta.Threads == nil {
			meta.Threads = make(map[uint32]cct.Thread)
		}
		old := meta.Threads[th.TID]
		if th.Name == "" {
			th.Name = old.Name
		}
		if th.PID == 0 {
			th.PID = old.PID
		}
		if th.PID == 0 && proc.Resource.PID > 0 && proc.Resource.PID <= 1<<32-1 {
			th.PID = uint32(proc.Resource.PID)
		}
		meta.Threads[th.TID] = th
	}
	r.t.Add(frames, th.TID, m)
	return nil
}

func (r *reader) isOffCPU(f cct.Frame, reason string) bool {
	got, ok := cct.OffCPUReason(r.t.Func(f.Func).Name)
	return ok && got == reason
}

// stack is the frames of stack i, leaf first, in a buffer valid until the next call.
// Stacks are not cached, as locations are: a small message can have many stacks of
// one deep location, and their frames would take all of memory.
func (r *reader) stack(i int32) ([]cct.Frame, error) {
	r.frames = r.frames[:0]
	if i == 0 && r.d.StackTable().Len() == 0 {
		return r.frames, nil
	}
	if i < 0 || int(i) >= r.d.StackTable().Len() {
		return nil, fmt.Errorf("stack index %d out of range [0, %d)", i, r.d.StackTable().Len())
	}
	for _, li := range r.d.StackTable().At(int(i)).LocationIndices().All() {
		lf, err := r.location(li)
		if err != nil {
			return nil, fmt.Errorf("stack %d: %w", i, err)
		}
		r.frames = append(r.frames, lf...)
		if len(r.frames) > maxDepth {
			r.frames = append(r.frames[:maxDepth-1], cct.Frame{Func: r.t.Intern(cct.Func{Name: cct.TruncatedName})})
			// The frame below was cut off from the one it was inlined into.
			r.frames[maxDepth-2].Inlined = false
			break
		}
	}
	return r.frames, nil
}

// location is the frames of location i, innermost first.
func (r *reader) location(i int32) ([]cct.Frame, error) {
	if fs, ok := r.locs[i]; ok {
		return fs, nil
	}
	if i < 0 || int(i) >= r.d.LocationTable().Len() {
		return nil, fmt.Errorf("location index %d out of range [0, %d)", i, r.d.LocationTable().Len())
	}
	l := r.d.LocationTable().At(int(i))
	mi := l.MappingIndex()
	module, unnamed, err := r.mapping(mi, l.Address())
	if err != nil {
		return nil, fmt.Errorf("location %d: %w", i, err)
	}
	var fs []cct.Frame
	lines := l.Lines()
	if lines.Len() == 0 {
		fs = append(fs, cct.Frame{Func: r.t.Intern(cct.Func{Name: unnamed, Module: module}), Addr: l.Address()})
	}
	for k, ln := range lines.All() {
		if k == maxDepth {
			break
		}
		fn, err := r.function(ln.FunctionIndex(), mi, module, unnamed)
		if err != nil {
			return nil, fmt.Errorf("location %d line %d: %w", i, k, err)
		}
		fs = append(fs, cct.Frame{Func: fn, Addr: l.Address(), Line: int(ln.Line()), Inlined: k < lines.Len()-1})
	}
	r.locs[i] = fs
	return fs, nil
}

// mapping is the file of mapping i (0: none) and the name of a frame at addr in it
// that has no function name. It records what the mapping says of its module.
func (r *reader) mapping(i int32, addr uint64) (module, unnamed string, err error) {
	if i == 0 {
		return "", fmt.Sprintf("0x%x", addr), nil
	}
	if i < 0 || int(i) >= r.d.MappingTable().Len() {
		return "", "", fmt.Errorf("mapping index %d out of range [0, %d)", i, r.d.MappingTable().Len())
	}
	m := r.d.MappingTable().At(int(i))
	if module, err = r.str(m.FilenameStrindex()); err != nil {
		return "", "", fmt.Errorf("mapping %d file: %w", i, err)
	}
	placed := m.MemoryStart() < m.MemoryLimit() && !(m.MemoryStart() == 0 && m.MemoryLimit() == ^uint64(0) && m.FileOffset() == 0)
	off := addr
	if placed && addr >= m.MemoryStart() && addr < m.MemoryLimit() {
		off = addr - m.MemoryStart() + m.FileOffset()
	}
	if module == "" {
		return "", fmt.Sprintf("0x%x", addr), nil
	}
	unnamed = fmt.Sprintf("%s+0x%x", filepath.Base(module), off)
	if _, done := r.modules[module]; done {
		return module, unnamed, nil
	}
	var mod cct.Module
	if placed {
		mod.Start, mod.Limit, mod.Offset = m.MemoryStart(), m.MemoryLimit(), m.FileOffset()
	}
	for _, ai := range m.AttributeIndices().All() {
		a, err := r.attr(ai)
		if err != nil {
			return "", "", fmt.Errorf("mapping %d: %w", i, err)
		}
		switch a.key {
		case AttrBuildID:
			mod.BuildID = a.v.AsString()
		case AttrGoBuildID:
			mod.GoBuildID = a.v.AsString()
		}
	}
	if mod != (cct.Module{}) {
		if r.modules == nil {
			r.modules = make(map[string]cct.Module)
		}
		r.modules[module] = mod
	}
	return module, unnamed, nil
}

// function interns function i as seen in mapping mi.
func (r *reader) function(i, mi int32, module, unnamed string) (cct.FuncID, error) {
	k := funcKey{i, mi}
	if id, ok := r.funcs[k]; ok {
		return id, nil
	}
	if i == 0 && r.d.FunctionTable().Len() == 0 {
		return r.t.Intern(cct.Func{Name: unnamed, Module: module}), nil
	}
	if i < 0 || int(i) >= r.d.FunctionTable().Len() {
		return 0, fmt.Errorf("function index %d out of range [0, %d)", i, r.d.FunctionTable().Len())
	}
	f := r.d.FunctionTable().At(int(i))
	name, err := r.str(f.NameStrindex())
	if err != nil {
		return 0, fmt.Errorf("function %d name: %w", i, err)
	}
	system, err := r.str(f.SystemNameStrindex())
	if err != nil {
		return 0, fmt.Errorf("function %d system name: %w", i, err)
	}
	file, err := r.str(f.FilenameStrindex())
	if err != nil {
		return 0, fmt.Errorf("function %d file: %w", i, err)
	}
	fn := cct.Func{Name: name, File: file, Module: module}
	switch {
	case name == "" && system == "":
		// Nothing names it but where it is: unlike a named function, every address
		// is its own frame, so it is not cached by function index.
		return r.t.Intern(cct.Func{Name: unnamed, File: file, Module: module}), nil
	case name == "":
		fn.Name = system
	case system != name:
		fn.System = system
	}
	id := r.t.Intern(fn)
	r.funcs[k] = id
	return id, nil
}
