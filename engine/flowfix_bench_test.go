package engine

import (
	"os"
	"runtime"
	"testing"
	"time"

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
