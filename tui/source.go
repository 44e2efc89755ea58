package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/cctop/cctop/cct"
)

// Snapshot is an immutable view of the profile at one moment. The TUI never mutates it.
type Snapshot struct {
	Tree    *cct.Tree // structure and names; node ids index the slices below
	Self    []float64 // per node: self weight under the shown metric (time in ns, or calls under the current correction)
	Compare []float64 // per node: self weight of the comparison profile mapped onto Tree's nodes (nil: none)
	Metric  string    // "time" or "calls"
	// Unit is the unit of Self when Metric is "time": a saved profile's
	// sample type's ("bytes", "count", "nanoseconds"); "" is nanoseconds.
	Unit string
	// Diff says Compare is a base to subtract (pprof's -diff_base): the
	// metric column shows each row's weight minus the base's.
	Diff    bool
	Header  Header
	Threads []cct.Thread // for the thread filter
	// ThreadSelf returns the per-node self weights of one thread (nil func: no per-thread
	// data). It may return nil for a thread the source has not weighed yet: the TUI sends
	// SetThread when the filter changes, and a later snapshot has that thread's weights.
	ThreadSelf func(tid uint32) []float64
	Seq        uint64 // changes whenever anything changed
	// Counters is what the counters panel shows (nil: the source has none, e.g. a file).
	Counters *Counters
	// ReadCode reads a live target's memory, all of buf or nothing, for
	// the annotate view's JIT code: of process pid, or of the target with
	// pid 0 (nil: a saved profile, nothing to read).
	ReadCode func(pid uint32, addr uint64, buf []byte) bool
}

// Counters is the counters panel: where call counts come from and what they cost,
// the call density of each thread over time (the papers' Figure 4), the distribution
// of the sampling latency, and the parameters in force.
type Counters struct {
	Source string  // the call counter, e.g. "uprobe on main.leaf, main.mid (0.6µs a hit)"
	Cost   float64 // share of the target's sampled CPU time spent counting, 0..1; <0 unknown
	Hits   uint64  // counter hits since the last reset
	Params string  // the parameters in force, e.g. "trigger time · 999 Hz · alpha 0"
	// Density is per thread, busiest first: the call density in consecutive buckets of
	// BucketSeconds wall time, oldest first, newest last. A bucket with no sample is NaN.
	Density       []ThreadSeries
	BucketSeconds float64
	DensityUnit   string // e.g. "calls/ms"
	Latency       LatencyStats
	// Stops are where the stacks that do not reach a thread's entry stop,
	// commonest first.
	Stops []StackStop
	// OffCPU is the context switches in a line: how many, how their
	// stacks are taken, time off the CPU, switches lost ("": none recorded).
	OffCPU string
	// Memory is what the profile holds, in a line of comma-separated
	// parts: the tree, the sample log, the symbol tables against their
	// budget ("": not known).
	Memory string
	// JIT is what the target runs of code that lives only in memory and
	// what names it (a perf map, a jitdump, nothing and the fix), for its
	// busiest process ("": none sampled).
	JIT string
	// Python is what reading Python stacks from CPython interpreters
	// did: the versions, the torn share and why, what a read costs ("":
	// no Python sampled).
	Python string
}

// StackStop is a place where truncated stacks stop: the module of their
// outermost frame, why the unwinder went no further, and the share of all
// samples that stop there, in percent.
type StackStop struct {
	Module, Why string
	Percent     float64
}

// ThreadSeries is one thread's call density over time.
type ThreadSeries struct {
	TID    uint32
	Name   string
	Points []float64
}

// LatencyStats is the distribution of the sampling latency (delta_i - lambda_i) of the
// samples whose interval was measured, in nanoseconds.
type LatencyStats struct {
	N                      uint64
	Min, Median, Mean, Max float64
	// Hist counts samples per bucket; bucket i holds latencies in [Edges[i], Edges[i+1]).
	Hist  []uint64
	Edges []float64 // len(Hist)+1, ns
}

