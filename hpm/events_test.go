package hpm

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cctop/cctop/sampler"
)

// fakeTypes stands for sysfs: cpu and cpu_core are PERF_TYPE_RAW, the
// others get the dynamic numbers a real hybrid or Arm box shows.
func fakeTypes(pmu string) (uint32, error) {
	switch pmu {
	case "cpu", "cpu_core":
		return 4, nil
	case "cpu_atom":
		return 10, nil
	case "cpu_lowpower":
		return 11, nil
	case "armv8_pmuv3_0":
		return 9, nil
	}
	return 0, fmt.Errorf("no PMU %s", pmu)
}

func TestCallEventsTable(t *testing.T) {
	intel := func(model, stepping int, pmus ...string) CPU {
		return CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 6, Model: model, Stepping: stepping, CorePMUs: pmus}
	}
	amd := func(family, model int) CPU {
		return CPU{Arch: "amd64", Vendor: "AuthenticAMD", Family: family, Model: model, CorePMUs: []string{"cpu"}}
	}
	type ev struct {
		name   string
		pmu    string
		typ    uint32
		config uint64
		proxy  bool
		source string // pmu-events file the encoding was checked against
	}
	const x86 = "tools/perf/pmu-events/arch/x86/"
	nearCall := func(dir string) ev {
		return ev{"BR_INST_RETIRED.NEAR_CALL", "cpu", 4, 0x02c4, false, x86 + dir + "/pipeline.json"}
	}
	atomCall := func(name, dir, pmu string, typ uint32) ev {
		return ev{name, pmu, typ, 0xf9c4, false, x86 + dir + "/pipeline.json"}
	}
	retNearRet := func(file string) ev { return ev{"ex_ret_near_ret", "cpu", 4, 0xc8, true, x86 + file} }
	cases := []struct {
		what string
		cpu  CPU
		want []ev
	}{
		{"Skylake client", intel(0x5e, 3, "cpu"), []ev{nearCall("skylake")}},
		{"Skylake-SP (the 8175M testdata)", intel(0x55, 4, "cpu"), []ev{nearCall("skylakex")}},
		{"Cascade Lake", intel(0x55, 7, "cpu"), []ev{nearCall("cascadelakex")}},
		{"Ice Lake-SP", intel(0x6a, 6, "cpu"), []ev{nearCall("icelakex")}},
		{"Tiger Lake", intel(0x8c, 1, "cpu"), []ev{nearCall("tigerlake")}},
		{"Sapphire Rapids", intel(0x8f, 8, "cpu"), []ev{nearCall("sapphirerapids")}},
		{"Emerald Rapids", intel(0xcf, 2, "cpu"), []ev{nearCall("emeraldrapids")}},
		{"Granite Rapids", intel(0xad, 1, "cpu"), []ev{nearCall("graniterapids")}},
		{"Alder Lake hybrid (the i7-1255U testdata)", intel(0x9a, 4, "cpu_core", "cpu_atom"), []ev{
			{"BR_INST_RETIRED.NEAR_CALL", "cpu_core", 4, 0x02c4, false, x86 + "alderlake/pipeline.json"},
			atomCall("BR_INST_RETIRED.NEAR_CALL", "alderlake", "cpu_atom", 10),
		}},
		{"Raptor Lake hybrid", intel(0xb7, 1, "cpu_core", "cpu_atom"), []ev{
			{"BR_INST_RETIRED.NEAR_CALL", "cpu_core", 4, 0x02c4, false, x86 + "alderlake/pipeline.json"},
			atomCall("BR_INST_RETIRED.NEAR_CALL", "alderlake", "cpu_atom", 10),
		}},
		{"Alder Lake with E-cores off: one cpu PMU, the P-core event", intel(0x97, 2, "cpu"),
			[]ev{nearCall("alderlake")}},
		{"Meteor Lake hybrid", intel(0xaa, 4, "cpu_core", "cpu_atom"), []ev{
			{"BR_INST_RETIRED.NEAR_CALL", "cpu_core", 4, 0x02c4, false, x86 + "meteorlake/pipeline.json"},
			atomCall("BR_INST_RETIRED.NEAR_CALL", "meteorlake", "cpu_atom", 10),
		}},
		{"Arrow Lake with low-power E-cores", intel(0xc5, 2, "cpu_core", "cpu_atom", "cpu_lowpower"), []ev{
			{"BR_INST_RETIRED.NEAR_CALL", "cpu_core", 4, 0x02c4, false, x86 + "arrowlake/pipeline.json"},
			atomCall("BR_INST_RETIRED.NEAR_CALL", "arrowlake", "cpu_atom", 10),
			atomCall("BR_INST_RETIRED.NEAR_CALL", "arrowlake", "cpu_lowpower", 11),
		}},
		{"Alder Lake-N, Gracemont only", intel(0xbe, 0, "cpu"), []ev{atomCall("BR_INST_RETIRED.NEAR_CALL", "alderlaken", "cpu", 4)}},
		{"Goldmont", intel(0x5c, 9, "cpu"), []ev{atomCall("BR_INST_RETIRED.CALL", "goldmont", "cpu", 4)}},
		{"Tremont (Snow Ridge)", intel(0x86, 7, "cpu"), []ev{atomCall("BR_INST_RETIRED.CALL", "snowridgex", "cpu", 4)}},
		{"Tremont (Jasper Lake)", intel(0x9c, 0, "cpu"), []ev{atomCall("BR_INST_RETIRED.CALL", "elkhartlake", "cpu", 4)}},
		{"Sierra Forest (Crestmont)", intel(0xaf, 3, "cpu"), []ev{atomCall("BR_INST_RETIRED.NEAR_CALL", "sierraforest", "cpu", 4)}},
		{"Zen 1 (Naples)", amd(0x17, 0x01), []ev{retNearRet("amdzen1/core.json")}},
		{"Zen 2 (the EPYC 7K62 testdata)", amd(0x17, 0x31), []ev{retNearRet("amdzen2/core.json")}},
		{"Zen 3 (Milan)", amd(0x19, 0x01), []ev{retNearRet("amdzen3/core.json")}},
		{"Zen 3 (Vermeer)", amd(0x19, 0x21), []ev{retNearRet("amdzen3/core.json")}},
		{"Zen 4 (the EPYC 9R14 testdata)", amd(0x19, 0x11), []ev{retNearRet("amdzen4/branch.json")}},
		{"Zen 4 (Raphael)", amd(0x19, 0x61), []ev{retNearRet("amdzen4/branch.json")}},
		{"Zen 5 (this machine's family)", amd(0x1a, 0x02), []ev{retNearRet("amdzen5/execution.json")}},
		{"Neoverse-N1 (the Altra testdata)", CPU{Arch: "arm64", Vendor: "ARM", Family: 8, Model: 0xd0c, CorePMUs: []string{"armv8_pmuv3_0"}},
			[]ev{{"BR_RETURN_RETIRED", "armv8_pmuv3_0", 9, 0x0e, true, "tools/perf/pmu-events/arch/arm64/common-and-microarch.json"}}},
	}
	for _, c := range cases {
		t.Run(c.what, func(t *testing.T) {
			evs, reason := CallEvents(c.cpu, fakeTypes)
			if reason != "" || len(evs) != len(c.want) {
				t.Fatalf("got %d events (%q), want %d", len(evs), reason, len(c.want))
			}
			for i, w := range c.want {
				g := evs[i]
				if g.Name != w.name || g.PMU != w.pmu || g.Type != w.typ || g.Config != w.config ||
					g.Proxy != w.proxy || g.Weak || g.Source != w.source {
					t.Errorf("event %d:\n got  %+v\n want %+v", i, g, w)
				}
				spec := g.Spec()
				if !spec.Hardware || spec.Type != w.typ || spec.Config != w.config || spec.UprobePath != "" ||
					spec.Name != w.pmu+"/"+w.name+"/" {
					t.Errorf("spec %+v", spec)
				}
			}
		})
	}
}

