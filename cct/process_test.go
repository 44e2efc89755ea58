package cct

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestProcessFunc(t *testing.T) {
	for _, c := range []struct {
		pid         uint32
		title, comm string
		want        string
	}{
		{4321, "postgres: postgres pgbench [local] SELECT", "postgres", "postgres: postgres pgbench [local] SELECT [pid 4321]"},
		{7, "/usr/bin/python3\x00app.py", "python3", "/usr/bin/python3 app.py [pid 7]"},
		{8, "  a \t b  ", "x", "a b [pid 8]"},
		{2, "", "kthreadd", "kthreadd [pid 2]"},
		{3, "", "", "? [pid 3]"},
		{9, strings.Repeat("é", 100), "long", strings.Repeat("é", maxTitle-1) + "… [pid 9]"},
	} {
		// NUL separates a command line's arguments.
		f := ProcessFunc(c.pid, strings.ReplaceAll(c.title, "\x00", " "), c.comm)
		if f.Name != c.want || !strings.HasSuffix(f.Short, fmt.Sprintf(" [pid %d]", c.pid)) || !f.IsProcess() || f.ProcessPID() != c.pid || f.Comm() != c.comm {
			t.Errorf("ProcessFunc(%d, %q, %q) = %+v (pid %d, comm %q); want %q", c.pid, c.title, c.comm, f, f.ProcessPID(), f.Comm(), c.want)
		}
	}
	if f := (Func{Name: "main [pid 3]", Module: "/bin/x"}); f.IsProcess() || f.ProcessPID() != 0 || f.Comm() != "" {
		t.Errorf("a function of a binary taken for a process: %+v", f)
	}
	if pid := (Func{Name: "x [pid 99999999999]", Module: ProcessModule}).ProcessPID(); pid != 0 {
		t.Errorf("pid past 32 bits parsed as %d", pid)
	}
}

// TestReroot: a tree of one process moved under its process frame keeps
// every context, metric and thread, one level down, and remap says where
// each node went.
func TestReroot(t *testing.T) {
	tr := New()
	mainF := tr.Intern(Func{Name: "main", Module: "/bin/app"})
	work := tr.Intern(Func{Name: "work", Module: "/bin/app"})
	leaf := tr.Intern(Func{Name: "leaf", Module: "/lib/libc.so.6"})
	tr.Add([]Frame{{Func: leaf, Addr: 0x30}, {Func: work, Addr: 0x20}, {Func: mainF, Addr: 0x10}}, 11, Metrics{Samples: 3, Time: 30})
	tr.Add([]Frame{{Func: work, Addr: 0x24}, {Func: mainF, Addr: 0x10}}, 12, Metrics{Samples: 2, Time: 20})
	tr.Add(nil, 11, Metrics{Samples: 1, Time: 10})
	before := tr.Clone()
	proc := tr.Intern(ProcessFunc(10, "app --serve", "app"))
	remap := tr.Reroot(proc)
	if len(remap) != before.Len() || tr.Len() != before.Len()+1 {
		t.Fatalf("remap of %d, tree of %d nodes, want %d and %d", len(remap), tr.Len(), before.Len(), before.Len()+1)
	}
	top := tr.Children(0)
	if len(top) != 1 || tr.Node(top[0]).Func != proc {
		t.Fatalf("roots %v, want the process alone", top)
	}
	if tr.Total() != before.Total() || tr.Node(top[0]).Total != before.Total() {
		t.Errorf("totals %+v / %+v, want %+v", tr.Total(), tr.Node(top[0]).Total, before.Total())
	}
	if tr.Node(top[0]).Self.Samples != 1 {
		t.Errorf("the empty stack's sample: process self %+v", tr.Node(top[0]).Self)
	}
	for i := 1; i < before.Len(); i++ {
		o, n := before.Node(NodeID(i)), tr.Node(remap[i])
		if o.Func != n.Func || o.Self != n.Self || o.Total != n.Total || o.CallSite != n.CallSite {
			t.Errorf("node %d: %+v became %+v", i, o, n)
		}
		want := append(before.Stack(NodeID(i)), Frame{Func: proc})
		if got := tr.Stack(remap[i]); len(got) != len(want) || got[len(got)-1].Func != proc {
			t.Errorf("node %d: stack %v, want %v", i, got, want)
		}
		if a, b := before.Threads(NodeID(i)), tr.Threads(remap[i]); len(a) != len(b) {
			t.Errorf("node %d: threads %v became %v", i, a, b)
		}
	}
	// New samples find the moved contexts.
	n := tr.Len()
	id := tr.Add([]Frame{{Func: work, Addr: 0x24}, {Func: mainF, Addr: 0x10}, {Func: proc}}, 12, Metrics{Samples: 1})
	if tr.Len() != n || tr.Node(id).Self.Samples != 3 {
		t.Errorf("a new sample of a moved context made node %d of %d (self %+v)", id, tr.Len(), tr.Node(id).Self)
	}
	checkInvariants(t, tr)
}

