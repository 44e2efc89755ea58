package engine

import (
	"strings"
	"testing"

	"github.com/cctop/cctop/symbol"
)

func TestClassifyStacks(t *testing.T) {
	fr := func(names ...string) []symbol.Frame {
		var out []symbol.Frame
		for _, n := range names {
			out = append(out, symbol.Frame{Func: n})
		}
		return out
	}
	deep := make([]symbol.Frame, maxChain)
	deep[maxChain-1].Func = "PyEval_EvalFrameDefault"
	for _, c := range []struct {
		name   string
		frames []symbol.Frame
		user   int
		want   string
	}{
		{"C thread", fr("leaf", "worker", "start_thread"), 3, ""},
		{"C main", fr("leaf", "main", "__libc_start_call_main"), 3, ""},
		{"goroutine", fr("main.leaf", "main.main", "runtime.main", "runtime.goexit"), 4, ""},
		{"cgo thread", fr("runtime.usleep", "runtime.sysmon", "runtime.mstart", "crosscall1"), 4, ""},
		{"kernel thread", fr("schedule", "kthread", "ret_from_fork_asm"), 0, ""},
		{"no frames", nil, 0, truncNoUser},
		{"kernel only", fr("do_syscall_64", "entry_SYSCALL_64"), 0, truncNoUser},
		{"lost in unnamed code", fr("leaf", ""), 2, truncUnnamed},
		{"lost in a stripped binary", append(fr("leaf"), symbol.Frame{Func: "[prog+0x1130]", Module: "/prog", Unnamed: true}), 2, truncUnnamed},
		{"frame pointer missing", fr("leaf", "helper"), 2, truncMidStack},
		{"too deep", deep, maxChain, truncDepth},
	} {
		if got := classify(c.frames, c.user); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCompletenessSummary(t *testing.T) {
	var c completeness
	if c.percent() != -1 {
		t.Errorf("empty: %v", c.percent())
	}
	for i := 0; i < 90; i++ {
		c.add("")
	}
	for i := 0; i < 7; i++ {
		c.add(truncUnnamed)
	}
	for i := 0; i < 3; i++ {
		c.add(truncMidStack)
	}
	if c.percent() != 90 {
		t.Errorf("percent %v", c.percent())
	}
	s := c.String()
	if !strings.HasPrefix(s, "90.0% of samples unwound") || strings.Index(s, "7.0% "+truncUnnamed) > strings.Index(s, "3.0% "+truncMidStack) || !strings.Contains(s, "3.0% "+truncMidStack) {
		t.Errorf("%s", s)
	}
}

// TestCompletenessByModule: truncated stacks are counted where they stop,
// by the module (base name) of their outermost user frame and the reason,
// commonest first, as shares of all samples.
func TestCompletenessByModule(t *testing.T) {
	if got := stopModule(nil); got != stopNoUser {
		t.Errorf("no frames: %q", got)
	}
	for _, c := range []struct{ module, want string }{
		{"/opt/intel/lib/libmkl_avx2.so.2", "libmkl_avx2.so.2"},
		{"/tmp/x/libgone.so (deleted)", "libgone.so"},
		{"[vdso]", "[vdso]"},
		{"", stopNoModule},
	} {
		// The function name says nothing: an unnamed frame's may be
		// "[libfoo.so]" or "[libfoo.so+0x10]".
		fr := []symbol.Frame{{Func: "leaf", Module: "/usr/bin/prog"}, {Func: "[whatever+0x10]", Module: c.module}}
		if got := stopModule(fr); got != c.want {
			t.Errorf("%q: %q, want %q", c.module, got, c.want)
		}
	}
	var c completeness
	for i := 0; i < 60; i++ {
		c.add("")
	}
	for i := 0; i < 31; i++ {
		c.add(truncMidStack)
		c.addStop("libmkl_avx2.so", symbol.StopNoInfo.String())
	}
	for i := 0; i < 9; i++ {
		c.add(truncUnnamed)
		c.addStop("libjit.so", symbol.StopFPCheck.String())
	}
	top := c.topStops(3)
	if len(top) != 2 || top[0].String() != "libmkl_avx2.so: 31.0% of stacks stop here, no CFI" ||
		top[1].String() != "libjit.so: 9.0% of stacks stop here, no CFI, frame pointer rejected" {
		t.Errorf("%v", top)
	}
	if got := c.topStops(1); len(got) != 1 || got[0].Module != "libmkl_avx2.so" {
		t.Errorf("top 1: %v", got)
	}
}
