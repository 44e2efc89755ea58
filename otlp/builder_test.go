package otlp

import (
	"math"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

func TestAppendResourceAndProfiles(t *testing.T) {
	tr, meta, res := richTree()
	ps := mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta, Version: "1.2.3"})
	if n := ps.ResourceProfiles().Len(); n != 1 {
		t.Fatalf("%d resource profiles, want 1", n)
	}
	rp := ps.ResourceProfiles().At(0)
	attrs := rp.Resource().Attributes()
	for k, want := range map[string]any{
		"host.name": "h1", "process.pid": int64(100), "process.executable.name": "app",
		"process.executable.path": "/bin/app", "container.id": "c0ffee", "service.name": "svc",
		"deployment.environment": "test",
	} {
		v, ok := attrs.Get(k)
		if !ok {
			t.Errorf("resource lacks %s", k)
			continue
		}
		if v.AsRaw() != want {
			t.Errorf("resource %s = %#v (%s), want %#v", k, v.AsRaw(), v.Type(), want)
		}
	}
	if rp.ScopeProfiles().Len() != 1 {
		t.Fatalf("%d scopes", rp.ScopeProfiles().Len())
	}
	sp := rp.ScopeProfiles().At(0)
	if sp.Scope().Name() != "cctop" || sp.Scope().Version() != "1.2.3" {
		t.Errorf("scope %q %q", sp.Scope().Name(), sp.Scope().Version())
	}
	var types []string
	ids := map[pprofile.ProfileID]bool{}
	for _, p := range sp.Profiles().All() {
		types = append(types, str(ps, p.SampleType().TypeStrindex())+"/"+str(ps, p.SampleType().UnitStrindex()))
		if pt := str(ps, p.PeriodType().TypeStrindex()) + "/" + str(ps, p.PeriodType().UnitStrindex()); pt != "cpu/nanoseconds" {
			t.Errorf("period type %s", pt)
		}
		if p.Period() != meta.Period || int64(p.Time()) != meta.TimeNanos || int64(p.DurationNano()) != meta.DurationNanos {
			t.Errorf("period %d time %d duration %d", p.Period(), p.Time(), p.DurationNano())
		}
		if p.ProfileID().IsEmpty() || ids[p.ProfileID()] {
			t.Errorf("profile id %v empty or repeated", p.ProfileID())
		}
		ids[p.ProfileID()] = true
		var params []string
		for _, ai := range p.AttributeIndices().All() {
			a := ps.Dictionary().AttributeTable().At(int(ai))
			if str(ps, a.KeyStrindex()) == AttrParameters && a.Value().Type() == pcommon.ValueTypeSlice {
				for _, v := range a.Value().Slice().All() {
					params = append(params, v.Str())
				}
			}
		}
		if !slices.Equal(params, meta.Comments) {
			t.Errorf("parameters %q, want %q", params, meta.Comments)
		}
	}
	// The trigger's column first: the default one.
	want := "cpu/nanoseconds samples/count calls/count calls_adjusted/count calls_flow/count offcpu/nanoseconds wall/nanoseconds"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("profiles %s\nwant %s", got, want)
	}
}

// TestAppendDefaultFirst: the column a viewer shows first is the first profile.
func TestAppendDefaultFirst(t *testing.T) {
	tr, meta, res := richTree()
	meta.DefaultType = cct.WallType
	ps := mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta})
	var types []string
	for _, p := range ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().All() {
		types = append(types, str(ps, p.SampleType().TypeStrindex()))
	}
	if want := []string{"wall", "samples", "cpu", "calls", "calls_adjusted", "calls_flow", "offcpu"}; !slices.Equal(types, want) {
		t.Errorf("profiles %v, want %v", types, want)
	}
	meta = cct.Meta{SampleType: "cycles", Unit: "count"}
	ps = mustAppend(t, Process{Tree: tr, Meta: meta})
	p := ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	if got := str(ps, p.SampleType().TypeStrindex()); got != "cycles" {
		t.Errorf("first profile %s, want the trigger's cycles", got)
	}
}