func TestTestdataCPUsHaveEvents(t *testing.T) {
	for _, f := range []struct {
		file, arch string
		pmus       []string
	}{
		{"cpuinfo-skylakex-xeon-8175m.txt", "amd64", []string{"cpu"}},
		{"cpuinfo-alderlake-i7-1255u.txt", "amd64", []string{"cpu_core", "cpu_atom"}},
		{"cpuinfo-zen2-epyc-7k62.txt", "amd64", []string{"cpu"}},
		{"cpuinfo-zen4-epyc-9r14.txt", "amd64", []string{"cpu"}},
		{"cpuinfo-neoverse-n1-altra.txt", "arm64", []string{"armv8_pmuv3_0"}},
	} {
		cpu := ParseCPUInfo(readTestdata(t, f.file), f.arch)
		cpu.CorePMUs = f.pmus
		if evs, reason := CallEvents(cpu, fakeTypes); len(evs) != len(f.pmus) {
			t.Errorf("%s: %d events for %d PMUs: %s", f.file, len(evs), len(f.pmus), reason)
		}
	}
}

func TestCallEventsNone(t *testing.T) {
	cases := []struct {
		what string
		cpu  CPU
		says []string
	}{
		{"VM without PMU", CPU{Arch: "amd64", Vendor: "AuthenticAMD", Family: 0x1a, Model: 2},
			[]string{"no hardware PMU", "VM without PMU passthrough"}},
		{"Intel model not in the table (Haswell)", CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 6, Model: 0x3f,
			ModelName: "Intel(R) Xeon(R) CPU E5-2670 v3", CorePMUs: []string{"cpu"}},
			[]string{"no call-counting event known", "model 0x3f", "E5-2670 v3", "Skylake to Granite Rapids"}},
		{"Intel family 19", CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 19, Model: 1, CorePMUs: []string{"cpu"}},
			[]string{"Intel family 19", "family 6 only"}},
		{"AMD family 0x15 (Bulldozer)", CPU{Arch: "amd64", Vendor: "AuthenticAMD", Family: 0x15, Model: 2, CorePMUs: []string{"cpu"}},
			[]string{"AMD family 0x15", "Zen 1 to Zen 5"}},
		{"other x86 vendor", CPU{Arch: "amd64", Vendor: "CentaurHauls", Family: 6, Model: 0xf, CorePMUs: []string{"cpu"}},
			[]string{"CentaurHauls"}},
		{"atom PMU on a big-core-only model", CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 6, Model: 0x8f,
			CorePMUs: []string{"cpu_core", "cpu_atom"}}, []string{"cpu_atom", "sapphirerapids"}},
		{"Arm PMU type unreadable", CPU{Arch: "arm64", Vendor: "ARM", Family: 8, Model: 0xd0c, CorePMUs: []string{"armv8_cortex_a72"}},
			[]string{"cannot address the armv8_cortex_a72 PMU"}},
	}
	for _, c := range cases {
		evs, reason := CallEvents(c.cpu, fakeTypes)
		if evs != nil {
			t.Errorf("%s: got events %+v", c.what, evs)
		}
		for _, s := range c.says {
			if !strings.Contains(reason, s) {
				t.Errorf("%s: reason %q does not say %q", c.what, reason, s)
			}
		}
	}
}

