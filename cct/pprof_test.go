package cct

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// richTree has what a profile must carry: several modules and threads, inlined frames
// (leaf and non-leaf), recursion, call-site splitting, a frame outside any module and an
// empty stack.
func richTree() (*Tree, Meta) {
	tr := New()
	add := func(tid uint32, m Metrics, frames ...Frame) { tr.Add(frames, tid, m) }
	fn := func(name, module, file string) FuncID {
		return tr.Intern(Func{Name: name, Module: module, File: file})
	}
	main := fn("main", "/bin/app", "main.c")
	work := fn("work", "/bin/app", "work.c")
	inl := fn("ns::helper(int)", "/bin/app", "helper.h")
	memcpy := fn("memcpy", "/lib/libc.so.6", "")
	rec := fn("github.com/x/y/pkg.(*T).Rec", "/bin/app", "rec.go")
	anon := fn("0x7f00", "", "")

	add(101, ms(3, 3000), Frame{Func: memcpy, Addr: 0x500}, Frame{Func: work, Addr: 0x210, Line: 21}, Frame{Func: main, Addr: 0x110, Line: 11})
	add(102, ms(1, 1000), Frame{Func: memcpy, Addr: 0x504}, Frame{Func: work, Addr: 0x210, Line: 21}, Frame{Func: main, Addr: 0x110, Line: 11})
	add(101, ms(2, 2500), Frame{Func: memcpy, Addr: 0x500}, Frame{Func: work, Addr: 0x220, Line: 22}, Frame{Func: main, Addr: 0x110, Line: 11})
	// Leaf inlined into work at 0x230.
	add(101, ms(5, 5000), Frame{Func: inl, Addr: 0x230, Line: 7, Inlined: true}, Frame{Func: work, Addr: 0x230, Line: 23}, Frame{Func: main, Addr: 0x120, Line: 12})
	// Inlined frame in the middle of the stack.
	add(102, ms(1, 1000), Frame{Func: memcpy, Addr: 0x508}, Frame{Func: inl, Addr: 0x240, Line: 8, Inlined: true}, Frame{Func: work, Addr: 0x240, Line: 24}, Frame{Func: main, Addr: 0x130, Line: 13})
	add(103, ms(2, 2000), Frame{Func: rec, Addr: 0x900, Line: 90}, Frame{Func: rec, Addr: 0x904, Line: 91}, Frame{Func: rec, Addr: 0x904, Line: 91}, Frame{Func: main, Addr: 0x140, Line: 14})
	add(0, ms(1, 1000), Frame{Func: anon, Addr: 0x7f00}, Frame{Func: main, Addr: 0x150, Line: 15})
	add(103, ms(1, 1000))
	meta := Meta{
		SampleType:    "cpu",
		Unit:          "nanoseconds",
		Period:        1000,
		PeriodType:    "cpu",
		TimeNanos:     1_700_000_000_000_000_000,
		DurationNanos: 2_000_000_000,
		Comments:      []string{"trigger=time", "event=cpu-clock", "period=1000"},
		Threads: map[uint32]Thread{
			101: {TID: 101, PID: 100, Name: "worker-1"},
			102: {TID: 102, PID: 100, Name: "worker;2"},
			103: {TID: 103, PID: 100, Name: ""},
		},
	}
	return tr, meta
}

func TestProfileIsValid(t *testing.T) {
	tr, meta := richTree()
	p := tr.Profile(meta)
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v", err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if want := []string{"samples/count", "cpu/nanoseconds"}; !slices.Equal(types, want) {
		t.Errorf("sample types %v, want %v", types, want)
	}
	// One sample per (context, thread).
	if len(p.Sample) != 8 {
		t.Errorf("%d samples, want 8", len(p.Sample))
	}
	// The inlined leaf shares work's location as a second line, innermost first.
	found := false
	for _, l := range p.Location {
		if len(l.Line) == 2 && l.Address == 0x230 {
			found = true
			if l.Line[0].Function.Name != "ns::helper(int)" || l.Line[1].Function.Name != "work" {
				t.Errorf("inline location lines %v, %v", l.Line[0].Function.Name, l.Line[1].Function.Name)
			}
		}
	}
	if !found {
		t.Error("no location with the inlined frame as an extra line")
	}
	// Locations are shared: memcpy at 0x500 and work at 0x210 appear once each.
	type locKey struct {
		m    *profile.Mapping
		addr uint64
		n    int
	}
	seen := map[locKey]bool{}
	for _, l := range p.Location {
		k := locKey{l.Mapping, l.Address, len(l.Line)}
		if seen[k] {
			t.Errorf("location %#x duplicated", l.Address)
		}
		seen[k] = true
	}
	for _, m := range p.Mapping {
		if !m.HasFunctions {
			t.Errorf("mapping %s without HasFunctions", m.File)
		}
	}
	if len(p.Mapping) != 2 || p.Mapping[0].File != "/bin/app" {
		t.Errorf("mappings %v, want 2 with the main binary /bin/app first", p.Mapping)
	}
	for _, s := range p.Sample {
		if tid := s.NumLabel["thread_id"]; len(tid) == 1 && tid[0] == 101 {
			if s.Label["thread_name"][0] != "worker-1" {
				t.Errorf("thread 101 name label %v", s.Label)
			}
		}
	}
}