// columnSums is, per profile type, the sum of its samples' values.
func columnSums(t *testing.T, ps pprofile.Profiles) map[string]int64 {
	sums := map[string]int64{}
	for _, rp := range ps.ResourceProfiles().All() {
		for _, sp := range rp.ScopeProfiles().All() {
			for _, p := range sp.Profiles().All() {
				typ := str(ps, p.SampleType().TypeStrindex())
				sums[typ] += 0
				for _, s := range p.Samples().All() {
					if s.Values().Len() != 1 || s.Values().At(0) == 0 {
						t.Errorf("%s sample values %v: want one, not zero", typ, s.Values().AsRaw())
					}
					sums[typ] += s.Values().At(0)
				}
			}
		}
	}
	return sums
}

// TestAppendSums: every column's samples add up to the tree's self metric of that
// column, on a real profile and on the rich tree.
func TestAppendSums(t *testing.T) {
	rt, rtMeta := runtimeTree(t)
	rich, richMeta, res := richTree()
	for name, c := range map[string]struct {
		t *cct.Tree
		m cct.Meta
	}{"runtime": {rt, rtMeta}, "rich": {rich, richMeta}} {
		ps := mustAppend(t, Process{Resource: res, Tree: c.t, Meta: c.m})
		sums := columnSums(t, ps)
		cols := cct.Columns(c.m)
		if len(sums) != len(cols) {
			t.Errorf("%s: %d profiles for %d columns", name, len(sums), len(cols))
		}
		for _, col := range cols {
			var want int64
			for id := range cct.NodeID(c.t.Len()) {
				want += col.Of(c.t.Node(id).Self)
			}
			if want == 0 {
				t.Errorf("%s: column %s is zero in the tree: the test shows nothing", name, col.Type)
			}
			if sums[col.Type] != want {
				t.Errorf("%s: %s samples sum to %d, the tree's selfs to %d", name, col.Type, sums[col.Type], want)
			}
		}
	}
}

