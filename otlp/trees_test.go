package otlp

import (
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

// TestRoundTrip: a tree through Append, the protobuf and JSON encodings and Trees
// comes back with the same contexts (names, modules, files, addresses, lines,
// inlining), per-thread metrics of every column, and Meta.
func TestRoundTrip(t *testing.T) {
	rich, richMeta, res := richTree()
	rt, rtMeta := runtimeTree(t)
	wall := richMeta
	wall.DefaultType = cct.WallType
	for name, c := range map[string]Process{
		"rich":        {Resource: res, Tree: rich, Meta: richMeta, Version: "v9"},
		"rich, wall":  {Resource: res, Tree: rich, Meta: wall},
		"runtime":     {Tree: rt, Meta: rtMeta},
		"no resource": {Tree: rich, Meta: cct.Meta{Calls: true, Flow: true, OffCPU: true, Wall: true}},
	} {
		for _, enc := range []string{"proto", "json"} {
			ps := mustAppend(t, c)
			var back pprofile.Profiles
			var err error
			if enc == "proto" {
				var u pprofile.ProtoUnmarshaler
				back, err = u.UnmarshalProfiles(protoBytes(t, ps))
			} else {
				var u pprofile.JSONUnmarshaler
				back, err = u.UnmarshalProfiles(jsonBytes(t, ps))
			}
			if err != nil {
				t.Fatalf("%s %s: %v", name, enc, err)
			}
			procs, err := Trees(back)
			if err != nil {
				t.Fatalf("%s %s: %v", name, enc, err)
			}
			if len(procs) != 1 {
				t.Fatalf("%s %s: %d processes", name, enc, len(procs))
			}
			got := procs[0]
			checkInvariants(t, got.Tree)
			if d, w := dump(got.Tree), dump(c.Tree); d != w {
				t.Errorf("%s %s: tree differs:\n%s\nwant\n%s", name, enc, d, w)
			}
			want := wantMeta(c.Tree, c.Meta)
			if c.Resource.PID != 0 {
				// Threads the meta does not place in a process are the resource's.
				for tid, th := range want.Threads {
					if th.PID == 0 {
						th.PID = uint32(c.Resource.PID)
						want.Threads[tid] = th
					}
				}
			}
			if !reflect.DeepEqual(got.Meta, want) {
				t.Errorf("%s %s: meta\n%+v\nwant\n%+v", name, enc, got.Meta, want)
			}
			if !reflect.DeepEqual(got.Resource, c.Resource) {
				t.Errorf("%s %s: resource %+v, want %+v", name, enc, got.Resource, c.Resource)
			}
			if got.Version != c.Version {
				t.Errorf("%s %s: version %q", name, enc, got.Version)
			}
			for i := 1; i < got.Tree.NumFuncs(); i++ {
				if f := got.Tree.Func(cct.FuncID(i)); f.Short != cct.ShortName(f.Name) {
					t.Errorf("%s: short %q", f.Name, f.Short)
				}
			}
		}
	}
}

// TestRoundTripPprof: the tree read back writes the same pprof profile's tree: what
// cctop view does with either file is the same.
func TestRoundTripPprof(t *testing.T) {
	tr, meta, res := richTree()
	procs, err := Trees(mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta}))
	if err != nil {
		t.Fatal(err)
	}
	a, am, err := cct.FromProfile(tr.Profile(meta))
	if err != nil {
		t.Fatal(err)
	}
	b, bm, err := cct.FromProfile(procs[0].Tree.Profile(procs[0].Meta))
	if err != nil {
		t.Fatal(err)
	}
	if dump(a) != dump(b) {
		t.Error("the pprof of the OTLP round trip differs from the original's")
	}
	if am.Modules["/bin/app"].BuildID != "0123456789abcdef" || !reflect.DeepEqual(am.Modules, bm.Modules) {
		t.Errorf("pprof build IDs %v and %v", am.Modules, bm.Modules)
	}
}

