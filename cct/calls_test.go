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
