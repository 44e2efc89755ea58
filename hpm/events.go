package hpm

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/cctop/cctop/sampler"
)

// CallEvent is one hardware event that counts calls (or stands in for them)
// on one core PMU.
type CallEvent struct {
	Name   string // as the pmu-events tables spell it
	PMU    string // the core PMU it is opened on: cpu, cpu_core, cpu_atom, armv8_pmuv3_0, ...
	Type   uint32 // perf_event_attr.type of that PMU
	Config uint64 // raw event encoding for that PMU
	// Proxy: counts something that tracks calls rather than calls (returns).
	// A return per call holds for ordinary code; tail calls, longjmp,
	// exceptions and goroutine switches break it a little.
	Proxy bool
	// Weak: counts far more than calls (all branches). Density then follows
	// loop structure as much as calls; only an explicit last resort.
	Weak   bool
	Source string // the kernel pmu-events file the encoding was checked against
}

// Spec is the event as the sampler opens it. On a hybrid part a thread's
// calls are split between the PMUs of the core types it ran on, so the
// events of all core PMUs are opened together and their counts summed.
func (e CallEvent) Spec() sampler.EventSpec {
	name := e.Name
	if e.PMU != "" {
		name = e.PMU + "/" + e.Name + "/"
	}
	return sampler.EventSpec{Name: name, Type: e.Type, Config: e.Config, Hardware: true}
}

// label is how the event reads in one line of the UI.
func (e CallEvent) label() string {
	s := e.Name
	if e.PMU != "" {
		s += " (" + e.PMU + ")"
	}
	switch {
	case e.Weak:
		s += " (all branches: a weak proxy for calls)"
	case e.Proxy:
		s += " (returns, a proxy for calls)"
	}
	return s
}

// perf_event_attr.type of PERF_TYPE_RAW. The kernel registers the x86 "cpu"
// PMU, and cpu_core on hybrids, under this fixed number (arch/x86/events/
// core.c: perf_pmu_register(&pmu, "cpu", PERF_TYPE_RAW)); cpu_atom and the
// Arm PMUs get dynamic numbers that only sysfs knows.
const typeRaw = 4

// intelCode is an Intel event in the pmu-events spelling. The raw config of
// an Intel core PMU is event | umask<<8.
type intelCode struct {
	name         string
	event, umask uint8
}

func (c intelCode) config() uint64 { return uint64(c.event) | uint64(c.umask)<<8 }

var (
	// Big cores (Skylake through Lion Cove) count near calls, direct and
	// indirect, with umask 0x02.
	nearCallCore = intelCode{"BR_INST_RETIRED.NEAR_CALL", 0xc4, 0x02}
	// Atom cores select branch types by clearing umask bits: 0xf9 keeps
	// near calls. Goldmont and Tremont call it BR_INST_RETIRED.CALL,
	// Gracemont onwards BR_INST_RETIRED.NEAR_CALL; same encoding.
	nearCallAtom = intelCode{"BR_INST_RETIRED.NEAR_CALL", 0xc4, 0xf9}
	callAtom     = intelCode{"BR_INST_RETIRED.CALL", 0xc4, 0xf9}
)

// intelRow maps family-6 models (from tools/perf/pmu-events/arch/x86/
// mapfile.csv) to the near-call event of each core type they have. A nil
// core or atom means the part has no cores of that type.
type intelRow struct {
	dir              string // pmu-events directory under arch/x86
	models           []int
	minStep, maxStep int // model 0x55 is Skylake-SP or Cascade Lake by stepping
	core, atom       *intelCode
}