// cpu and cpu_core are PERF_TYPE_RAW by definition; a missing sysfs entry
// (a container without /sys) must not lose the event.
func TestCallEventsRawFallback(t *testing.T) {
	none := func(string) (uint32, error) { return 0, errors.New("no sysfs") }
	evs, reason := CallEvents(CPU{Arch: "amd64", Vendor: "GenuineIntel", Family: 6, Model: 0x55, Stepping: 4,
		CorePMUs: []string{"cpu"}}, none)
	if len(evs) != 1 || evs[0].Type != 4 {
		t.Fatalf("%+v %q, want one event of type 4", evs, reason)
	}
}

func TestAMDConfig(t *testing.T) {
	for _, c := range []struct {
		event uint16
		umask uint8
		want  uint64
	}{
		{0xc8, 0, 0xc8},
		{0x1c8, 0, 0x1_0000_00c8}, // ex_ret_uncond_brnch_instr_mispred: bits 11:8 to 35:32
		{0x1cf, 0x02, 0x1_0000_02cf},
	} {
		if got := amdConfig(c.event, c.umask); got != c.want {
			t.Errorf("amdConfig(%#x, %#x) = %#x, want %#x", c.event, c.umask, got, c.want)
		}
	}
}

func TestBranchProxyIsWeak(t *testing.T) {
	b := BranchProxy()
	if !b.Weak || !b.Proxy || b.Type != sampler.TypeHardware || b.Config != 4 {
		t.Fatalf("%+v", b)
	}
	if l := b.label(); !strings.Contains(l, "weak proxy") {
		t.Errorf("label %q does not say it is weak", l)
	}
}

// This machine is a VM without a PMU: the probe must fail and say so. Where
// a PMU exists the probe must succeed instead.
func TestProbeHW(t *testing.T) {
	cpu := DetectCPU()
	err := ProbeHW(cpu)
	t.Logf("ProbeHW(%s %s, PMUs %v): %v", cpu.Vendor, cpu.ModelName, cpu.CorePMUs, err)
	if len(cpu.CorePMUs) > 0 {
		if _, reason := CallEvents(cpu, PMUType); reason == "" && err != nil {
			t.Errorf("a PMU with a known call event exists, but the probe failed: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("no core PMU, yet the probe succeeded")
	}
	if !errors.Is(err, ErrNoPMU) || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("error %q: want ErrNoPMU saying 'not supported'", err)
	}
}
