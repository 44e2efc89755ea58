package cct

import (
	"bytes"
	"testing"
)

// TestCallsColumns: call estimates set on existing contexts travel through
// pprof as calls/count and calls_adjusted/count, after samples and time.
func TestCallsColumns(t *testing.T) {
	tr := New()
	leaf := tr.Intern(Func{Name: "leaf"})
	c := tr.Intern(Func{Name: "siteC"})
	d := tr.Intern(Func{Name: "siteD"})
	nc := tr.Add([]Frame{{Func: leaf, Addr: 1}, {Func: c, Addr: 2}}, 7, Metrics{Samples: 10, Time: 10e6})
	nd := tr.Add([]Frame{{Func: leaf, Addr: 1}, {Func: d, Addr: 3}}, 7, Metrics{Samples: 20, Time: 20e6})
	tr.AddSelf(nc, 7, Metrics{Calls: 1000, CallsAdj: 990})
	tr.AddSelf(nd, 7, Metrics{Calls: 1000, CallsAdj: 980})
	if got := tr.Total(); got.Calls != 2000 || got.CallsAdj != 1970 || got.Samples != 30 {
		t.Fatalf("total %+v", got)
	}
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, Meta{Calls: true}); err != nil {
		t.Fatal(err)
	}
	p := tr.Profile(Meta{Calls: true})
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	want := []string{"samples/count", "cpu/nanoseconds", "calls/count", "calls_adjusted/count"}
	if len(types) != 4 || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] || types[3] != want[3] {
		t.Fatalf("sample types %v, want %v", types, want)
	}
	back, meta, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Calls {
		t.Error("Meta.Calls lost")
	}
	id, ok := back.Find("siteD", "leaf")
	if !ok {
		t.Fatal("siteD;leaf missing")
	}
	if n := back.Node(id); n.Self.Calls != 1000 || n.Self.CallsAdj != 980 || n.Self.Samples != 20 {
		t.Errorf("siteD;leaf self %+v", n.Self)
	}
	tr.ClearCalls()
	if got := tr.Total(); got.Calls != 0 || got.CallsAdj != 0 || got.Samples != 30 {
		t.Errorf("after ClearCalls: %+v", got)
	}
	if th := tr.Threads(nc); len(th) != 1 || th[0].Self.Calls != 0 {
		t.Errorf("thread selfs after ClearCalls: %+v", th)
	}
}

// TestFlowColumn: control-flow-corrected calls travel as calls_flow/count
// after the other call columns, a context that holds only them (an edge
// predicted where no sample fell) included, and ClearCalls clears them.
func TestFlowColumn(t *testing.T) {
	tr := New()
	run := tr.Intern(Func{Name: "run"})
	hot := tr.Intern(Func{Name: "hot"})
	cold := tr.Intern(Func{Name: "cold"})
	nh := tr.Add([]Frame{{Func: hot, Addr: 1}, {Func: run, Addr: 0x10}}, 7, Metrics{Samples: 30, Time: 30e6})
	tr.AddSelf(nh, 7, Metrics{CallsFlow: 15})
	np := tr.Add([]Frame{{Func: cold}, {Func: run, Addr: 0x20}}, 7, Metrics{CallsFlow: 15})
	m := Meta{Flow: true}
	var types []string
	for _, st := range tr.Profile(m).SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if len(types) != 3 || types[2] != "calls_flow/count" {
		t.Fatalf("sample types %v", types)
	}
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, m); err != nil {
		t.Fatal(err)
	}
	back, meta, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Flow || meta.Calls {
		t.Errorf("meta flow %v calls %v", meta.Flow, meta.Calls)
	}
	for name, want := range map[string]Metrics{"hot": {Samples: 30, Time: 30e6, CallsFlow: 15}, "cold": {CallsFlow: 15}} {
		id, ok := back.Find("run", name)
		if !ok {
			t.Fatalf("run;%s lost", name)
		}
		if got := back.Node(id).Self; got != want {
			t.Errorf("run;%s self %+v, want %+v", name, got, want)
		}
	}
	if n := tr.Node(np); n.CallSite != 0x20 {
		t.Errorf("the predicted edge's call site %#x, want 0x20", n.CallSite)
	}
	tr.ClearCalls()
	if got := tr.Total(); got.CallsFlow != 0 || got.Samples != 30 {
		t.Errorf("after ClearCalls: %+v", got)
	}
}
