package engine

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/cctop/cctop/lang"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// What takes a sample (design §2): the clock, every Nth call of the
// counted functions, or every call. The plan holds one; Options.Trigger
// names it with the exported copies.
const (
	triggerTime  = "time"
	triggerCalls = "calls"
	triggerExact = "exact"
)

// countingFlags choose the trigger, the call counter and the correction.
type countingFlags struct {
	trigger   string
	calls     string
	alpha     float64
	noDensity bool
	noLatency bool
	budget    float64 // percent of the target's CPU time automatic counting may cost
}

// Plan is how calls get counted and samples weighted in one run.
type Plan struct {
	trigger string
	source  hpm.Source
	targets []hpm.Target
	auto    bool          // uprobe targets come from the live profile
	cost    time.Duration // measured cost of one uprobe hit (0: not measured)
	// costs of a hit on a probed instruction the kernel emulates and on
	// one it single-steps, measured at start (0: not measured)
	costEmulated, costStepped time.Duration
	// costBreakpoint is what a hit of a trial's hardware breakpoint costs,
	// 0 where there are none (trials then use uprobes)
	costBreakpoint time.Duration
	// measuring, when set, measures the costs aside: settleCosts first
	measuring *sync.WaitGroup
	// hitCosts remembers hitCost's answers: each reads the target's file
	hitCosts map[hpm.Target]time.Duration
	params   correct.Params
	budget   float64 // share of the target's CPU time automatic counters may cost
	binary   string  // the target's executable, where uprobe names resolve
	entries  map[entryKey]bool
	unwind   unwindPlan
	limits   limits
	mode     string        // ModeCPU, ModeOffCPU or ModeWall: what the time metric holds
	refresh  time.Duration // Options.Refresh
	// runtime is what cctop did to, or knows of, the target's language
	// runtime, in a line for the header and summary ("": nothing);
	// launch is the decision for a launched command (runtimes.go).
	runtime string
	launch  lang.Launch
	// noPython: Python stacks are not read from interpreters
	// (Options.Python "off").
	noPython bool
	pyBudget float64 // Options.PythonBudget, a share
}

// dummyEvent counts nothing: it carries the target's sideband records
// (mmaps, comms, forks) when the samples come from probes.
var dummyEvent = sampler.EventSpec{Name: "dummy", Type: sampler.TypeSoftware, Config: 9}

// callsPeriodDefault is N for --trigger calls without -c: one sample per
// 997 calls of the counted functions. A prime, as VTune's sample-after
// values are: a fixed period that divides a loop's round count samples the
// same call of every round (every 100th call of a leaf that two sites call
// 50 times each in turn always lands in the same site).
const callsPeriodDefault = 997

// autoK is how many hot functions get a counting uprobe under --calls auto
// without a PMU.
const autoK = hpm.DefaultAutoK

// planCounting checks the counting flags against the machine and fills the
// sampler configuration: members for the time trigger, leaders for the
// calls and exact triggers.
func planCounting(cf countingFlags, cfg *sampler.Config, periodSet bool) (*Plan, error) {
	p := &Plan{trigger: cf.trigger, params: correct.Params{Density: !cf.noDensity, Latency: !cf.noLatency, Alpha: cf.alpha}}
	switch cf.trigger {
	case triggerTime, triggerCalls, triggerExact:
	default:
		return nil, usageError("unknown --trigger %q (time, calls or exact)", cf.trigger)
	}
	p.budget = autoBudget
	if cf.budget != 0 {
		p.budget = cf.budget / 100
	}
	if !(cf.budget >= 0 && cf.budget <= 100) {
		return nil, usageError("--budget must be a percentage between 0 and 100, got %g", cf.budget)
	}
	if !ValidAlpha(cf.alpha) {
		return nil, usageError("--alpha must be >= 0 and finite, got %g", cf.alpha)
	}
	mode, err := hpm.ParseMode(cf.calls)
	if err != nil {
		return nil, usageError("%v", err)
	}
	cpu := hpm.DetectCPU()
	p.source, err = hpm.Choose(mode, cpu, hpm.ProbeHW(cpu))
	if err != nil {
		return nil, err
	}
	if p.source.Kind == "uprobe" && mode.Kind == "auto" && cfg.AllProcesses {
		// Uprobes count one executable's functions; the host has many.
		p.source = hpm.Source{Kind: "none", HWMissing: p.source.HWMissing,
			Reason: "no call counter: uprobes count one executable's functions, and more than one process is sampled (give one -p PID or a command for call counts)"}
	}
	if p.source.Kind == "uprobe" {
		if p.binary, err = targetBinary(*cfg); err != nil {
			return nil, err
		}
		if len(p.source.Functions) > 0 {
			targets, err := hpm.ResolveTargets(p.binary, p.source.Functions)
			if err != nil {
				return nil, err
			}
			p.targets, p.entries = placeProbes(targets)
		} else {
			p.auto = true
		}
	}

	period := uint64(callsPeriodDefault)
	if periodSet && cf.trigger == triggerCalls {
		period = cfg.Period
	}
	if !triggerConfig(cfg, cf.trigger, p.source, p.targets, period) {
		return nil, usageError("--trigger %s needs the functions to probe: give --calls uprobe:F1,F2", cf.trigger)
	}
	if p.source.Kind == "uprobe" {
		// Measured aside while the target starts: opening each
		// calibration probe waits for the kernel's grace periods, 0.1 s
		// before the target could start, and the costs are needed at the
		// first arming, a warm-up later, or for the summary.
		p.measuring = new(sync.WaitGroup)
		p.measuring.Go(func() {
			p.costEmulated, p.costStepped = probeCosts()
			if p.auto {
				p.costBreakpoint, _ = hpm.MeasureBreakpointCost(200)
			}
			p.cost = p.costStepped
			if symbol.IsGoBinary(p.binary) || p.costStepped == 0 {
				// Go probes sit past the stack check, on a PUSHQ BP.
				p.cost = p.costEmulated
			}
		})
	}
	return p, nil
}