// Every row was checked by reading BR_INST_RETIRED.NEAR_CALL (or .CALL on
// the older Atoms) in tools/perf/pmu-events/arch/x86/<dir>/pipeline.json of
// the Linux tree; the comment names the cores.
var intelTable = []intelRow{
	// Skylake, Kaby Lake, Coffee Lake, Comet Lake client: skylake/pipeline.json
	{dir: "skylake", models: []int{0x4e, 0x5e, 0x8e, 0x9e, 0xa5, 0xa6}, maxStep: 15, core: &nearCallCore},
	// Skylake-SP, steppings 0-4: skylakex/pipeline.json
	{dir: "skylakex", models: []int{0x55}, maxStep: 4, core: &nearCallCore},
	// Cascade Lake-SP (and Cooper Lake), steppings 5-15: cascadelakex/pipeline.json
	{dir: "cascadelakex", models: []int{0x55}, minStep: 5, maxStep: 15, core: &nearCallCore},
	// Ice Lake client (Sunny Cove): icelake/pipeline.json
	{dir: "icelake", models: []int{0x7d, 0x7e}, maxStep: 15, core: &nearCallCore},
	// Ice Lake-SP: icelakex/pipeline.json
	{dir: "icelakex", models: []int{0x6a, 0x6c}, maxStep: 15, core: &nearCallCore},
	// Tiger Lake (Willow Cove): tigerlake/pipeline.json
	{dir: "tigerlake", models: []int{0x8c, 0x8d}, maxStep: 15, core: &nearCallCore},
	// Sapphire Rapids (Golden Cove): sapphirerapids/pipeline.json
	{dir: "sapphirerapids", models: []int{0x8f}, maxStep: 15, core: &nearCallCore},
	// Emerald Rapids (Raptor Cove): emeraldrapids/pipeline.json
	{dir: "emeraldrapids", models: []int{0xcf}, maxStep: 15, core: &nearCallCore},
	// Granite Rapids (Redwood Cove): graniterapids/pipeline.json
	{dir: "graniterapids", models: []int{0xad, 0xae}, maxStep: 15, core: &nearCallCore},
	// Alder Lake and Raptor Lake, Golden/Raptor Cove + Gracemont:
	// alderlake/pipeline.json lists both units (cpu_core 0x02, cpu_atom 0xf9)
	{dir: "alderlake", models: []int{0x97, 0x9a, 0xb7, 0xba, 0xbf}, maxStep: 15, core: &nearCallCore, atom: &nearCallAtom},
	// Meteor Lake, Redwood Cove + Crestmont: meteorlake/pipeline.json
	{dir: "meteorlake", models: []int{0xaa, 0xac}, maxStep: 15, core: &nearCallCore, atom: &nearCallAtom},
	// Arrow Lake, Lion Cove + Skymont (also cpu_lowpower, same 0xf9):
	// arrowlake/pipeline.json
	{dir: "arrowlake", models: []int{0xc5, 0xc6}, maxStep: 15, core: &nearCallCore, atom: &nearCallAtom},
	// Lunar Lake, Lion Cove + Skymont: lunarlake/pipeline.json
	{dir: "lunarlake", models: []int{0xbd}, maxStep: 15, core: &nearCallCore, atom: &nearCallAtom},
	// Alder Lake-N, Gracemont only: alderlaken/pipeline.json
	{dir: "alderlaken", models: []int{0xbe}, maxStep: 15, atom: &nearCallAtom},
	// Goldmont (Apollo Lake, Denverton): goldmont/pipeline.json
	{dir: "goldmont", models: []int{0x5c, 0x5f}, maxStep: 15, atom: &callAtom},
	// Goldmont Plus (Gemini Lake): goldmontplus/pipeline.json
	{dir: "goldmontplus", models: []int{0x7a}, maxStep: 15, atom: &callAtom},
	// Tremont (Snow Ridge): snowridgex/pipeline.json
	{dir: "snowridgex", models: []int{0x86}, maxStep: 15, atom: &callAtom},
	// Tremont (Elkhart Lake, Jasper Lake): elkhartlake/pipeline.json
	{dir: "elkhartlake", models: []int{0x96, 0x9c}, maxStep: 15, atom: &callAtom},
	// Sierra Forest, Crestmont: sierraforest/pipeline.json
	{dir: "sierraforest", models: []int{0xaf}, maxStep: 15, atom: &nearCallAtom},
}

func intelSource(dir string) string {
	return "tools/perf/pmu-events/arch/x86/" + dir + "/pipeline.json"
}

// AMD has no retired-call event on any Zen core. Retired near returns
// (ex_ret_near_ret, event 0xc8) are the proxy: one per call that returns.
type amdRow struct {
	family int
	models func(model int) bool // nil: every model of the family
	file   string               // pmu-events file under arch/x86
}

// Family/model ranges are mapfile.csv's regular expressions for AMD.
var amdTable = []amdRow{
	// AuthenticAMD-23-([12][0-9A-F]|[0-9A-F]): Zen 1 and Zen+
	{0x17, func(m int) bool { return m <= 0x2f }, "amdzen1/core.json"},
	// any other family 0x17 model: Zen 2
	{0x17, nil, "amdzen2/core.json"},
	// AuthenticAMD-25-([245][[:xdigit:]]|[[:xdigit:]]): Zen 3
	{0x19, func(m int) bool { return m <= 0x0f || (m >= 0x20 && m <= 0x5f) }, "amdzen3/core.json"},
	// any other family 0x19 model: Zen 4 (the event moved to branch.json)
	{0x19, nil, "amdzen4/branch.json"},
	// AuthenticAMD-26-[[:xdigit:]]+: Zen 5
	{0x1a, nil, "amdzen5/execution.json"},
}