// Header is what the header lines say about the session.
type Header struct {
	Target          string  // e.g. "pid 1234 (python3)" or a file name
	Threads         int     // threads of the target
	Rate            float64 // achieved samples/s
	Samples         uint64
	Lost, Throttled uint64
	// What the memory bounds cost: contexts folded into [other] (--max-nodes), samples
	// gone from the call estimates' log (--max-log).
	Folded, LogDropped uint64
	Unwound            float64 // % of samples whose stack reached a root; <0 unknown
	Counter            string  // counter source line, in full (the counters panel shows it)
	// CounterBrief is the counter in a few words for the header, e.g.
	// "uprobes on 4 functions", "PMU", "none".
	CounterBrief string
	// ProbeCost is the share of samples, in percent, taken while the kernel
	// handled a cctop counting probe (the [cctop probes] frames): the cost of
	// counting, measured. <0: no probes in this profile.
	ProbeCost float64
	Trigger   string
	// Waiting is how many samples wait for the symbols of the modules
	// they need, which load aside: they are not in the tree yet.
	Waiting uint64
	// TriggerLost is how many records were lost while a counting trigger
	// (calls, exact) counted this profile: its counts are a lower bound.
	TriggerLost uint64
	Alpha       float64
	Density     bool
	// DensityWhy, when density is on but cannot be applied, says why: too
	// few samples carry a call count to weigh the profile by calls
	// (issue 29's coverage rule), e.g. "3% of samples counted, 50%
	// needed". The tree then shows time.
	DensityWhy string
	// Counted is the share, in percent, of the profile's samples that
	// carry a call count; 0 where the profile does not say (a profile
	// that counted none has DensityWhy).
	Counted float64
	Latency bool
	// Flow: the calls shown are corrected by the control flow of the
	// machine code (FDOM).
	Flow       bool
	Comparison string  // "uncorrected samples", "baseline", "base file", "exact run", or ""
	Overlap    float64 // % overlap of shown vs comparison; <0 none
	State      string  // "live", "paused", "target stopped", "target exited", "target killed", "file"
	// Mode is the time the tree shows, "cpu", "wall" or "offcpu", where the
	// profile has time off the CPU ("": it has none). OnCPU is the share
	// of the shown threads' wall time they spent on the CPU, in percent
	// (<0 unknown), and IdleHidden how many idle threads are left out.
	Mode       string
	OnCPU      float64
	IdleHidden int
	// Export says where the profile goes besides the screen and how that
	// is going, e.g. "otlp 10.0.0.5:4317: push at quit, reachable"; ""
	// for nowhere. ExportWarn: it is failing.
	Export     string
	ExportWarn bool
	// Runtime is what cctop did to or knows of the target's language
	// runtime, e.g. "python 3.12: perf trampolines on (cctop set
	// PYTHONPERFSUPPORT=1; ...)", or how to get its functions named; ""
	// for nothing to say.
	Runtime string
	// File is what a saved profile says of itself; nil for a live
	// session. A file's header shows the live-only facts (rate,
	// threads, unwound, the corrections) only where it carries them.
	File *FileInfo
}

// FileInfo is what the header says of a saved profile: the sample type shown and how
// many there are, its producer's period, when and how long, its comments, and its main
// binary.
type FileInfo struct {
	SampleType, Unit string
	Types            int // sample types the profile has (the sample-type key cycles them)
	// Period is the sampling period, in PeriodType/PeriodUnit (0: none said).
	PeriodType, PeriodUnit string
	Period                 int64
	// TimeNanos is when the profile started (Unix ns), DurationNanos how long
	// it ran; 0 unknown.
	TimeNanos, DurationNanos int64
	// Comments are the profile's free comments (cctop's own key=value ones
	// fill the other fields instead).
	Comments []string
	// Main is the main binary's path and BuildID its build ID ("" unknown).
	Main, BuildID string
	// Corrections says the profile holds call estimates: the correction
	// toggles mean something, and the header shows them.
	Corrections bool
}

// Source feeds the TUI. Snapshot must not block (it returns the latest one); Do must not
// block either: it starts the action, and any outcome comes back as a Msg from Msgs().
type Source interface {
	Snapshot() Snapshot
	Do(a Action)
	// Msgs carries events for the status line (StatusMsg, ErrorMsg) and SnapshotReadyMsg
	// nudges. It may be nil; closing it stops the TUI listening.
	Msgs() <-chan tea.Msg
}

// ActionKind says what an Action asks the Source to do.
type ActionKind int

// The actions. Value and Path are used only where said.
const (
	ToggleDensity ActionKind = iota + 1
	ToggleLatency
	AlphaUp
	AlphaDown
	RateUp
	RateDown
	CycleTrigger
	CycleComparison
	Pause
	Reset
	Baseline
	Export    // Path is the file to write
	SetMetric // Value 0: time, 1: calls
	SetThread // Value: the TID the thread filter shows, 0 for all threads
	ToggleFlow
	CycleMode       // the time shown: on the CPU, wall-clock, off the CPU
	ToggleIdle      // hide or show the threads that were almost always off the CPU
	CycleSampleType // a saved profile's next sample type (pprof's sample_index)
)

var actionNames = [...]string{
	ToggleDensity:   "ToggleDensity",
	ToggleLatency:   "ToggleLatency",
	AlphaUp:         "AlphaUp",
	AlphaDown:       "AlphaDown",
	RateUp:          "RateUp",
	RateDown:        "RateDown",
	CycleTrigger:    "CycleTrigger",
	CycleComparison: "CycleComparison",
	Pause:           "Pause",
	Reset:           "Reset",
	Baseline:        "Baseline",
	Export:          "Export",
	SetMetric:       "SetMetric",
	SetThread:       "SetThread",
	ToggleFlow:      "ToggleFlow",
	CycleMode:       "CycleMode",
	ToggleIdle:      "ToggleIdle",
	CycleSampleType: "CycleSampleType",
}

func (k ActionKind) String() string {
	if k > 0 && int(k) < len(actionNames) {
		return actionNames[k]
	}
	return "ActionKind(?)"
}

// Action is a request from the user to the Source.
type Action struct {
	Kind  ActionKind
	Value float64
	Path  string
}

// StatusMsg is a line for the status bar.
type StatusMsg struct{ Text string }

// ErrorMsg is a failure to show in the error style; it stays until the next key.
type ErrorMsg struct{ Err error }

// SnapshotReadyMsg tells the TUI that a new snapshot is worth taking now rather than at
// the next tick.
type SnapshotReadyMsg struct{}
