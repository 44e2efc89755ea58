package otlp

import (
	"fmt"
	"math/rand"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

// benchTree is a busy program's window: 5000 distinct stacks of depth 20-40 over 200
// functions in two modules, some inlined, with call sites, on 8 threads.
func benchTree() (*cct.Tree, cct.Meta) {
	rng := rand.New(rand.NewSource(1))
	tr := cct.New()
	funcs := make([]cct.FuncID, 200)
	for i := range funcs {
		mod := "/bin/app"
		if i%5 == 0 {
			mod = "/lib/libc.so.6"
		}
		funcs[i] = tr.Intern(cct.Func{Name: fmt.Sprintf("github.com/x/y/pkg.F%d", i), Module: mod, File: "f.go"})
	}
	meta := cct.Meta{Period: 1e6, Threads: map[uint32]cct.Thread{}, Comments: []string{"trigger=time"},
		Modules: map[string]cct.Module{"/bin/app": {BuildID: "abcd", Start: 0x1000, Limit: 1 << 20}}}
	for tid := range uint32(8) {
		meta.Threads[tid+1] = cct.Thread{TID: tid + 1, PID: 1, Name: fmt.Sprintf("worker-%d", tid)}
	}
	for i := range 5000 {
		d := 20 + rng.Intn(21)
		s := make([]cct.Frame, d)
		for j := range s {
			s[j] = cct.Frame{Func: funcs[rng.Intn(len(funcs))], Addr: uint64(0x1000 + rng.Intn(64)*8), Line: 10 + j}
			if j > 0 && rng.Intn(8) == 0 {
				s[j-1].Inlined, s[j-1].Addr = true, s[j].Addr
			}
		}
		tr.Add(s, uint32(i%8+1), cct.Metrics{Samples: 1, Time: 1e6})
	}
	return tr, meta
}

// BenchmarkAppend converts one window of about 100k contexts into OTLP, with a
// Builder reused from window to window as the agent does.
func BenchmarkAppend(b *testing.B) {
	tr, meta := benchTree()
	var bl Builder
	var samples int
	b.ReportAllocs()
	for b.Loop() {
		ps := pprofile.NewProfiles()
		if err := bl.Append(ps, Process{Resource: Resource{PID: 1, ExecutableName: "app"}, Tree: tr, Meta: meta}); err != nil {
			b.Fatal(err)
		}
		samples = ps.SampleCount()
	}
	b.ReportMetric(float64(samples), "samples")
	b.ReportMetric(float64(tr.Len()), "contexts")
}

// BenchmarkTrees reads such a window back.
func BenchmarkTrees(b *testing.B) {
	tr, meta := benchTree()
	ps := pprofile.NewProfiles()
	if err := Append(ps, Process{Tree: tr, Meta: meta}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Trees(ps); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadMerge reads a file of 60 windows, each its own request with its own
// dictionary, mostly the same entries: the merge of dictionaries.
func BenchmarkReadMerge(b *testing.B) {
	tr, meta := benchTree()
	var recs [][]byte
	for range 60 {
		ps := pprofile.NewProfiles()
		if err := Append(ps, Process{Tree: tr, Meta: meta}); err != nil {
			b.Fatal(err)
		}
		recs = append(recs, protoBytes(b, ps))
	}
	data := framed(recs...)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(data); err != nil {
			b.Fatal(err)
		}
	}
}