// settleCosts waits for the costs of a hit to be measured: read them after.
func (p *Plan) settleCosts() {
	if p != nil && p.measuring != nil {
		p.measuring.Wait()
	}
}

// costWords is what a probe hit costs, for the summary: "9.3µs" or
// "0.62µs emulated, 9.3µs stepped".
func (p *Plan) costWords() string {
	p.settleCosts()
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Nanosecond) }
	if p.costEmulated > 0 && p.costStepped > p.costEmulated {
		return fmt.Sprintf("%v emulated, %v stepped", r(p.costEmulated), r(p.costStepped))
	}
	return r(p.cost).String()
}

// hitCost is what one hit of t's probe costs the target: the emulated or
// the single-stepped figure by the instruction it replaces (hpm), the dearer
// one where that cannot be told.
func (p *Plan) hitCost(t hpm.Target) time.Duration {
	if c, ok := p.hitCosts[t]; ok {
		return c
	}
	p.settleCosts()
	emulated, known := t.Emulated()
	c := p.costStepped
	if emulated || (!known && symbol.IsGoBinary(t.Path)) {
		c = p.costEmulated
	}
	if c <= 0 {
		c = cmp.Or(p.cost, defaultHitCost)
	}
	if p.hitCosts == nil {
		p.hitCosts = map[hpm.Target]time.Duration{}
	}
	p.hitCosts[t] = c
	return c
}

// targetBinary is the executable whose functions --calls uprobe:F names.
func targetBinary(cfg sampler.Config) (string, error) {
	var path string
	if cfg.AllProcesses {
		return "", errors.New("uprobe counters need one target executable (-p PID or a command), not --all")
	}
	if cfg.PID > 0 {
		p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cfg.PID))
		if sampler.IsPermission(err) {
			return "", sampler.AttachDenied(cfg.PID, err)
		}
		if err != nil {
			return "", fmt.Errorf("%w: %d", sampler.ErrNoProcess, cfg.PID)
		}
		path = strings.TrimSuffix(p, " (deleted)")
	} else {
		p, err := sampler.LookPath(cfg.Argv[0])
		if err != nil {
			return "", err
		}
		path = p
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return path, nil
}

// placeProbes moves each Go probe past its function's stack check, where a
// hit costs a tenth (the kernel emulates the PUSHQ BP there instead of
// single-stepping the check) and where a call that grows its stack passes
// once, not twice. It returns the targets and where the probes sit the way
// frames name addresses, so that a clock sample landing on a probe can get
// its caller back from the stack word. A target located with its address
// costs no second scan of its file's symbol table (in a re-arm of the live
// view, 4% of cctop's CPU on the density workload).
func placeProbes(targets []hpm.Target) ([]hpm.Target, map[entryKey]bool) {
	m := map[entryKey]bool{}
	out := make([]hpm.Target, len(targets))
	for i, t := range targets {
		moved, d := t.AfterStackCheck()
		out[i] = moved
		vaddr := t.Vaddr
		if vaddr == 0 {
			var err error
			if vaddr, _, err = symbol.FuncLocation(t.Path, t.Func); err != nil {
				continue
			}
		}
		m[entryKey{t.Path, vaddr + d}] = true
	}
	return out, m
}

