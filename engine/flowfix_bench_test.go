package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/flow"
	"github.com/cctop/cctop/symbol"
)

// BenchmarkFlowModule decodes every function of one large binary and
// builds its FDOM, as a profile of that binary would need for each
// function it samples: cc1plus (35 MB, gcc's C++ compiler) where it is
// installed, else $CCTOP_FLOW_MODULE. It reports the time and the memory
// kept per function.
func BenchmarkFlowModule(b *testing.B) {
	path := os.Getenv("CCTOP_FLOW_MODULE")
	if path == "" {
		path = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus"
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no %s (set CCTOP_FLOW_MODULE)", path)
	}
	for b.Loop() {
		c, err := symbol.OpenCode(path)
		if err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		kept := make([]*flowFunc, 0, 1024)
		conservative, bytes := 0, 0
		for _, s := range c.Starts() {
			fc, ok := c.Func(s)
			if !ok {
				continue
			}
			bytes += len(fc.Code)
			g := flow.Decode(c.Arch, fc.Code, fc.Start, func(t uint64) bool { return flow.NoReturnName(c.NameAt(t)) })
			if g.Conservative {
				conservative++
			}
			kept = append(kept, &flowFunc{cfg: g, fdom: flow.NewFDOM(g)})
		}
		el := time.Since(t0)
		runtime.GC()
		runtime.ReadMemStats(&after)
		c.Close()
		n := len(kept)
		b.ReportMetric(float64(n), "funcs")
		b.ReportMetric(float64(el.Microseconds())/float64(n), "µs/func")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B-kept/func")
		b.ReportMetric(100*float64(conservative)/float64(n), "conservative%")
		b.ReportMetric(float64(bytes)/1e6, "MB-code")
		runtime.KeepAlive(kept)
	}
}

// BenchmarkFlowPass is one flow correction of a live profile as liveFlow
// runs it each second, off the aggregator: a copy of the tree of g++
// compiling a C++ file (cc1plus, 35 MB, DWARF-unwound), with every function
// it needs already decoded. It reports the tree's contexts, the first
// pass's time (which decodes them) and the time per context of the passes
// after it.
func BenchmarkFlowPass(b *testing.B) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		b.Skip("no g++")
	}
	src := filepath.Join(b.TempDir(), "heavy.cpp")
	code := "#include <map>\n#include <regex>\n#include <string>\n#include <vector>\n#include <iostream>\n#include <algorithm>\n" +
		"std::map<std::string, std::vector<int>> m;\nint main() { std::regex r(\"a+b*\"); for (auto& [k, v] : m) std::sort(v.begin(), v.end()); std::cout << std::regex_match(\"aab\", r); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		b.Fatal(err)
	}
	rec := recordFor(b, time.Minute, gxx, "-O2", "-c", src, "-o", os.DevNull)
	t := rec.Tree()
	self := selfOf(t, func(m cct.Metrics) int64 { return m.Samples })
	x := newFlowFixer()
	defer x.close()
	pass := func() flowStats {
		c := t.Clone()
		x.beginPass(nil)
		x.flowCalls(c, self, nil, func(e predictedEdge) (cct.NodeID, bool) {
			return addPredictedTo(c, e, func() cct.FuncID { return c.Intern(cct.Func{Name: e.callee, Module: e.module}) },
				func() uint32 { return 0 })
		})
		return x.stats
	}
	t0 := time.Now()
	st := pass()
	first := time.Since(t0)
	b.ResetTimer()
	for b.Loop() {
		pass()
	}
	b.ReportMetric(float64(t.Len()), "contexts")
	b.ReportMetric(float64(st.Funcs), "funcs")
	b.ReportMetric(float64(st.Contexts), "corrected")
	b.ReportMetric(float64(st.Tied), "tied")
	b.ReportMetric(float64(first.Milliseconds()), "first-ms")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(t.Len()), "ns/context")
}