const amdRetNearRet = 0xc8

// amdConfig encodes an AMD core event for PERF_TYPE_RAW: event bits 7:0 go
// to config bits 7:0, the unit mask to 15:8, and event bits 11:8 to config
// bits 35:32 (the EventSelect[11:8] field of PERF_CTL).
func amdConfig(event uint16, umask uint8) uint64 {
	return uint64(event&0xff) | uint64(umask)<<8 | uint64(event&0xf00)<<24
}

// Arm's PMUv3 common event 0x0E counts procedure returns architecturally
// executed; no common event counts calls. It is optional in PMUv3, which is
// why ProbeHW opens it: the driver refuses events the PMU does not list in
// PMCEID0.
const armBrReturnRetired = 0x0e

const armSource = "tools/perf/pmu-events/arch/arm64/common-and-microarch.json"

// noPMUReason is what CallEvents says when the kernel registered no core PMU.
const noPMUReason = "no hardware PMU: the kernel registered no core PMU under " + eventSourceDir +
	" (a VM without PMU passthrough?)"

// CallEvents names the call-counting event of each core PMU of cpu, or
// returns nil and why there is none, in words for the user. pmuType looks up
// a PMU's perf type (PMUType reads sysfs; tests inject their own).
func CallEvents(cpu CPU, pmuType func(pmu string) (uint32, error)) ([]CallEvent, string) {
	if len(cpu.CorePMUs) == 0 {
		return nil, noPMUReason
	}
	var evs []CallEvent
	for _, pmu := range cpu.CorePMUs {
		ev, why := callEvent(cpu, pmu)
		if why != "" {
			return nil, why
		}
		typ, err := pmuType(pmu)
		if err != nil {
			if pmu != "cpu" && pmu != "cpu_core" {
				return nil, fmt.Sprintf("cannot address the %s PMU: %v", pmu, err)
			}
			typ = typeRaw
		}
		ev.PMU, ev.Type = pmu, typ
		evs = append(evs, ev)
	}
	return evs, ""
}

// callEvent finds the event for one core PMU, without its perf type.
func callEvent(cpu CPU, pmu string) (CallEvent, string) {
	x86PMU := pmu == "cpu" || pmu == "cpu_core" || pmu == "cpu_atom" || pmu == "cpu_lowpower"
	switch {
	case cpu.Arch == "arm64":
		return CallEvent{Name: "BR_RETURN_RETIRED", Config: armBrReturnRetired, Proxy: true, Source: armSource}, ""
	case !x86PMU:
		return CallEvent{}, fmt.Sprintf("no call-counting event known for the %s PMU on %s", pmu, cpu.Arch)
	case cpu.Vendor == "GenuineIntel":
		return intelEvent(cpu, pmu)
	case cpu.Vendor == "AuthenticAMD":
		return amdEvent(cpu)
	}
	vendor := cpu.Vendor
	if vendor == "" {
		vendor = "an unknown vendor"
	}
	return CallEvent{}, fmt.Sprintf("no call-counting event known for CPUs of %s (%s); "+
		"density correction needs one, or uprobes", vendor, cpu.Arch)
}

func intelEvent(cpu CPU, pmu string) (CallEvent, string) {
	if cpu.Family != 6 {
		return CallEvent{}, fmt.Sprintf("no call-counting event known for Intel family %d model %#x (%s): "+
			"cctop's table covers family 6 only", cpu.Family, cpu.Model, cpu.ModelName)
	}
	i := slices.IndexFunc(intelTable, func(r intelRow) bool {
		return slices.Contains(r.models, cpu.Model) && cpu.Stepping >= r.minStep && cpu.Stepping <= r.maxStep
	})
	if i < 0 {
		return CallEvent{}, fmt.Sprintf("no call-counting event known for Intel family 6 model %#x (%s): "+
			"cctop's table covers Skylake to Granite Rapids, the hybrid Alder, Raptor, Meteor, Arrow and Lunar Lake, "+
			"and the Goldmont, Tremont, Gracemont and Crestmont Atoms", cpu.Model, cpu.ModelName)
	}
	row := intelTable[i]
	code := row.core
	switch pmu {
	case "cpu_atom", "cpu_lowpower":
		code = row.atom
	case "cpu":
		// A hybrid part whose kernel registered one "cpu" PMU has no
		// E-cores in play (disabled, or hidden by a hypervisor): the
		// P-core event. Atom-only parts have only the Atom one.
		if code == nil {
			code = row.atom
		}
	}
	if code == nil {
		return CallEvent{}, fmt.Sprintf("Intel model %#x (%s) has a %s PMU but cctop's table (%s) has no such cores",
			cpu.Model, row.dir, pmu, intelSource(row.dir))
	}
	return CallEvent{Name: code.name, Config: code.config(), Source: intelSource(row.dir)}, ""
}

