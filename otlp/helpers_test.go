package otlp

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

var update = flag.Bool("update", false, "rewrite generated testdata (the fuzz seed corpus)")

// richTree has what a cctop profile can carry: several modules (one placed by
// Meta.Modules, one with a build ID only, one unknown, frames outside any), several
// threads of two processes and an unknown one, inlined frames at the leaf and in the
// middle of stacks, recursion, call-site splitting, a demangled name, off-CPU leaves
// with reasons, call estimates on contexts, and an empty stack.
func richTree() (*cct.Tree, cct.Meta, Resource) {
	tr := cct.New()
	fn := func(name, module, file string) cct.FuncID {
		return tr.Intern(cct.Func{Name: name, Module: module, File: file})
	}
	main := fn("main", "/bin/app", "main.c")
	work := fn("work", "/bin/app", "work.c")
	inl := fn("ns::helper(int)", "/bin/app", "helper.h")
	inl2 := fn("ns::inner", "/bin/app", "inner.h")
	memcpy := fn("memcpy", "/lib/libc.so.6", "")
	rec := fn("github.com/x/y/pkg.(*T).Rec", "/bin/app", "rec.go")
	anon := fn("0x7f00", "", "")
	demangled := tr.Intern(cct.Func{Name: "ns::f(int)", System: "_ZN2ns1fEi", Module: "/bin/app", File: "f.cc"})
	futex := tr.Intern(cct.Func{Name: cct.OffCPUFrame("futex")})
	sleep := tr.Intern(cct.Func{Name: cct.OffCPUFrame("nanosleep")})
	sys := fn("do_syscall_64", "[kernel.kallsyms]", "")
	jit := fn("jitted", "/tmp/perf-100.map", "")
	goFn := fn("main.serve", "/bin/goapp", "serve.go")

	on := func(n int64) cct.Metrics { return cct.Metrics{Samples: n, Time: n * 1e6, Wall: n * 1e6} }
	off := func(ns int64) cct.Metrics { return cct.Metrics{OffCPU: ns, Wall: ns} }
	add := func(tid uint32, m cct.Metrics, frames ...cct.Frame) cct.NodeID { return tr.Add(frames, tid, m) }

	a := add(101, on(3), cct.Frame{Func: memcpy, Addr: 0x500}, cct.Frame{Func: work, Addr: 0x1210, Line: 21}, cct.Frame{Func: main, Addr: 0x1110, Line: 11})
	add(102, on(1), cct.Frame{Func: memcpy, Addr: 0x504}, cct.Frame{Func: work, Addr: 0x1210, Line: 21}, cct.Frame{Func: main, Addr: 0x1110, Line: 11})
	add(101, on(2), cct.Frame{Func: memcpy, Addr: 0x500}, cct.Frame{Func: work, Addr: 0x1220, Line: 22}, cct.Frame{Func: main, Addr: 0x1110, Line: 11})
	// Leaf inlined into work at 0x1230, itself with an inlined frame inside.
	b := add(101, on(5), cct.Frame{Func: inl2, Addr: 0x1230, Line: 3, Inlined: true}, cct.Frame{Func: inl, Addr: 0x1230, Line: 7, Inlined: true},
		cct.Frame{Func: work, Addr: 0x1230, Line: 23}, cct.Frame{Func: main, Addr: 0x1120, Line: 12})
	// Inlined frame in the middle of the stack.
	add(102, on(1), cct.Frame{Func: memcpy, Addr: 0x508}, cct.Frame{Func: inl, Addr: 0x1240, Line: 8, Inlined: true},
		cct.Frame{Func: work, Addr: 0x1240, Line: 24}, cct.Frame{Func: main, Addr: 0x1130, Line: 13})
	add(103, on(2), cct.Frame{Func: rec, Addr: 0x1900, Line: 90}, cct.Frame{Func: rec, Addr: 0x1904, Line: 91},
		cct.Frame{Func: rec, Addr: 0x1904, Line: 91}, cct.Frame{Func: main, Addr: 0x1140, Line: 14})
	add(0, on(1), cct.Frame{Func: anon, Addr: 0x7f00}, cct.Frame{Func: main, Addr: 0x1150, Line: 15})
	add(103, on(1))
	add(201, on(4), cct.Frame{Func: demangled, Addr: 0x1300, Line: 5}, cct.Frame{Func: jit, Addr: 0x40}, cct.Frame{Func: main, Addr: 0x1160, Line: 16})
	add(201, on(2), cct.Frame{Func: goFn, Addr: 0x4100, Line: 30}, cct.Frame{Func: main, Addr: 0x1180, Line: 17})
	add(201, on(1), cct.Frame{Func: sys, Addr: 0xffffffff81000000}, cct.Frame{Func: work, Addr: 0x1250, Line: 25}, cct.Frame{Func: main, Addr: 0x1170})
	// Off the CPU: the reason is the leaf.
	add(101, off(70e6), cct.Frame{Func: futex}, cct.Frame{Func: sys, Addr: 0xffffffff81000010}, cct.Frame{Func: work, Addr: 0x1260, Line: 26}, cct.Frame{Func: main, Addr: 0x1110, Line: 11})
	add(102, off(5e6), cct.Frame{Func: sleep}, cct.Frame{Func: inl, Addr: 0x1270, Line: 9, Inlined: true}, cct.Frame{Func: work, Addr: 0x1270, Line: 27}, cct.Frame{Func: main, Addr: 0x1120, Line: 12})
	// Call estimates are added to contexts already sampled, on their threads.
	tr.AddSelf(a, 101, cct.Metrics{Calls: 40, CallsAdj: 44, CallsFlow: 41})
	tr.AddSelf(b, 101, cct.Metrics{Calls: 7, CallsAdj: 8})

	meta := cct.Meta{
		SampleType:    "cpu",
		Unit:          "nanoseconds",
		Period:        1_000_000,
		PeriodType:    "cpu",
		TimeNanos:     1_700_000_000_000_000_000,
		DurationNanos: 2_000_000_000,
		Comments:      []string{"trigger=time", "event=cpu-clock", "period=1000000"},
		Threads: map[uint32]cct.Thread{
			101: {TID: 101, PID: 100, Name: "worker-1"},
			102: {TID: 102, PID: 100, Name: "worker;2"},
			103: {TID: 103, PID: 100},
			201: {TID: 201, PID: 200, Name: "child"},
		},
		Calls: true, Flow: true, OffCPU: true, Wall: true,
		Modules: map[string]cct.Module{
			"/bin/app":       {BuildID: "0123456789abcdef", Start: 0x1000, Limit: 0x9000, Offset: 0x1000},
			"/lib/libc.so.6": {BuildID: "feedface"},
			"/bin/goapp":     {GoBuildID: "abc/def/ghi/jkl"},
		},
	}
	res := Resource{HostName: "h1", PID: 100, ExecutableName: "app", ExecutablePath: "/bin/app",
		ContainerID: "c0ffee", ServiceName: "svc", Extra: map[string]string{"deployment.environment": "test"}}
	return tr, meta, res
}