func TestProfileRoundTrip(t *testing.T) {
	tr, meta := richTree()
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Error("WriteProfile output is not gzipped")
	}
	got, gotMeta, err := ReadProfile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if d, w := dump(got), dump(tr); d != w {
		t.Errorf("round trip differs:\n%s\nwant:\n%s", d, w)
	}
	if !reflect.DeepEqual(gotMeta, meta) {
		t.Errorf("meta after round trip:\n%+v\nwant\n%+v", gotMeta, meta)
	}
	for i := 1; i < got.NumFuncs(); i++ {
		f := got.Func(FuncID(i))
		if f.Short != ShortName(f.Name) {
			t.Errorf("%s: short %q", f.Name, f.Short)
		}
	}
	checkInvariants(t, got)

	// Uncompressed input is accepted too.
	var raw bytes.Buffer
	if err := tr.Profile(meta).WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	got2, _, err := ReadProfile(&raw)
	if err != nil {
		t.Fatal(err)
	}
	if dump(got2) != dump(tr) {
		t.Error("round trip through an uncompressed profile differs")
	}
}

func TestProfileCycles(t *testing.T) {
	tr := New()
	addPath(tr, "main;a", 5, ms(2, 2_000_000))
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, Meta{SampleType: "cycles", Unit: "count", Period: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	got, meta, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if meta.SampleType != "cycles" || meta.Unit != "count" || meta.PeriodType != "cycles" {
		t.Errorf("meta %+v", meta)
	}
	if got.Total() != ms(2, 2_000_000) {
		t.Errorf("total %v", got.Total())
	}
	// A thread the Meta does not name still gets its id label back.
	if got.TIDs()[0] != 5 || meta.Threads[5].TID != 5 {
		t.Errorf("tids %v threads %v", got.TIDs(), meta.Threads)
	}
}

func TestGoToolPprofReadsProfile(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	if testing.Short() {
		t.Skip("runs go tool pprof")
	}
	tr, meta := richTree()
	path := filepath.Join(t.TempDir(), "cct.pb.gz")
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-top"}, {"-top", "-sample_index=samples"}, {"-traces"}, {"-top", "-tagfocus=thread_id=101"}} {
		cmd := exec.Command(gobin, append(append([]string{"tool", "pprof"}, args...), path)...)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		for _, name := range []string{"memcpy", "work", "ns::helper"} {
			if !strings.Contains(string(out), name) {
				t.Errorf("go tool pprof %v output lacks %s:\n%s", args, name, out)
			}
		}
		if args[0] == "-traces" && !strings.Contains(string(out), "(inline)") {
			t.Errorf("go tool pprof -traces does not show the inlined frame:\n%s", out)
		}
	}
}

//go:noinline
func busyLoop(d time.Duration) int {
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := range 10000 {
			x += i * i
		}
	}
	return x
}

// runtimeProfile profiles busyLoop with runtime/pprof, for as long as it takes to get a
// few samples.
func runtimeProfile(tb testing.TB) []byte {
	tb.Helper()
	for d := 300 * time.Millisecond; d <= 2400*time.Millisecond; d *= 2 {
		var buf bytes.Buffer
		if err := pprof.StartCPUProfile(&buf); err != nil {
			tb.Skipf("cannot start a CPU profile: %v", err)
		}
		busyLoop(d)
		pprof.StopCPUProfile()
		p, err := profile.ParseData(buf.Bytes())
		if err != nil {
			tb.Fatalf("runtime/pprof output does not parse: %v", err)
		}
		n := int64(0)
		for _, s := range p.Sample {
			n += s.Value[0]
		}
		if n >= 5 {
			return buf.Bytes()
		}
	}
	tb.Skip("runtime/pprof took no samples (no SIGPROF here?)")
	return nil
}