func amdEvent(cpu CPU) (CallEvent, string) {
	for _, r := range amdTable {
		if r.family == cpu.Family && (r.models == nil || r.models(cpu.Model)) {
			return CallEvent{Name: "ex_ret_near_ret", Config: amdConfig(amdRetNearRet, 0), Proxy: true,
				Source: "tools/perf/pmu-events/arch/x86/" + r.file}, ""
		}
	}
	return CallEvent{}, fmt.Sprintf("no call-counting event known for AMD family %#x model %#x (%s): "+
		"cctop's table covers Zen 1 to Zen 5 (families 0x17, 0x19, 0x1a)", cpu.Family, cpu.Model, cpu.ModelName)
}

// BranchProxy is the generic branch-instructions event, which any PMU that
// perf knows has. It counts every branch, so call density read from it
// follows loops as much as calls: offer it only when asked for explicitly,
// and always with its Weak label.
func BranchProxy() CallEvent {
	return CallEvent{
		Name:   "branch-instructions",
		Type:   sampler.TypeHardware,
		Config: 4, // PERF_COUNT_HW_BRANCH_INSTRUCTIONS
		Proxy:  true,
		Weak:   true,
		Source: "include/uapi/linux/perf_event.h (PERF_COUNT_HW_BRANCH_INSTRUCTIONS)",
	}
}

// ErrNoPMU marks the failures that mean this machine has no hardware PMU at
// all, as opposed to a PMU without a known call event.
var ErrNoPMU = errors.New("no hardware PMU")

type noPMUError struct {
	what string
	err  error
}

func (e *noPMUError) Error() string {
	return fmt.Sprintf("no hardware PMU: %s is %s (%v; a VM without PMU passthrough?)", e.what, errnoWords(e.err), e.err)
}

func (e *noPMUError) Unwrap() []error { return []error{ErrNoPMU, e.err} }

// ProbeHW opens the call events of cpu once each, user space only (what an
// unprivileged user at perf_event_paranoid 2 may do), and closes them: nil
// means hardware call counting works here. Without a core PMU it tries
// cycles, so the error says what the kernel answered rather than what sysfs
// lacks.
func ProbeHW(cpu CPU) error {
	if len(cpu.CorePMUs) == 0 {
		cycles := sampler.EventSpec{Name: "cycles", Type: sampler.TypeHardware, Config: 0, Hardware: true}
		if err := sampler.ProbeEvent(cycles, true); err != nil {
			return &noPMUError{what: "perf_event_open(cycles)", err: err}
		}
		// cycles works although sysfs shows no PMU (sysfs not mounted in
		// a container, say): the x86 and Arm core PMUs both take
		// PERF_TYPE_RAW, so carry on with the fixed number.
		cpu.CorePMUs = []string{"cpu"}
	}
	evs, reason := CallEvents(cpu, PMUType)
	if evs == nil {
		return errors.New(reason)
	}
	for _, ev := range evs {
		if err := sampler.ProbeEvent(ev.Spec(), true); err != nil {
			return fmt.Errorf("%s on the %s PMU: perf_event_open is %s: %w", ev.Name, ev.PMU, errnoWords(err), err)
		}
	}
	return nil
}

// errnoWords says what perf_event_open's errno means for the user.
func errnoWords(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return "refused"
	}
	switch errno {
	case syscall.ENOENT, syscall.EOPNOTSUPP, syscall.ENODEV:
		return "not supported"
	case syscall.EACCES, syscall.EPERM:
		return "not permitted (" + sampler.FixPerfEvent() + ")"
	case syscall.EBUSY:
		return "busy (counters held by someone else)"
	case syscall.EINVAL:
		return "rejected as invalid"
	}
	return "refused"
}

// describeEvents is the hardware part of the one-line summary.
func describeEvents(evs []CallEvent) string {
	labels := make([]string, len(evs))
	for i, e := range evs {
		labels[i] = e.label()
	}
	return strings.Join(labels, " + ")
}