// foreign builds what another producer (the OpenTelemetry eBPF profiler) sends: one
// samples/count profile whose native frames have no function names, samples with
// timestamps only or several values, thread attributes sometimes missing, an off-CPU
// reason with no frame for it, and a build ID of another kind.
func foreign() pprofile.Profiles {
	ps := pprofile.NewProfiles()
	d := ps.Dictionary()
	s := func(v string) int32 { i, _ := pprofile.SetString(d.StringTable(), v); return i }
	s("")
	d.FunctionTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	attr := func(k string, v any) int32 {
		a := d.AttributeTable().AppendEmpty()
		a.SetKeyStrindex(s(k))
		_ = a.Value().FromRaw(v)
		return int32(d.AttributeTable().Len() - 1)
	}
	libc := d.MappingTable().AppendEmpty()
	libc.SetFilenameStrindex(s("/usr/lib/libc.so.6"))
	libc.SetMemoryStart(0x7f0000000000)
	libc.SetMemoryLimit(0x7f0000100000)
	libc.SetFileOffset(0x28000)
	libc.AttributeIndices().Append(attr("process.executable.build_id.htlhash", "aa"), attr(AttrBuildID, "beef"))
	fnMain := d.FunctionTable().AppendEmpty()
	fnMain.SetNameStrindex(s("main"))
	fnMain.SetFilenameStrindex(s("main.py"))
	// 1: libc, unsymbolized, inside its mapping; 2: no mapping at all; 3: main, a
	// Python frame; 4: libc, a line whose function has no name.
	l1 := d.LocationTable().AppendEmpty()
	l1.SetMappingIndex(1)
	l1.SetAddress(0x7f0000001234)
	l2 := d.LocationTable().AppendEmpty()
	l2.SetAddress(0xdead)
	l3 := d.LocationTable().AppendEmpty()
	l3.Lines().AppendEmpty().SetFunctionIndex(1)
	l3.Lines().At(0).SetLine(42)
	noname := d.FunctionTable().AppendEmpty()
	noname.SetFilenameStrindex(s("x.c"))
	l4 := d.LocationTable().AppendEmpty()
	l4.SetMappingIndex(1)
	l4.SetAddress(0x7f0000002000)
	l4.Lines().AppendEmpty().SetFunctionIndex(2)
	st := func(locs ...int32) int32 {
		d.StackTable().AppendEmpty().LocationIndices().FromRaw(locs)
		return int32(d.StackTable().Len() - 1)
	}
	s1, s2, s3 := st(1, 3), st(2, 3), st(4, 3)
	rp := ps.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr(AttrContainerID, "abc")
	rp.Resource().Attributes().PutStr("k8s.pod.name", "pod-1")
	p := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	p.SampleType().SetTypeStrindex(s("samples"))
	p.SampleType().SetUnitStrindex(s("count"))
	p.SetTime(pcommon.Timestamp(5e9))
	p.SetDurationNano(1e9)
	add := func(stack int32, values []int64, ts []uint64, attrs ...int32) {
		smp := p.Samples().AppendEmpty()
		smp.SetStackIndex(stack)
		smp.Values().FromRaw(values)
		smp.TimestampsUnixNano().FromRaw(ts)
		smp.AttributeIndices().FromRaw(attrs)
	}
	tid7, name7, pid7 := attr(AttrThreadID, int64(7)), attr(AttrThreadName, "py-worker"), attr(AttrPID, int64(77))
	add(s1, nil, []uint64{5e9 + 1, 5e9 + 2, 5e9 + 3}, tid7, name7, pid7) // 3, by timestamps
	add(s2, []int64{2, 2, 1}, []uint64{1, 2, 3}, tid7)                   // 5, per-timestamp values
	add(s1, []int64{4}, nil)                                             // 4, no thread
	add(s3, []int64{1}, nil, attr(AttrThreadID, "8"), attr(AttrOffCPUReason, "futex"))
	add(s3, nil, nil, tid7) // weighs nothing
	return ps
}