const busyName = "github.com/cctop/cctop/cct.busyLoop"

func checkBusy(t *testing.T, tr *Tree, meta Meta) {
	t.Helper()
	var busy *FuncStat
	for _, s := range tr.Flat() {
		if tr.Func(s.Func).Name == busyName {
			busy = &s
			break
		}
	}
	if busy == nil {
		t.Fatalf("%s not in the profile", busyName)
	}
	if busy.Total.Samples == 0 || busy.Total.Time == 0 {
		t.Errorf("busyLoop has no samples or time: %+v", busy)
	}
	if f := tr.Func(busy.Func); f.Short != "cct.busyLoop" || !strings.HasSuffix(f.File, "pprof_test.go") {
		t.Errorf("busyLoop func %+v", f)
	}
	if meta.SampleType != "cpu" || meta.Unit != "nanoseconds" || meta.Period <= 0 {
		t.Errorf("meta %+v", meta)
	}
	if tr.Total().Time < tr.Total().Samples*meta.Period/2 {
		t.Errorf("time %d does not look like %d samples of %d ns", tr.Total().Time, tr.Total().Samples, meta.Period)
	}
	checkInvariants(t, tr)
}

func TestReadRuntimeProfile(t *testing.T) {
	data := runtimeProfile(t)
	tr, meta, err := ReadProfile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	checkBusy(t, tr, meta)
	// And back out: what cctop writes from it still has it.
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	again, _, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if dump(again) != dump(tr) {
		t.Error("runtime profile changes through a cctop round trip")
	}
}