// TestProcessPprof: a tree of two processes is written with each process as
// labels (process, comm, pid), no location of it, and read back the same;
// a profile of another profiler with pid and comm labels of two processes
// reads with them as the first level.
func TestProcessPprof(t *testing.T) {
	tr := New()
	f := tr.Intern(Func{Name: "exec_simple_query", Module: "/usr/lib/postgresql/15/bin/postgres"})
	g := tr.Intern(Func{Name: "main", Module: "/usr/bin/pgbench"})
	pg := tr.Intern(ProcessFunc(4321, "postgres: postgres pgbench [local] SELECT", "postgres"))
	pb := tr.Intern(ProcessFunc(4300, "pgbench -S -c 4", "pgbench"))
	tr.Add([]Frame{{Func: f, Addr: 0x100}, {Func: pg}}, 4321, Metrics{Samples: 5, Time: 50})
	tr.Add([]Frame{{Func: g, Addr: 0x200}, {Func: pb}}, 4300, Metrics{Samples: 2, Time: 20})
	meta := Meta{SampleType: "cpu", Unit: "nanoseconds", Threads: map[uint32]Thread{
		4321: {TID: 4321, PID: 4321, Name: "postgres"}, 4300: {TID: 4300, PID: 4300, Name: "pgbench"}}}
	p := tr.Profile(meta)
	for _, l := range p.Location {
		for _, ln := range l.Line {
			if ln.Function.Name == ProcessModule || strings.Contains(ln.Function.Name, "[pid ") {
				t.Errorf("a process written as a location: %s", ln.Function.Name)
			}
		}
	}
	if p.Mapping[0].File != "/usr/lib/postgresql/15/bin/postgres" && p.Mapping[0].File != "/usr/bin/pgbench" {
		t.Errorf("first mapping %s, want a process's binary", p.Mapping[0].File)
	}
	for _, s := range p.Sample {
		pid := s.NumLabel["pid"][0]
		want := map[int64][2]string{4321: {"postgres: postgres pgbench [local] SELECT [pid 4321]", "postgres"}, 4300: {"pgbench -S -c 4 [pid 4300]", "pgbench"}}[pid]
		if s.Label["process"][0] != want[0] || s.Label["comm"][0] != want[1] {
			t.Errorf("pid %d: labels %v", pid, s.Label)
		}
	}
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadProfile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if d, w := dump(got), dump(tr); d != w {
		t.Errorf("round trip differs:\n%s\nwant:\n%s", d, w)
	}
	for _, k := range got.Children(0) {
		f := got.Func(got.Node(k).Func)
		if want := tr.Func(map[string]FuncID{"postgres": pg, "pgbench": pb}[f.Comm()]); f.Short != want.Short || f.Short == "" {
			t.Errorf("process read back as %+v, written as %+v", f, want)
		}
	}

	// perf_data_converter's shape: pid and comm, no process label.
	fn := &profile.Function{ID: 1, Name: "spin"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	foreign := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
	for _, pid := range []int64{10, 20, 20} {
		foreign.Sample = append(foreign.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1},
			NumLabel: map[string][]int64{"pid": {pid}, "tid": {pid}}, Label: map[string][]string{"comm": {"w" + string(rune('0'+pid/10))}}})
	}
	ft, _, err := FromProfile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range ft.Children(0) {
		names = append(names, ft.Func(ft.Node(c).Func).Name)
	}
	if strings.Join(names, "|") != "w2 [pid 20]|w1 [pid 10]" {
		t.Errorf("first level of a two-process profile: %q", names)
	}
	// One process: no level of it.
	foreign.Sample = foreign.Sample[1:]
	if ft, _, _ = FromProfile(foreign); ft.Func(ft.Node(ft.Children(0)[0]).Func).IsProcess() {
		t.Error("a one-process profile read with a process level")
	}
}
