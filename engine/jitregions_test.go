package engine

import (
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/symbol"
)

func TestJITRegionLines(t *testing.T) {
	b := newBuilder(symbol.NewResolver())
	named := []symbol.Frame{{Func: "JS:*hot", Module: symbol.JITModule}, {Func: "main", Module: "/usr/bin/node"}}
	waiting := []symbol.Frame{{Module: "//anon", JIT: true}, {Func: "JavaMain", Module: "/usr/lib/libjli.so"}}
	native := []symbol.Frame{{Func: "main", Module: "/usr/bin/true"}}
	for i := 0; i < 60; i++ {
		b.addJIT(10, named)
	}
	for i := 0; i < 30; i++ {
		b.addJIT(20, waiting)
	}
	for i := 0; i < 10; i++ {
		b.addJIT(30, native)
	}
	b.samples = 100
	names := map[uint32]cct.Thread{10: {Name: "node"}, 20: {Name: "java"}}
	lines := b.jitRegionLines(names, 3)
	if len(lines) != 2 {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	// Busiest first, with each runtime's fix where nothing names its code.
	if !strings.HasPrefix(lines[0], "JIT code: node (pid 10): 60.0% of samples") || !strings.Contains(lines[0], "--perf-basic-prof") {
		t.Errorf("node: %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], "JIT code: java (pid 20): 30.0% of samples") || !strings.Contains(lines[1], "-XX:+PreserveFramePointer") {
		t.Errorf("java: %s", lines[1])
	}
	if got := b.jitRegionLines(names, 1); len(got) != 2 || !strings.Contains(got[1], "30.0% of samples in the code of 1 more processes") {
		t.Errorf("limit 1: %q", got)
	}
}