func TestTreesForeign(t *testing.T) {
	procs, err := Trees(foreign())
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 1 {
		t.Fatalf("%d processes", len(procs))
	}
	p := procs[0]
	tr, meta := p.Tree, p.Meta
	checkInvariants(t, tr)
	if got := tr.Total(); got != (cct.Metrics{Samples: 13}) {
		t.Errorf("total %+v, want 13 samples", got)
	}
	if p.Resource.ContainerID != "abc" || p.Resource.Extra["k8s.pod.name"] != "pod-1" {
		t.Errorf("resource %+v", p.Resource)
	}
	for path, want := range map[string]int64{
		// An unsymbolized address in its mapping is named by its file offset.
		"main;libc.so.6+0x29234": 7,
		"main;0xdead":            5,
		// A line whose function has no name is named the same way.
		"main;libc.so.6+0x2a000;[off-cpu: futex]": 1,
	} {
		id, ok := tr.Find(strings.Split(path, ";")...)
		if !ok {
			t.Errorf("%s not found", path)
			continue
		}
		if got := tr.Node(id).Self.Samples; got != want {
			t.Errorf("%s: %d samples, want %d", path, got, want)
		}
	}
	if id, ok := tr.Find("main"); !ok || tr.Func(tr.Node(id).Func).File != "main.py" || tr.Node(id).Line != 0 {
		t.Errorf("main frame missing or wrong")
	}
	if got := meta.Threads[7]; got != (cct.Thread{TID: 7, PID: 77, Name: "py-worker"}) {
		t.Errorf("thread 7 %+v", got)
	}
	if got := meta.Threads[8]; got != (cct.Thread{TID: 8}) {
		t.Errorf("thread 8 (id as a string) %+v", got)
	}
	if got := meta.Modules["/usr/lib/libc.so.6"]; got != (cct.Module{BuildID: "beef", Start: 0x7f0000000000, Limit: 0x7f0000100000, Offset: 0x28000}) {
		t.Errorf("libc module %+v", got)
	}
	if meta.DefaultType != "samples" || meta.SampleType != "" || meta.TimeNanos != 5e9 || meta.DurationNanos != 1e9 {
		t.Errorf("meta %+v", meta)
	}
}

// TestTreesColumns: profiles of one type add up, types cct has no field for are left
// out, and the trigger's column is found among others' names.
func TestTreesColumns(t *testing.T) {
	ps := foreign()
	sp := ps.ResourceProfiles().At(0).ScopeProfiles().At(0)
	d := ps.Dictionary()
	s := func(v string) int32 { i, _ := pprofile.SetString(d.StringTable(), v); return i }
	base := sp.Profiles().At(0)
	for _, typ := range [][2]string{{"samples", "count"}, {"alloc_space", "bytes"}, {"cpu", "nanoseconds"}} {
		p := sp.Profiles().AppendEmpty()
		base.CopyTo(p)
		p.SampleType().SetTypeStrindex(s(typ[0]))
		p.SampleType().SetUnitStrindex(s(typ[1]))
	}
	procs, err := Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	if got := procs[0].Tree.Total(); got != (cct.Metrics{Samples: 26, Time: 13}) {
		t.Errorf("total %+v: want the two samples profiles added, the cpu one as time, alloc_space left out", got)
	}
	if m := procs[0].Meta; m.SampleType != "cpu" || m.Unit != "nanoseconds" || m.DefaultType != "samples" {
		t.Errorf("meta %+v", m)
	}
}