func TestReadRuntimeProfileTestdata(t *testing.T) {
	path := filepath.Join("testdata", "runtime.pb.gz")
	if *update {
		if err := os.WriteFile(path, runtimeProfile(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr, meta, err := ReadProfile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	checkBusy(t, tr, meta)
}

func TestReadCorrupt(t *testing.T) {
	tr, meta := richTree()
	var good bytes.Buffer
	if err := tr.WriteProfile(&good, meta); err != nil {
		t.Fatal(err)
	}
	var gzGarbage bytes.Buffer
	zw := gzip.NewWriter(&gzGarbage)
	zw.Write([]byte("this is not a profile at all"))
	zw.Close()
	inputs := map[string][]byte{
		"empty":          nil,
		"truncated gzip": good.Bytes()[:good.Len()/2],
		"gzip header":    good.Bytes()[:10],
		"text":           []byte("hello, world\n"),
		"gzip garbage":   gzGarbage.Bytes(),
		"no sample type": mustRaw(t, &profile.Profile{}),
	}
	rng := rand.New(rand.NewSource(1))
	for i := range 50 {
		b := make([]byte, 1+rng.Intn(200))
		rng.Read(b)
		inputs["random "+string(rune('a'+i%26))+string(rune('0'+i/26))] = b
	}
	for name, in := range inputs {
		tr, _, err := ReadProfile(bytes.NewReader(in))
		if err == nil {
			// Random bytes may be a valid protobuf by chance; then it must be a usable tree.
			if strings.HasPrefix(name, "random") {
				checkInvariants(t, tr)
				continue
			}
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "not a pprof profile") {
			t.Errorf("%s: error %q does not say what is wrong", name, err)
		}
	}
}

func mustRaw(t *testing.T, p *profile.Profile) []byte {
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadForeignShapes(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "leaf", Filename: "l.c"}
	fn2 := &profile.Function{ID: 2, Name: "", SystemName: "_Z5outerv", Filename: "o.cc"}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x500000, Offset: 0x1000, File: "/bin/x"}
	locs := []*profile.Location{
		{ID: 1, Mapping: m, Address: 0x400123, Line: []profile.Line{{Function: fn, Line: 3}}},
		{ID: 2, Mapping: m, Address: 0x400456, Line: []profile.Line{{Function: fn2, Line: 9}}},
		{ID: 3, Mapping: m, Address: 0x400789}, // unsymbolized
	}
	p := &profile.Profile{
		// No samples/count column: Samples come from the first count column; the
		// nanoseconds column is the time.
		SampleType: []*profile.ValueType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[0], locs[1]}, Value: []int64{2, 300},
				NumLabel: map[string][]int64{"tid": {42}, "pid": {40}}, Label: map[string][]string{"thread_comm": {"comm42"}}},
			{Location: []*profile.Location{locs[2], locs[1]}, Value: []int64{1, 100}},
			{Location: []*profile.Location{locs[0]}, Value: []int64{0, 0}}, // nothing to add
		},
		Mapping: []*profile.Mapping{m}, Location: locs, Function: []*profile.Function{fn, fn2},
	}
	tr, meta, err := ReadProfile(bytes.NewReader(mustRaw(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Total() != ms(3, 400) {
		t.Errorf("total %v", tr.Total())
	}
	if meta.SampleType != "delay" || meta.Unit != "nanoseconds" {
		t.Errorf("meta %+v", meta)
	}
	leaf, ok := tr.Find("_Z5outerv", "leaf")
	if !ok {
		t.Fatal("outer;leaf not found (SystemName should stand in for an empty Name)")
	}
	n := tr.Node(leaf)
	if n.CallSite != 0x1456 || n.Line != 9 {
		t.Errorf("call site %#x line %d: want module-relative 0x1456, line 9", n.CallSite, n.Line)
	}
	if f := tr.Func(n.Func); f.Module != "/bin/x" || f.File != "l.c" {
		t.Errorf("leaf func %+v", f)
	}
	if _, ok := tr.Find("_Z5outerv", "0x1789"); !ok {
		t.Error("unsymbolized location not named by its address")
	}
	if got := meta.Threads[42]; got != (Thread{TID: 42, PID: 40, Name: "comm42"}) {
		t.Errorf("thread %+v", got)
	}
	if len(meta.Threads) != 1 {
		t.Errorf("threads %v", meta.Threads)
	}
}

func TestReadOnlyOneColumn(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{4096}}},
		Location:   []*profile.Location{loc}, Function: []*profile.Function{fn},
	}
	tr, meta, err := FromProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Total() != ms(4096, 0) || meta.SampleType != "" {
		t.Errorf("total %v meta %+v: the only column should count as samples", tr.Total(), meta)
	}
}

func TestReadDeepStackIsTruncated(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "f"}
	var lines []profile.Line
	for range 1000 {
		lines = append(lines, profile.Line{Function: fn})
	}
	loc := &profile.Location{ID: 1, Line: lines}
	var stack []*profile.Location
	for range 100 {
		stack = append(stack, loc)
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Sample:     []*profile.Sample{{Location: stack, Value: []int64{1}}},
		Location:   []*profile.Location{loc}, Function: []*profile.Function{fn},
	}
	tr, _, err := FromProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.Len() - 1; n != maxDepth {
		t.Errorf("%d nodes, want the depth cut at %d", n, maxDepth)
	}
	if _, ok := tr.Find("[truncated]"); !ok {
		t.Error("cut stack not under [truncated]")
	}
}

// TestSystemNameRoundTrip: a demangled function keeps its linkage name as
// pprof's SystemName, and reading the profile back restores both.
func TestSystemNameRoundTrip(t *testing.T) {
	tr := New()
	f := tr.Intern(Func{Name: "ns::f(int)", System: "_ZN2ns1fEi", Module: "/bin/x"})
	g := tr.Intern(Func{Name: "main", Module: "/bin/x"})
	tr.Add([]Frame{{Func: f, Addr: 0x10}, {Func: g, Addr: 0x20}}, 1, Metrics{Samples: 1, Time: 1})
	p := tr.Profile(Meta{SampleType: "cpu", Unit: "nanoseconds"})
	sys := map[string]string{}
	for _, fn := range p.Function {
		sys[fn.Name] = fn.SystemName
	}
	if sys["ns::f(int)"] != "_ZN2ns1fEi" || sys["main"] != "main" {
		t.Fatalf("system names %v", sys)
	}
	back, _, err := FromProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := back.Find("main", "ns::f(int)")
	if !ok {
		t.Fatal("main;ns::f(int) not found")
	}
	got := back.Func(back.Node(id).Func)
	if got.System != "_ZN2ns1fEi" || got.LinkName() != "_ZN2ns1fEi" || got.Short != "ns::f" {
		t.Errorf("read back %+v", got)
	}
	if m := back.Func(back.Node(back.Node(id).Parent).Func); m.System != "" || m.LinkName() != "main" {
		t.Errorf("main read back %+v", m)
	}
}

