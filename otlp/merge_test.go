package otlp

import (
	"slices"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
)

// TestMergeWindows: windows of one process add up into one tree with no process
// frame, and the meta covers them all.
func TestMergeWindows(t *testing.T) {
	tr, meta, res := richTree()
	later := meta
	later.TimeNanos += 10e9
	later.Comments = append(slices.Clone(meta.Comments), "window=2")
	rt, rtMeta := runtimeTree(t)
	rtMeta.SampleType, rtMeta.Unit = meta.SampleType, meta.Unit
	rtMeta.TimeNanos, rtMeta.DurationNanos = meta.TimeNanos+5e9, 1e9
	procs := []Process{
		{Resource: res, Tree: tr, Meta: meta},
		{Resource: res, Tree: rt, Meta: rtMeta},
		{Resource: res, Tree: tr, Meta: later},
	}
	got, gotMeta := Merge(procs)
	want := cct.New()
	for _, p := range procs {
		want.Merge(p.Tree)
	}
	if dump(got) != dump(want) {
		t.Errorf("windows of one process merged:\n%s\nwant\n%s", dump(got), dump(want))
	}
	if gotMeta.TimeNanos != meta.TimeNanos || gotMeta.DurationNanos != 10e9+meta.DurationNanos {
		t.Errorf("span %d+%d", gotMeta.TimeNanos, gotMeta.DurationNanos)
	}
	if !slices.Contains(gotMeta.Comments, "window=2") || !slices.Contains(gotMeta.Comments, "trigger=time") || len(gotMeta.Comments) != 4 {
		t.Errorf("comments %q", gotMeta.Comments)
	}
	if len(gotMeta.Threads) != len(meta.Threads) || gotMeta.Modules["/bin/app"].BuildID == "" {
		t.Errorf("threads %v modules %v", gotMeta.Threads, gotMeta.Modules)
	}
}

// TestMergeProcesses: different processes stay apart under root frames naming them.
func TestMergeProcesses(t *testing.T) {
	tr, meta, res := richTree()
	rt, rtMeta := runtimeTree(t)
	rtMeta.SampleType, rtMeta.Unit = meta.SampleType, meta.Unit
	py := Resource{ExecutablePath: "/usr/bin/python3", PID: 1234, HostName: "h1"}
	otherHost := res
	otherHost.HostName = "h2"
	procs := []Process{
		{Resource: res, Tree: tr, Meta: meta},
		{Resource: py, Tree: rt, Meta: rtMeta},
		{Resource: res, Tree: tr, Meta: meta},
		{Resource: otherHost, Tree: tr, Meta: meta},
	}
	got, _ := Merge(procs)
	checkInvariants(t, got)
	var roots []string
	for _, c := range got.Children(got.Root()) {
		roots = append(roots, got.Func(got.Node(c).Func).Name)
	}
	slices.Sort(roots)
	if want := []string{"[app 100 @h2]", "[app 100]", "[python3 1234]"}; !slices.Equal(roots, want) {
		t.Fatalf("root frames %q, want %q", roots, want)
	}
	total := func(name string) cct.Metrics {
		id, ok := got.Find(name)
		if !ok {
			t.Fatalf("%s not found", name)
		}
		return got.Node(id).Total
	}
	twice := tr.Total()
	twice.Add(tr.Total())
	if total("[app 100]") != twice {
		t.Errorf("[app 100] total %+v, want its two windows' %+v", total("[app 100]"), twice)
	}
	if total("[python3 1234]") != rt.Total() || total("[app 100 @h2]") != tr.Total() {
		t.Error("process totals differ from their trees'")
	}
	// Below its frame, a process's tree is the same as it was.
	if id, ok := got.Find("[app 100]", "main", "work", "ns::helper(int)", "ns::inner"); !ok || got.Node(id).Self.Samples != 10 {
		t.Errorf("inlined leaf under [app 100] missing or wrong")
	}
	sub := got.FilterThreads(func(tid uint32) bool { return tid == 201 })
	if id, ok := sub.Find("[app 100]", "main", "jitted", "ns::f(int)"); !ok || sub.Node(id).Self.Samples != 8 {
		t.Error("thread 201's contexts under [app 100] missing or wrong")
	}
}

// TestMergeTimeUnits: a process whose trigger metric is in other units does not add
// its Time to the first one's, and a comment says so; its samples still count.
func TestMergeTimeUnits(t *testing.T) {
	tr, meta, res := richTree()
	cyc := cct.New()
	main := cyc.Intern(cct.Func{Name: "main", Module: "/bin/c"})
	cyc.Add([]cct.Frame{{Func: main, Addr: 1}}, 5, cct.Metrics{Samples: 2, Time: 2e6})
	got, gotMeta := Merge([]Process{
		{Resource: res, Tree: tr, Meta: meta},
		{Resource: Resource{PID: 9, ExecutableName: "c"}, Tree: cyc, Meta: cct.Meta{SampleType: "cycles", Unit: "count"}},
	})
	want := tr.Total()
	want.Samples += 2
	if got.Total() != want {
		t.Errorf("total %+v, want %+v", got.Total(), want)
	}
	if !slices.ContainsFunc(gotMeta.Comments, func(c string) bool { return strings.Contains(c, "cycles/count") }) {
		t.Errorf("no comment on the time left out: %q", gotMeta.Comments)
	}
	if gotMeta.SampleType != "cpu" {
		t.Errorf("meta %+v", gotMeta)
	}
}

func TestMergeEmpty(t *testing.T) {
	tr, meta := Merge(nil)
	if tr == nil || tr.Len() != 1 || meta.SampleType != "" {
		t.Errorf("empty merge: %d nodes, meta %+v", tr.Len(), meta)
	}
}