// TestTreesBadIndices: every index Trees follows is checked, and a bad one is a
// one-line error saying where, not a panic.
func TestTreesBadIndices(t *testing.T) {
	for name, c := range map[string]struct {
		spoil func(ps pprofile.Profiles)
		want  string
	}{
		"stack": {func(ps pprofile.Profiles) {
			sample(ps).SetStackIndex(99)
		}, "stack index 99"},
		"negative stack": {func(ps pprofile.Profiles) {
			sample(ps).SetStackIndex(-1)
		}, "stack index -1"},
		"location": {func(ps pprofile.Profiles) {
			ps.Dictionary().StackTable().At(1).LocationIndices().SetAt(0, 1000)
		}, "location index 1000"},
		"mapping": {func(ps pprofile.Profiles) {
			ps.Dictionary().LocationTable().At(1).SetMappingIndex(50)
		}, "mapping index 50"},
		"mapping file": {func(ps pprofile.Profiles) {
			ps.Dictionary().MappingTable().At(1).SetFilenameStrindex(1 << 20)
		}, "string index 1048576"},
		"function": {func(ps pprofile.Profiles) {
			ps.Dictionary().LocationTable().At(3).Lines().At(0).SetFunctionIndex(7)
		}, "function index 7"},
		"function name": {func(ps pprofile.Profiles) {
			ps.Dictionary().FunctionTable().At(1).SetNameStrindex(-3)
		}, "string index -3"},
		"sample attribute": {func(ps pprofile.Profiles) {
			sample(ps).AttributeIndices().Append(400)
		}, "attribute index 400"},
		"attribute key": {func(ps pprofile.Profiles) {
			ps.Dictionary().AttributeTable().At(1).SetKeyStrindex(999)
		}, "string index 999"},
		"sample type": {func(ps pprofile.Profiles) {
			ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).SampleType().SetUnitStrindex(77)
		}, "sample unit: string index 77"},
		"profile attribute": {func(ps pprofile.Profiles) {
			ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).AttributeIndices().Append(-1)
		}, "attribute index -1"},
	} {
		ps := foreign()
		c.spoil(ps)
		procs, err := Trees(ps)
		if err == nil {
			t.Errorf("%s: no error (%d processes)", name, len(procs))
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "otlp: resource 0: ") || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line with %q", name, msg, c.want)
		}
	}
}

func sample(ps pprofile.Profiles) pprofile.Sample {
	return ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().At(0)
}

// TestTreesDeepStack: a stack of many locations of many lines is cut, under
// [truncated], as cct's pprof reader cuts it.
func TestTreesDeepStack(t *testing.T) {
	ps := foreign()
	d := ps.Dictionary()
	l := d.LocationTable().At(3)
	for range 999 {
		l.Lines().AppendEmpty().SetFunctionIndex(1)
	}
	locs := make([]int32, 100)
	for i := range locs {
		locs[i] = 3
	}
	d.StackTable().At(1).LocationIndices().FromRaw(locs)
	procs, err := Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	tr := procs[0].Tree
	if _, ok := tr.Find(cct.TruncatedName); !ok {
		t.Error("cut stack not under [truncated]")
	}
	deepest := 0
	for id := range cct.NodeID(tr.Len()) {
		if !tr.Node(id).Self.IsZero() {
			deepest = max(deepest, len(tr.Stack(id)))
		}
	}
	if deepest != maxDepth {
		t.Errorf("deepest stack %d frames, want %d", deepest, maxDepth)
	}
	checkInvariants(t, tr)
}

// TestTreesEmptyDictionary: a producer that leaves out the tables' zero entries still
// means them by index 0.
func TestTreesEmptyDictionary(t *testing.T) {
	ps := pprofile.NewProfiles()
	p := ps.ResourceProfiles().AppendEmpty().ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	s := p.Samples().AppendEmpty()
	s.Values().Append(3)
	s.AttributeIndices().Append(0)
	procs, err := Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	if got := procs[0].Tree.Node(procs[0].Tree.Root()).Self; got != (cct.Metrics{Samples: 3}) {
		t.Errorf("root self %+v, want 3 samples of an empty stack", got)
	}
	s.SetStackIndex(1)
	if _, err := Trees(ps); err == nil || !strings.Contains(err.Error(), "stack index 1") {
		t.Errorf("stack 1 of an empty table: %v", err)
	}
}