// endless is an endless stream of one byte.
type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

// TestReadBounded: an endless stream, /dev/zero, and a gzip stream that inflates past the
// bound end in an error, having read no more than the bound.
func TestReadBounded(t *testing.T) {
	defer func(n int) { maxProfileBytes = n }(maxProfileBytes)
	maxProfileBytes = 1 << 20
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte{0x0a}, 4<<20))
	zw.Close()
	for name, in := range map[string]io.Reader{
		"endless":  endless(0x0a),
		"zeros":    endless(0),
		"gzip 4MB": &bomb,
	} {
		_, _, err := ReadProfile(in)
		if err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") && !strings.Contains(err.Error(), "zero byte") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Within the bound a profile reads as before.
	tr, meta := richTree()
	var good bytes.Buffer
	if err := tr.WriteProfile(&good, meta); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadProfile(&good); err != nil {
		t.Errorf("a small profile: %v", err)
	}
}

// TestProfileCommLabel: each sample of a process whose main thread is named
// carries the process's name as the comm label, beside its pid, so that a
// profile of several processes says which is which (go tool pprof -tagfocus
// comm=postgres); a thread whose process is not named has none.
func TestProfileCommLabel(t *testing.T) {
	tr := New()
	fn := tr.Intern(Func{Name: "work", Module: "/bin/app"})
	for _, tid := range []uint32{100, 101, 200, 301} {
		tr.Add([]Frame{{Func: fn, Addr: 0x10}}, tid, Metrics{Samples: 1})
	}
	meta := Meta{SampleType: "cpu", Unit: "nanoseconds", Threads: map[uint32]Thread{
		100: {TID: 100, PID: 100, Name: "postgres"},
		101: {TID: 101, PID: 100, Name: "bgworker"},
		200: {TID: 200, PID: 200, Name: "pgbench"},
		301: {TID: 301, PID: 300, Name: "helper"},
	}}
	want := map[int64]string{100: "postgres", 101: "postgres", 200: "pgbench", 301: ""}
	p := tr.Profile(meta)
	if len(p.Sample) != len(want) {
		t.Fatalf("%d samples, want %d", len(p.Sample), len(want))
	}
	for _, s := range p.Sample {
		tid := s.NumLabel["thread_id"][0]
		var comm string
		if c := s.Label["comm"]; len(c) == 1 {
			comm = c[0]
		}
		if comm != want[tid] {
			t.Errorf("thread %d: comm %q, want %q", tid, comm, want[tid])
		}
	}
}

// TestProfileSharesLabels: the samples of one thread share one set of
// label maps, made once, with the thread's labels; each thread has its own.
func TestProfileSharesLabels(t *testing.T) {
	tr := New()
	for i := range 500 {
		addPath(tr, fmt.Sprintf("main;f%d", i), uint32(1+i%2), ms(1, 10))
	}
	meta := Meta{SampleType: "cpu", Unit: "nanoseconds", Threads: map[uint32]Thread{
		1: {TID: 1, PID: 1, Name: "main"}, 2: {TID: 2, PID: 1, Name: "worker"}}}
	p := tr.Profile(meta)
	if len(p.Sample) != 500 {
		t.Fatalf("%d samples, want 500", len(p.Sample))
	}
	maps := map[uintptr]string{}
	for _, s := range p.Sample {
		tid := s.NumLabel["thread_id"][0]
		name := map[int64]string{1: "main", 2: "worker"}[tid]
		if got := s.Label["thread_name"]; len(got) != 1 || got[0] != name || s.NumLabel["pid"][0] != 1 {
			t.Fatalf("thread %d: labels %v %v", tid, s.Label, s.NumLabel)
		}
		maps[reflect.ValueOf(s.Label).Pointer()] = name
		maps[reflect.ValueOf(s.NumLabel).Pointer()] = name
	}
	if len(maps) != 4 {
		t.Errorf("%d label maps for 500 samples of 2 threads, want 4 (shared)", len(maps))
	}
}