// wantMeta is what a meta reads back as: the file's defaults, the threads that have
// samples, the modules that frames name.
func wantMeta(t *cct.Tree, m cct.Meta) cct.Meta {
	m = m.WithDefaults()
	threads := map[uint32]cct.Thread{}
	for _, tid := range t.TIDs() {
		if th, ok := m.Threads[tid]; ok {
			threads[tid] = th
		} else if tid != 0 {
			threads[tid] = cct.Thread{TID: tid}
		}
	}
	m.Threads = threads
	if len(threads) == 0 {
		m.Threads = nil
	}
	used := map[string]cct.Module{}
	for i := 1; i < t.NumFuncs(); i++ {
		if mod, ok := m.Modules[t.Func(cct.FuncID(i)).Module]; ok {
			used[t.Func(cct.FuncID(i)).Module] = mod
		}
	}
	m.Modules = used
	if len(used) == 0 {
		m.Modules = nil
	}
	return m
}

// dump is a canonical description of a tree that does not depend on NodeIDs or
// FuncIDs: one line per context with samples, with its full stack (names, linkage
// names, modules, files, addresses, lines, inline marks), self, total and per-thread
// selfs; sorted.
func dump(t *cct.Tree) string {
	var lines []string
	for id := range cct.NodeID(t.Len()) {
		n := t.Node(id)
		if n.Total.IsZero() && n.Self.IsZero() {
			continue
		}
		var sb strings.Builder
		st := t.Stack(id)
		for i := len(st) - 1; i >= 0; i-- {
			f := st[i]
			fn := t.Func(f.Func)
			fmt.Fprintf(&sb, "%s[%s|%s|%s|%#x:%d", fn.Name, fn.System, fn.Module, fn.File, f.Addr, f.Line)
			if f.Inlined {
				sb.WriteString("|inl")
			}
			sb.WriteString("];")
		}
		thr := slices.DeleteFunc(t.Threads(id), func(ts cct.ThreadSelf) bool { return ts.Self.IsZero() })
		fmt.Fprintf(&sb, " self=%+v total=%+v threads=%+v", n.Self, n.Total, thr)
		lines = append(lines, sb.String())
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// checkInvariants verifies what every tree must satisfy whatever built it.
func checkInvariants(tb testing.TB, t *cct.Tree) {
	tb.Helper()
	for id := range cct.NodeID(t.Len()) {
		n := t.Node(id)
		sum := n.Self
		for _, c := range t.Children(id) {
			if t.Node(c).Parent != id {
				tb.Errorf("node %d: child %d has parent %d", id, c, t.Node(c).Parent)
			}
			sum.Add(t.Node(c).Total)
		}
		if sum != n.Total {
			tb.Errorf("node %d (%s): total %v != self + children %v", id, t.Func(n.Func).Name, n.Total, sum)
		}
		var thr cct.Metrics
		for _, ts := range t.Threads(id) {
			thr.Add(ts.Self)
		}
		if thr != n.Self {
			tb.Errorf("node %d: self %v != sum over threads %v", id, n.Self, thr)
		}
	}
}

// runtimeTree is a real profile: the Go runtime's, from cct's testdata.
func runtimeTree(tb testing.TB) (*cct.Tree, cct.Meta) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "cct", "testdata", "runtime.pb.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	tr, meta, err := cct.ReadProfile(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	if tr.Total().Samples == 0 {
		tb.Fatal("runtime.pb.gz has no samples")
	}
	return tr, meta
}

func mustAppend(tb testing.TB, procs ...Process) pprofile.Profiles {
	tb.Helper()
	ps := pprofile.NewProfiles()
	if err := Append(ps, procs...); err != nil {
		tb.Fatal(err)
	}
	return ps
}

func protoBytes(tb testing.TB, ps pprofile.Profiles) []byte {
	tb.Helper()
	var m pprofile.ProtoMarshaler
	b, err := m.MarshalProfiles(ps)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func jsonBytes(tb testing.TB, ps pprofile.Profiles) []byte {
	tb.Helper()
	var m pprofile.JSONMarshaler
	b, err := m.MarshalProfiles(ps)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// str is string i of ps's dictionary.
func str(ps pprofile.Profiles, i int32) string { return ps.Dictionary().StringTable().At(int(i)) }

// sampleAttrs is a sample's attributes by key, as their string forms.
func sampleAttrs(ps pprofile.Profiles, idx []int32) map[string]string {
	out := map[string]string{}
	for _, i := range idx {
		a := ps.Dictionary().AttributeTable().At(int(i))
		out[str(ps, a.KeyStrindex())] = a.Value().AsString()
	}
	return out
}
