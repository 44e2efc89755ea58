package cct

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// maxDepth bounds the frames of one imported stack. A small corrupt file can reference a
// location with many lines many times over; real unwinders stop far below this.
const maxDepth = 1 << 14

// ReadProfile reads a pprof profile, gzipped or not: cctop's own, Go's runtime/pprof and
// go test -cpuprofile, or other tools'. Input that is not a usable pprof profile gives an
// error saying so.
func ReadProfile(r io.Reader) (*Tree, Meta, error) {
	p, err := ParseProfile(r)
	if err != nil {
		return nil, Meta{}, err
	}
	return FromProfile(p)
}

// ParseProfile reads a profile in any format the pprof package reads: protobuf, gzipped or
// not, and the legacy formats (gperftools CPU and heap, old Go text profiles, Java), within
// the size bound. Frames the profile asks to drop (its drop_frames) are dropped, as pprof
// does.
func ParseProfile(r io.Reader) (*profile.Profile, error) {
	data, err := readBounded(r)
	if err != nil {
		return nil, err
	}
	// The protobuf format first, as pprof reads it; then the legacy ones, which are
	// checked for an end that says they are whole.
	p, err := profile.ParseUncompressed(data)
	if err == nil {
		err = p.CheckValid()
	} else if p, err = profile.ParseData(data); err == nil {
		if err := legacyEnd(data); err != nil {
			return nil, fmt.Errorf("not a whole profile: %w", err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile: %w", err)
	}
	if len(p.SampleType) == 0 {
		return nil, errors.New("not a pprof profile: no sample types")
	}
	if err := p.RemoveUninteresting(); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return p, nil
}

// maxProfileBytes bounds what ReadProfile reads, after decompression: a gzip bomb or an
// endless stream gets an error rather than all of memory. The largest real profiles are a
// few hundred MB. (A variable for the tests.)
var maxProfileBytes = 1 << 30

// readBounded reads a profile's protobuf bytes, decompressing gzip itself so that the
// bound holds for the decompressed size too (pprof's ParseData would inflate it whole).
func readBounded(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	switch {
	case len(head) == 0 && (err == nil || err == io.EOF):
		return nil, errors.New("not a pprof profile: empty input")
	case len(head) == 0:
		return nil, fmt.Errorf("reading profile: %w", err)
	case head[0] == 0 && !legacyCPUHeader(br):
		// A protobuf message starts with a field's tag, never 0 (field 0 does not exist),
		// and a gperftools CPU profile with its header: this is neither, and may be
		// /dev/zero.
		return nil, errors.New("not a pprof profile: it starts with a zero byte")
	}
	var in io.Reader = br
	what := "profile"
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("not a pprof profile: %w", err)
		}
		in, what = zr, "decompressed profile"
	}
	data, err := io.ReadAll(io.LimitReader(in, int64(maxProfileBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("not a pprof profile: %w", err)
	}
	if len(data) > maxProfileBytes {
		return nil, fmt.Errorf("%s larger than %d MiB: not read", what, maxProfileBytes>>20)
	}
	if len(data) == 0 {
		return nil, errors.New("not a pprof profile: empty input")
	}
	return data, nil
}

// legacyCPUHeader says whether br starts a gperftools CPU profile.
func legacyCPUHeader(br *bufio.Reader) bool {
	head, _ := br.Peek(40)
	_, _, ok := cpuFormat(head)
	return ok
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// FromProfile builds a tree from a parsed pprof profile, its time from the column of the
// trigger's time (see importColumns): FromProfileType(p, -1).
func FromProfile(p *profile.Profile) (*Tree, Meta, error) {
	return FromProfileType(p, -1)
}

// FromProfileType builds a tree from a parsed pprof profile. Value columns are matched by name
// (see importColumns); each location's lines become frames, all but the last inlined;
// thread_id, thread_name and pid labels (or tid, thread_comm) fill Meta.Threads, and
// mappings' build IDs Meta.Modules (the first one of a file wins).
// Addresses become module-relative: Address - Mapping.Start + Mapping.Offset.
//
// index picks the column shown as the tree's time (Metrics.Time), as pprof's -sample_index
// does, and Meta.SampleType and Unit name it; index < 0, or a column of time off the CPU
// (which a view shows through its mode), keeps the trigger's time column.
func FromProfileType(p *profile.Profile, index int) (*Tree, Meta, error) {
	if err := p.CheckValid(); err != nil {
		return nil, Meta{}, fmt.Errorf("not a pprof profile: %w", err)
	}
	if len(p.SampleType) == 0 {
		return nil, Meta{}, errors.New("not a pprof profile: no sample types")
	}
	if index >= len(p.SampleType) {
		return nil, Meta{}, fmt.Errorf("sample index %d: the profile has %d sample types", index, len(p.SampleType))
	}
	cols, timeType := importColumns(p.SampleType)
	if index >= 0 && p.SampleType[index].Type != OffCPUType && p.SampleType[index].Type != WallType {
		cols, timeType = bindTime(cols, index), p.SampleType[index]
	}
	meta := Meta{
		Period:        p.Period,
		TimeNanos:     p.TimeNanos,
		DurationNanos: p.DurationNanos,
		Comments:      append([]string(nil), p.Comments...),
	}
	if timeType != nil {
		meta.SampleType, meta.Unit = timeType.Type, timeType.Unit
	}
	if p.PeriodType != nil {
		meta.PeriodType = p.PeriodType.Type
	}
	for _, vt := range p.SampleType {
		switch vt.Type {
		case "calls", "calls_adjusted":
			meta.Calls = true
		case "calls_flow":
			meta.Flow = true
		case OffCPUType:
			meta.OffCPU = true
		case WallType:
			meta.Wall = true
		}
	}
	if p.DefaultSampleType != meta.SampleType {
		meta.DefaultType = p.DefaultSampleType
	}
	// Only the build ID: the mapping's range is the module-relative one of the addresses
	// below, not the segment's placement that Module.Start/Limit/Offset say.
	for _, m := range p.Mapping {
		if m.BuildID == "" || m.File == "" {
			continue
		}
		if meta.Modules == nil {
			meta.Modules = make(map[string]Module)
		}
		if _, ok := meta.Modules[m.File]; !ok {
			meta.Modules[m.File] = Module{BuildID: m.BuildID}
		}
	}

	// Without thread labels, the samples' labels (Go's goroutine labels, pprof.Do) stand
	// in for threads, one per set of labels, so that the thread filter has something to
	// filter by.
	var groups *labelGroups
	if !hasThreadLabels(p) {
		groups = &labelGroups{ids: map[string]uint32{}}
	}
	t := New()
	r := reader{t: t, frames: make(map[*profile.Location][]Frame), funcs: make(map[readFuncKey]FuncID)}
	var stack []Frame
	processes := severalProcesses(p)
	for _, s := range p.Sample {
		var m Metrics
		for _, c := range cols {
			*c.field(&m) = s.Value[c.index]
		}
		if m.IsZero() {
			continue
		}
		stack = stack[:0]
		for _, l := range s.Location {
			stack = append(stack, r.locationFrames(l)...)
			if len(stack) > maxDepth {
				stack = append(stack[:maxDepth-1], Frame{Func: t.Intern(Func{Name: TruncatedName})})
				// The frame below was cut off from the one it was inlined into.
				stack[maxDepth-2].Inlined = false
				break
			}
		}
		if processes {
			if f, ok := processOf(s); ok {
				stack = append(stack, Frame{Func: t.Intern(f)})
			}
		}
		tid, th, ok := threadOf(s)
		if !ok && groups != nil {
			tid, th, ok = groups.of(s)
		}
		if ok {
			if meta.Threads == nil {
				meta.Threads = make(map[uint32]Thread)
			}
			old := meta.Threads[tid]
			if th.Name == "" {
				th.Name = old.Name
			}
			if th.PID == 0 {
				th.PID = old.PID
			}
			meta.Threads[tid] = th
		}
		t.Add(stack, tid, m)
	}
	return t, meta, nil
}

// severalProcesses says whether p's samples are of more than one process
// (pid labels), or name their process (cctop's process label): its stacks
// then have their process as the outermost frame, as the profile's maker
// showed them (see ProcessModule).
func severalProcesses(p *profile.Profile) bool {
	first := int64(-1)
	for _, s := range p.Sample {
		if len(s.Label[labelProcess]) > 0 {
			return true
		}
		if v := firstNum(s, labelPID); v != nil {
			switch {
			case first < 0:
				first = *v
			case *v != first:
				return true
			}
		}
	}
	return false
}

// processOf is the process frame of s, from its process label, or its pid
// and comm labels.
func processOf(s *profile.Sample) (Func, bool) {
	var comm string
	if v := s.Label[labelComm]; len(v) > 0 {
		comm = v[0]
	}
	if v := s.Label[labelProcess]; len(v) > 0 && v[0] != "" {
		f := Func{Name: v[0], Module: ProcessModule, System: comm}
		f.Short = processShort(f.ProcessPID(), comm, strings.TrimSuffix(v[0], fmt.Sprintf(" [pid %d]", f.ProcessPID())))
		return f, true
	}
	if v := firstNum(s, labelPID); v != nil && *v > 0 && *v <= math.MaxUint32 {
		return ProcessFunc(uint32(*v), "", comm), true
	}
	return Func{}, false
}

// threadOf reads the thread labels of s: cctop's names first, then perf_data_converter's.
func threadOf(s *profile.Sample) (uint32, Thread, bool) {
	var th Thread
	ok := false
	if v := firstNum(s, labelThreadID, "tid"); v != nil {
		th.TID, ok = uint32(*v), true
	}
	if v := firstNum(s, labelPID); v != nil {
		th.PID = uint32(*v)
	}
	for _, k := range []string{labelThreadName, "thread_comm"} {
		if v := s.Label[k]; len(v) > 0 {
			th.Name = v[0]
			break
		}
	}
	return th.TID, th, ok
}

func hasThreadLabels(p *profile.Profile) bool {
	for _, s := range p.Sample {
		if _, _, ok := threadOf(s); ok {
			return true
		}
	}
	return false
}

// labelGroups numbers the sets of string labels of samples, from 1 in order of first
// appearance, as made-up thread ids named by the labels ("k=v, k2=v2").
type labelGroups struct {
	ids  map[string]uint32
	keys []string
}

func (g *labelGroups) of(s *profile.Sample) (uint32, Thread, bool) {
	if len(s.Label) == 0 {
		return 0, Thread{}, false
	}
	g.keys = g.keys[:0]
	for k, vs := range s.Label {
		for _, v := range vs {
			g.keys = append(g.keys, k+"="+v)
		}
	}
	if len(g.keys) == 0 {
		return 0, Thread{}, false
	}
	slices.Sort(g.keys)
	name := strings.Join(g.keys, ", ")
	id, ok := g.ids[name]
	if !ok {
		id = uint32(len(g.ids) + 1)
		g.ids[name] = id
	}
	return id, Thread{TID: id, Name: name}, true
}

func firstNum(s *profile.Sample, keys ...string) *int64 {
	for _, k := range keys {
		if v := s.NumLabel[k]; len(v) > 0 {
			return &v[0]
		}
	}
	return nil
}

type readFuncKey struct {
	fn      *profile.Function
	mapping *profile.Mapping
}

type reader struct {
	t      *Tree
	frames map[*profile.Location][]Frame
	funcs  map[readFuncKey]FuncID
}

// locationFrames expands one location into frames, innermost first: Line[0] is the
// innermost inlined call, the last line the function the pc is physically in.
func (r *reader) locationFrames(l *profile.Location) []Frame {
	if fs, ok := r.frames[l]; ok {
		return fs
	}
	addr, module := l.Address, ""
	if m := l.Mapping; m != nil {
		module = m.File
		if addr >= m.Start {
			addr = addr - m.Start + m.Offset
		}
	}
	var fs []Frame
	if len(l.Line) == 0 {
		// Unsymbolized: the address is all there is to name it by.
		id := r.t.Intern(Func{Name: fmt.Sprintf("0x%x", addr), Module: module})
		fs = append(fs, Frame{Func: id, Addr: addr})
	}
	for i, ln := range l.Line {
		fs = append(fs, Frame{
			Func:    r.function(ln.Function, l.Mapping),
			Addr:    addr,
			Line:    int(ln.Line),
			Inlined: i < len(l.Line)-1,
		})
	}
	r.frames[l] = fs
	return fs
}

func (r *reader) function(f *profile.Function, m *profile.Mapping) FuncID {
	k := readFuncKey{f, m}
	if id, ok := r.funcs[k]; ok {
		return id
	}
	fn := Func{Name: f.Name, File: f.Filename}
	if fn.Name == "" {
		fn.Name = f.SystemName
	} else if f.SystemName != "" && f.SystemName != f.Name {
		fn.System = f.SystemName
	}
	if m != nil {
		fn.Module = m.File
	}
	id := r.t.Intern(fn)
	r.funcs[k] = id
	return id
}
