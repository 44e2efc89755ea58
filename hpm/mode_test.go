package hpm

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	good := []struct {
		in    string
		kind  string
		funcs []string
	}{
		{"auto", "auto", nil},
		{"hw", "hw", nil},
		{"none", "none", nil},
		{"uprobe:leaf", "uprobe", []string{"leaf"}},
		{"uprobe:main.densityLeaf,main.densityPhaseC", "uprobe", []string{"main.densityLeaf", "main.densityPhaseC"}},
		{"uprobe:github.com/cctop/cctop/workload.(*demo).step, leaf", "uprobe",
			[]string{"github.com/cctop/cctop/workload.(*demo).step", "leaf"}},
		// A generic instantiation's name has a comma of its own.
		{"uprobe:pkg.Map[go.shape.int,go.shape.string],_ZN3foo3barEv", "uprobe",
			[]string{"pkg.Map[go.shape.int,go.shape.string]", "_ZN3foo3barEv"}},
		{"uprobe:leaf,leaf", "uprobe", []string{"leaf"}},
	}
	for _, g := range good {
		m, err := ParseMode(g.in)
		if err != nil || m.Kind != g.kind || !slices.Equal(m.Functions, g.funcs) {
			t.Errorf("ParseMode(%q) = %+v, %v; want %s %q", g.in, m, err, g.kind, g.funcs)
		}
	}
	bad := []struct{ in, says string }{
		{"", "want auto, hw, none"},
		{"hardware", "want auto, hw, none"},
		{"uprobe", "needs the functions"},
		{"uprobe:", "no functions given"},
		{"uprobe: ", "no functions given"},
		{"uprobe:a,,b", "function 2 of 3 is empty"},
		{"uprobe:a,", "function 2 of 2 is empty"},
	}
	for _, b := range bad {
		_, err := ParseMode(b.in)
		if err == nil || !strings.Contains(err.Error(), b.says) {
			t.Errorf("ParseMode(%q): error %v, want one saying %q", b.in, err, b.says)
		}
	}
	if m, _ := ParseMode("uprobe:a,b"); m.String() != "uprobe:a,b" {
		t.Errorf("String() = %q", m.String())
	}
}

var (
	skylakeSP = CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 6, Model: 0x55, Stepping: 4, CorePMUs: []string{"cpu"}}
	vmNoPMU   = CPU{Arch: "amd64", Vendor: "AuthenticAMD", Family: 0x1a, Model: 2}
	errNoPMU  = &noPMUError{what: "perf_event_open(cycles)", err: syscall.ENOENT}
)

func withUprobes(t *testing.T, err error) {
	t.Helper()
	old := uprobeAvailable
	uprobeAvailable = func() error { return err }
	t.Cleanup(func() { uprobeAvailable = old })
}

func TestChoose(t *testing.T) {
	withUprobes(t, nil)
	cases := []struct {
		what    string
		mode    string
		cpu     CPU
		hw      error
		kind    string
		nEvents int
		funcs   int
		says    []string // in Reason, or in the error when errSays
		errSays bool
	}{
		{"auto with a PMU", "auto", skylakeSP, nil, "hw", 1, 0, []string{"BR_INST_RETIRED.NEAR_CALL (cpu)"}, false},
		{"auto without a PMU", "auto", vmNoPMU, errNoPMU, "uprobe", 0, 0,
			[]string{"no hardware PMU here", "not supported", "automatic: the 4 hottest functions"}, false},
		{"hw with a PMU", "hw", skylakeSP, nil, "hw", 1, 0, []string{"hardware call counter"}, false},
		{"hw without a PMU", "hw", vmNoPMU, errNoPMU, "", 0, 0,
			[]string{"--calls hw: no hardware PMU here: perf_event_open(cycles) is not supported", "use --calls auto or uprobe:FUNC"}, true},
		{"none with a PMU", "none", skylakeSP, nil, "none", 0, 0, []string{"density correction off: --calls none"}, false},
		{"none without a PMU", "none", vmNoPMU, errNoPMU, "none", 0, 0, []string{"density correction off: --calls none"}, false},
		{"uprobe without a PMU", "uprobe:a,b,c", vmNoPMU, errNoPMU, "uprobe", 0, 3,
			[]string{"no hardware PMU here; counting calls with uprobes on 3 functions"}, false},
		{"uprobe with a PMU", "uprobe:a", skylakeSP, nil, "uprobe", 0, 1, []string{"uprobes on 1 function"}, false},
	}
	for _, c := range cases {
		m, err := ParseMode(c.mode)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Choose(m, c.cpu, c.hw)
		got := s.Reason
		if c.errSays {
			if err == nil {
				t.Errorf("%s: no error, source %+v", c.what, s)
				continue
			}
			got = err.Error()
		} else if err != nil {
			t.Errorf("%s: %v", c.what, err)
			continue
		}
		for _, w := range c.says {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", c.what, got, w)
			}
		}
		if c.errSays {
			continue
		}
		if s.Kind != c.kind || len(s.Events) != c.nEvents || len(s.Functions) != c.funcs {
			t.Errorf("%s: %+v, want kind %s, %d events, %d functions", c.what, s, c.kind, c.nEvents, c.funcs)
		}
	}
}