// TestAppendSamples looks at what the samples carry: stacks leaf first with inlined
// frames as lines of their outer frame's location, thread and off-CPU attributes,
// and mappings placed and identified by Meta.Modules.
func TestAppendSamples(t *testing.T) {
	tr, meta, res := richTree()
	ps := mustAppend(t, Process{Resource: res, Tree: tr, Meta: meta})
	d := ps.Dictionary()
	fname := func(l pprofile.Line) string {
		return str(ps, d.FunctionTable().At(int(l.FunctionIndex())).NameStrindex())
	}
	// stackNames renders a stack leaf first, a location's lines joined by '+'.
	stackNames := func(si int32) string {
		var parts []string
		for _, li := range d.StackTable().At(int(si)).LocationIndices().All() {
			var names []string
			for _, ln := range d.LocationTable().At(int(li)).Lines().All() {
				names = append(names, fname(ln))
			}
			parts = append(parts, strings.Join(names, "+"))
		}
		return strings.Join(parts, ";")
	}
	samples := ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(1) // samples/count
	found := map[string]map[string]string{}
	for _, s := range samples.Samples().All() {
		found[stackNames(s.StackIndex())] = sampleAttrs(ps, s.AttributeIndices().AsRaw())
	}
	if a, ok := found["ns::inner+ns::helper(int)+work;main"]; !ok {
		t.Errorf("no sample with the inlined leaf chain folded into work's location; stacks %v", keys(found))
	} else if a[AttrThreadID] != "101" || a[AttrThreadName] != "worker-1" {
		t.Errorf("inlined leaf sample attributes %v", a)
	}
	if _, ok := found["memcpy;ns::helper(int)+work;main"]; !ok {
		t.Errorf("no sample with an inlined frame in the middle; stacks %v", keys(found))
	}
	if a := found["ns::f(int);jitted;main"]; a[AttrPID] != "200" || a[AttrThreadName] != "child" {
		t.Errorf("child process's thread attributes %v: want its pid, not the resource's", a)
	}
	if a, ok := found["0x7f00;main"]; !ok || len(a) != 0 {
		t.Errorf("unknown thread 0 sample attributes %v (found %v), want none", a, ok)
	}
	if a, ok := found[""]; !ok || a[AttrThreadID] != "103" {
		t.Errorf("empty stack sample %v (found %v)", a, ok)
	}
	for stack, a := range found {
		if _, has := a[AttrPID]; has != (a[AttrThreadID] == "201") {
			t.Errorf("%s: attributes %v: process.pid should be there only for the child's thread", stack, a)
		}
	}
	// Off-CPU samples are in the offcpu profile, their reason with them.
	offcpu := ps.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(5)
	if str(ps, offcpu.SampleType().TypeStrindex()) != cct.OffCPUType {
		t.Fatal("profile 5 is not offcpu")
	}
	reasons := map[string]string{}
	for _, s := range offcpu.Samples().All() {
		reasons[stackNames(s.StackIndex())] = sampleAttrs(ps, s.AttributeIndices().AsRaw())[AttrOffCPUReason]
	}
	want := map[string]string{
		"[off-cpu: futex];do_syscall_64;work;main":       "futex",
		"[off-cpu: nanosleep];ns::helper(int)+work;main": "nanosleep",
	}
	if len(reasons) != len(want) {
		t.Errorf("off-CPU samples %v, want %v", reasons, want)
	}
	for k, v := range want {
		if reasons[k] != v {
			t.Errorf("off-CPU sample %s reason %q, want %q (all: %v)", k, reasons[k], v, reasons)
		}
	}

	// Mappings: /bin/app placed with its build ID, libc with its build ID only, the
	// others covering everything.
	maps := map[string]pprofile.Mapping{}
	for i, m := range d.MappingTable().All() {
		if i > 0 {
			maps[str(ps, m.FilenameStrindex())] = m
		}
	}
	app, libc := maps["/bin/app"], maps["/lib/libc.so.6"]
	if app.MemoryStart() != 0x1000 || app.MemoryLimit() != 0x9000 || app.FileOffset() != 0x1000 {
		t.Errorf("/bin/app mapping %#x-%#x @%#x", app.MemoryStart(), app.MemoryLimit(), app.FileOffset())
	}
	if got := sampleAttrs(ps, app.AttributeIndices().AsRaw())[AttrBuildID]; got != "0123456789abcdef" {
		t.Errorf("/bin/app build id %q", got)
	}
	if libc.MemoryStart() != 0 || libc.MemoryLimit() != math.MaxUint64 || libc.FileOffset() != 0 {
		t.Errorf("libc mapping %#x-%#x @%#x, want all addresses", libc.MemoryStart(), libc.MemoryLimit(), libc.FileOffset())
	}
	if got := sampleAttrs(ps, libc.AttributeIndices().AsRaw())[AttrBuildID]; got != "feedface" {
		t.Errorf("libc build id %q", got)
	}
	if k := maps["[kernel.kallsyms]"]; k.AttributeIndices().Len() != 0 || k.MemoryLimit() != math.MaxUint64 {
		t.Errorf("kernel mapping without a Modules entry has attributes %v or a limit %#x", k.AttributeIndices().AsRaw(), k.MemoryLimit())
	}
	if got := sampleAttrs(ps, maps["/bin/goapp"].AttributeIndices().AsRaw()); got[AttrGoBuildID] != "abc/def/ghi/jkl" || got[AttrBuildID] != "" {
		t.Errorf("Go binary's mapping attributes %v, want its Go build ID only", got)
	}
	if len(maps) != 5 {
		t.Errorf("mappings %v, want /bin/app, /bin/goapp, libc, the kernel and the perf map", keys(maps))
	}
	// Addresses are the module-relative ones, in their mapping.
	for _, l := range d.LocationTable().All() {
		if l.Lines().Len() > 0 && fname(l.Lines().At(0)) == "memcpy" && l.Address() < 0x500 {
			t.Errorf("memcpy at %#x", l.Address())
		}
		if m := d.MappingTable().At(int(l.MappingIndex())); l.MappingIndex() != 0 && (l.Address() < m.MemoryStart() || l.Address() >= m.MemoryLimit()) {
			t.Errorf("location %#x outside its mapping %#x-%#x", l.Address(), m.MemoryStart(), m.MemoryLimit())
		}
	}
	checkDictionary(t, ps)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkDictionary: every table starts with its zero entry and holds no entry twice.
func checkDictionary(t *testing.T, ps pprofile.Profiles) {
	t.Helper()
	d := ps.Dictionary()
	if d.StringTable().Len() == 0 || d.StringTable().At(0) != "" {
		t.Error("string table does not start with \"\"")
	}
	zero := []struct {
		name string
		ok   bool
	}{
		{"function", d.FunctionTable().Len() > 0 && d.FunctionTable().At(0).Equal(pprofile.NewFunction())},
		{"mapping", d.MappingTable().Len() > 0 && d.MappingTable().At(0).Equal(pprofile.NewMapping())},
		{"location", d.LocationTable().Len() > 0 && d.LocationTable().At(0).Equal(pprofile.NewLocation())},
		{"stack", d.StackTable().Len() > 0 && d.StackTable().At(0).Equal(pprofile.NewStack())},
		{"attribute", d.AttributeTable().Len() > 0 && d.AttributeTable().At(0).Equal(pprofile.NewKeyValueAndUnit())},
		{"link", d.LinkTable().Len() > 0 && d.LinkTable().At(0).Equal(pprofile.NewLink())},
	}
	for _, z := range zero {
		if !z.ok {
			t.Errorf("%s table does not start with the zero entry", z.name)
		}
	}
	dup := func(name string, n int, eq func(i, j int) bool) {
		for i := range n {
			for j := i + 1; j < n; j++ {
				if eq(i, j) {
					t.Errorf("%s %d and %d are the same", name, i, j)
				}
			}
		}
	}
	dup("string", d.StringTable().Len(), func(i, j int) bool { return d.StringTable().At(i) == d.StringTable().At(j) })
	dup("function", d.FunctionTable().Len(), func(i, j int) bool { return d.FunctionTable().At(i).Equal(d.FunctionTable().At(j)) })
	dup("mapping", d.MappingTable().Len(), func(i, j int) bool { return d.MappingTable().At(i).Equal(d.MappingTable().At(j)) })
	dup("location", d.LocationTable().Len(), func(i, j int) bool { return d.LocationTable().At(i).Equal(d.LocationTable().At(j)) })
	dup("stack", d.StackTable().Len(), func(i, j int) bool { return d.StackTable().At(i).Equal(d.StackTable().At(j)) })
	dup("attribute", d.AttributeTable().Len(), func(i, j int) bool { return d.AttributeTable().At(i).Equal(d.AttributeTable().At(j)) })
}

// TestBuilderReuse: one Builder converting windows into fresh Profiles, and twice into
// the same one, writes what a fresh Builder writes, and the second time into the same
// Profiles adds no dictionary entry (everything is found again).
func TestBuilderReuse(t *testing.T) {
	rich, richMeta, res := richTree()
	rt, rtMeta := runtimeTree(t)
	var b Builder
	for i, p := range []Process{{Resource: res, Tree: rich, Meta: richMeta}, {Tree: rt, Meta: rtMeta}, {Resource: res, Tree: rich, Meta: richMeta}} {
		ps := pprofile.NewProfiles()
		if err := b.Append(ps, p); err != nil {
			t.Fatal(err)
		}
		procs, err := Trees(ps)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dump(procs[0].Tree), dump(p.Tree); got != want {
			t.Errorf("window %d through a reused builder:\n%s\nwant\n%s", i, got, want)
		}
		checkDictionary(t, ps)
	}

	ps := pprofile.NewProfiles()
	if err := b.Append(ps, Process{Resource: res, Tree: rich, Meta: richMeta}); err != nil {
		t.Fatal(err)
	}
	d := ps.Dictionary()
	lens := func() [6]int {
		return [6]int{d.StringTable().Len(), d.FunctionTable().Len(), d.MappingTable().Len(),
			d.LocationTable().Len(), d.StackTable().Len(), d.AttributeTable().Len()}
	}
	before := lens()
	if err := b.Append(ps, Process{Resource: res, Tree: rich, Meta: richMeta}); err != nil {
		t.Fatal(err)
	}
	if after := lens(); after != before {
		t.Errorf("the same tree again grew the dictionary %v → %v", before, after)
	}
	// A new builder appending to the same Profiles finds the entries too.
	if err := Append(ps, Process{Resource: res, Tree: rich, Meta: richMeta}); err != nil {
		t.Fatal(err)
	}
	if after := lens(); after != before {
		t.Errorf("a new builder on the same profiles grew the dictionary %v → %v", before, after)
	}
	checkDictionary(t, ps)
	procs, err := Trees(ps)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 3 {
		t.Fatalf("%d processes", len(procs))
	}
	for _, p := range procs {
		if dump(p.Tree) != dump(rich) {
			t.Error("a tree appended to a shared dictionary reads back different")
		}
	}
}

func TestAppendErrors(t *testing.T) {
	ps := pprofile.NewProfiles()
	if err := Append(ps, Process{}); err == nil || !strings.HasPrefix(err.Error(), "otlp: ") {
		t.Errorf("no tree: %v", err)
	}
	ps.MarkReadOnly()
	tr, meta, _ := richTree()
	if err := Append(ps, Process{Tree: tr, Meta: meta}); err == nil {
		t.Error("appending to read-only profiles: no error")
	}
}