// describe is the counter line of summaries and profile comments.
func (p *Plan) describe() string {
	p.settleCosts()
	s := hpm.Describe(p.source, p.cost)
	if p.auto && len(p.targets) > 0 {
		names := make([]string, len(p.targets))
		for i, t := range p.targets {
			names[i] = displayName(t.Func)
		}
		s += "; armed on " + strings.Join(names, ", ")
	}
	return s
}

// briefMax bounds counterBrief, for the TUI's header.
const briefMax = 28

// counterBrief is the counter in a few words, for the TUI's header: "PMU
// NEAR_CALL", "uprobes on 4 functions" (as armed now), "uprobes, arming"
// before automatic counters are first armed, "uprobes: none armed" when
// they armed none (every hot function too costly to count), or "none". a is
// the automatic counters' armer, nil where there is none.
func counterBrief(p *Plan, a *armer) string {
	if p == nil {
		return "none"
	}
	var s string
	switch p.source.Kind {
	case "hw":
		var names []string
		for _, e := range p.source.Events {
			// BR_INST_RETIRED.NEAR_CALL: the umask's name says it; a
			// hybrid part's core PMUs share one.
			n := e.Name[strings.LastIndexByte(e.Name, '.')+1:]
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		s = strings.TrimSpace("PMU " + strings.Join(names, "+"))
	case "uprobe":
		switch n := len(p.targets); {
		case n > 0:
			s = fmt.Sprintf("uprobes on %d %s", n, plural(n, "function", "functions"))
		case p.auto && a != nil && a.armed == nil && !a.giveUp:
			s = "uprobes, arming"
		default:
			s = "uprobes: none armed"
		}
	default:
		s = "none"
	}
	if r := []rune(s); len(r) > briefMax {
		s = string(r[:briefMax-1]) + "…"
	}
	return s
}

// hasCalls says whether the run produces call estimates at all.
func (p *Plan) hasCalls() bool {
	return p.trigger != triggerTime || p.source.Kind != "none"
}

// triggerConfig sets in cfg the events of a trigger, with src counting calls
// on targets (the probed functions; none for a PMU counter, or while
// automatic counting has armed nothing): the one place a trigger becomes a
// sampler configuration, from the flags (planCounting) or switched live
// (Live.cycleTrigger). Under the time trigger the counter rides in the
// clock's groups; under calls the counter leads, a sample every period
// calls, and under exact every call is one. It reports false when the
// trigger needs counted functions and there are none.
func triggerConfig(cfg *sampler.Config, trigger string, src hpm.Source, targets []hpm.Target, period uint64) bool {
	cfg.Members = nil
	if trigger == triggerTime {
		switch {
		case src.Kind == "hw":
			cfg.Members = []sampler.EventSpec{src.Events[0].Spec()}
		case src.Kind == "uprobe":
			for _, t := range targets {
				cfg.Members = append(cfg.Members, t.Spec())
			}
		}
		return true
	}
	if trigger == triggerExact {
		period = 1
	}
	switch {
	case src.Kind == "hw" && trigger == triggerCalls:
		cfg.Leader, cfg.Freq, cfg.Period, cfg.Extra = src.Events[0].Spec(), 0, period, nil
	case src.Kind == "uprobe" && len(targets) > 0:
		// The probes watch every task and the sampler keeps the target's
		// hits: a probe opened per thread would miss a new thread's first
		// calls (uprobe events are not inherited). The primary group is a
		// dummy event that only tracks the target.
		cfg.Leader, cfg.Freq, cfg.Period, cfg.Extra = dummyEvent, 0, 1, nil
		for _, t := range targets {
			cfg.Extra = append(cfg.Extra, sampler.Group{Leader: t.Spec(), Period: period, AllTasks: true})
		}
	default:
		return false
	}
	// Probe hits are user-space events; their kernel frames are only the
	// trap handling.
	cfg.UserOnly = true
	if trigger == triggerExact {
		cfg.RingPages = 1024 // every call is a record: a lost one breaks exactness
	} else {
		// Probes on all tasks: other processes running the binary write
		// into the same rings.
		cfg.RingPages = max(cfg.RingPages, 256)
	}
	return true
}

// probeCosts measures what a counting uprobe hit costs in this process:
// on an instruction the kernel emulates (a Go function's PUSHQ BP past its
// stack check) and on one it single-steps (a LEAQ), about 0.6 and 10 µs in
// a VM.
func probeCosts() (emulated, stepped time.Duration) {
	emulated, err := hpm.MeasureUprobeCostAfterStackCheck(1000)
	if err != nil {
		return 0, 0
	}
	stepped, err = hpm.MeasureUprobeCost(200)
	if err != nil || stepped < emulated {
		stepped = emulated
	}
	return emulated, stepped
}

// ValidAlpha says whether a is a latency factor: finite and not negative.
func ValidAlpha(a float64) bool {
	return a >= 0 && !math.IsInf(a, 1)
}