func TestChooseWithoutUprobes(t *testing.T) {
	withUprobes(t, errors.New("no uprobe PMU"))
	s, err := Choose(Mode{Kind: "auto"}, vmNoPMU, errNoPMU)
	if err != nil || s.Kind != "none" || !strings.Contains(s.Reason, "no uprobes either") {
		t.Errorf("auto with neither: %+v, %v", s, err)
	}
	if _, err := Choose(Mode{Kind: "uprobe", Functions: []string{"f"}}, vmNoPMU, errNoPMU); err == nil ||
		!strings.Contains(err.Error(), "no uprobe PMU") {
		t.Errorf("uprobe without uprobes: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	withUprobes(t, nil)
	cost := 1234 * time.Nanosecond
	auto, _ := Choose(Mode{Kind: "auto"}, vmNoPMU, errNoPMU)
	named := auto
	named.Functions = []string{"main.densityLeaf", "github.com/cctop/cctop/workload.densityPhaseC"}
	hw, _ := Choose(Mode{Kind: "auto"}, skylakeSP, nil)
	zen := CPU{Arch: "amd64", Vendor: "AuthenticAMD", Family: 0x19, Model: 0x11, CorePMUs: []string{"cpu"}}
	zenSrc, _ := Choose(Mode{Kind: "hw"}, zen, nil)
	hybrid := CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 6, Model: 0x9a, CorePMUs: []string{"cpu_core", "cpu_atom"}}
	hy, reason := CallEvents(hybrid, fakeTypes)
	if hy == nil {
		t.Fatal(reason)
	}
	none, _ := Choose(Mode{Kind: "none"}, skylakeSP, nil)
	asked, err := Choose(Mode{Kind: "uprobe", Functions: []string{"densityLeaf", "densityPhaseC"}}, vmNoPMU, errNoPMU)
	if err != nil {
		t.Fatal(err)
	}
	weak := Source{Kind: "hw", Events: []CallEvent{BranchProxy()}}
	many := Source{Kind: "uprobe", Functions: []string{"a", "b", "c", "d", "e", "f"}}
	for _, c := range []struct {
		s    Source
		cost time.Duration
		want string
	}{
		{named, cost, "call counter: uprobes on 2 functions (main.densityLeaf, workload.densityPhaseC), ~1.2 µs per hit; no hardware PMU here"},
		{auto, 850 * time.Nanosecond, "call counter: uprobes on the 4 hottest functions (chosen from the live profile), ~0.85 µs per hit; no hardware PMU here"},
		{asked, cost, "call counter: uprobes on 2 functions (densityLeaf, densityPhaseC), ~1.2 µs per hit; no hardware PMU here"},
		{many, 0, "call counter: uprobes on 6 functions (a, b, c, +3 more)"},
		{hw, cost, "call counter: BR_INST_RETIRED.NEAR_CALL (cpu)"},
		{zenSrc, 0, "call counter: ex_ret_near_ret (cpu) (returns, a proxy for calls)"},
		{Source{Kind: "hw", Events: hy}, 0, "call counter: BR_INST_RETIRED.NEAR_CALL (cpu_core) + BR_INST_RETIRED.NEAR_CALL (cpu_atom)"},
		{weak, 0, "call counter: branch-instructions (all branches: a weak proxy for calls)"},
		{none, 0, "call counter: none (density correction off: --calls none)"},
	} {
		if got := Describe(c.s, c.cost); got != c.want {
			t.Errorf("Describe:\n got  %q\n want %q", got, c.want)
		}
	}
}
