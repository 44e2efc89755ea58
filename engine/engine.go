package engine

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/tui"
)

// Options choose how a run counts calls, weighs samples, unwinds user
// stacks and bounds its memory. DefaultOptions are those of a command line
// without flags.
type Options struct {
	Trigger   string  // what takes a sample: TriggerTime, TriggerCalls or TriggerExact
	Calls     string  // the call counter: auto, hw, none, or uprobe:F1,F2; "": time only, no counting planned at all
	Alpha     float64 // latency factor of calls_adjusted
	NoDensity bool    // leave call-density correction out of the weights
	NoLatency bool    // leave sampling-latency correction out of the weights
	Budget    float64 // percent of the target's CPU time automatic counting may cost (0: the default)
	Unwind    string  // UnwindAuto, UnwindFP or UnwindDWARF
	StackSize int     // bytes of user stack copied per sample for UnwindDWARF
	MaxNodes  int     // calling contexts kept; colder ones fold into [other] (0: no limit)
	MaxLog    int     // newest samples kept for re-weighting call estimates (0: no limit)
	// Mode is what the time metric holds: ModeCPU (time on the CPU),
	// ModeOffCPU (time off it, from context switches) or ModeWall (both);
	// "" is ModeCPU.
	Mode string
	// SymbolBudget bounds the bytes of symbol tables, debug information
	// and unwind tables held for the target's binaries; past it the least
	// recently used are dropped and read again when needed (0: no bound).
	// An agent on a host with many processes needs one.
	SymbolBudget int64
	// NamesOnly names functions from symbol tables only, without DWARF:
	// no source lines or inlined frames, a fraction of the memory (the
	// agent's default; its backend symbolizes lines by build ID).
	NamesOnly bool
	// Refresh is how often the live view takes a snapshot for new
	// samples alone (0: DefaultRefresh); what the user asks for is
	// answered at once.
	Refresh time.Duration
	// KeepEnv launches the command with cctop's environment as it is:
	// by default a CPython 3.12+ gets PYTHONPERFSUPPORT=1, so that its
	// perf trampolines name Python functions (runtimes.go).
	KeepEnv bool
	// Python is whether Python frames are read from CPython
	// interpreters' memory: "auto" (or ""), where a process is a CPython
	// whose layout is known, or "off".
	Python string
	// PythonBudget is the share of cctop's own CPU time that reading
	// Python stacks may take, in percent (0: python.DefaultBudget's).
	PythonBudget float64
}

// Triggers (Options.Trigger).
const (
	TriggerTime  = triggerTime
	TriggerCalls = triggerCalls
	TriggerExact = triggerExact
)

// Unwinding modes (Options.Unwind).
const (
	UnwindAuto  = unwindAuto
	UnwindFP    = unwindFP
	UnwindDWARF = unwindDWARF
)

// limits bound cctop's memory on a long run (0: no bound).
type limits struct {
	nodes int // calling contexts in the tree; the cold ones fold into [other]
	log   int // samples in the log the call estimates are re-weighted from; the newest stay
	// symbols bounds the symbol tables' bytes (symbol.Resolver.SetBudget).
	symbols   int64
	namesOnly bool // no DWARF lines (symbol.Resolver.SetNamesOnly)
}

// The default bounds: a context takes about 316 bytes (go test -bench
// NodeMemory ./cct/; TestBytesEstimate), so the tree stays near 80 MB, and twice that while
// the TUI holds a snapshot; the log holds half an hour of one thread at
// 999 Hz in 16 MB (8 bytes a timer sample without call counts, correct/logblock.go).
const (
	DefaultMaxNodes = 250_000
	DefaultMaxLog   = 2_000_000
	MinMaxNodes     = 100 // room for a readable top of the tree
)

// DefaultOptions are the options of a run without flags.
func DefaultOptions() Options {
	return Options{
		Trigger: TriggerTime, Calls: "auto", Alpha: correct.DefaultAlpha, Budget: 100 * autoBudget,
		Unwind: UnwindAuto, StackSize: defaultStackSize, MaxNodes: DefaultMaxNodes, MaxLog: DefaultMaxLog,
		SymbolBudget: DefaultSymbolMiB << 20,
	}
}

// DefaultSymbolMiB bounds the symbol, debug and unwind tables of record and
// top, in MiB: a small server's share for a profiler. A process that maps
// a hundred large binaries with debug information (PyTorch and CUDA's
// libraries) would otherwise hold all their tables at once; past the
// bound the least recently used are dropped and read again when needed.
const DefaultSymbolMiB = 1024

// Prepare checks o against the machine and cfg's target, completes cfg
// (counting events, stack copies, ring sizes) and plans the run. An error
// in o itself is a *UsageError.
func Prepare(cfg *sampler.Config, o Options) (*Plan, error) {
	// Without Calls: time only, with no call counter to speak of.
	plan := &Plan{trigger: triggerTime, source: hpm.Source{Kind: "none"}}
	var err error
	if o.Calls != "" {
		cf := countingFlags{trigger: o.Trigger, calls: o.Calls, alpha: o.Alpha,
			noDensity: o.NoDensity, noLatency: o.NoLatency, budget: o.Budget}
		if plan, err = planCounting(cf, cfg, cfg.Period > 0); err != nil {
			return nil, err
		}
	}
	// A sample's counts are read only to weigh it.
	cfg.NoGroupRead = !plan.hasCalls()
	if err := planMode(cfg, plan, o.Mode); err != nil {
		return nil, err
	}
	switch o.Python {
	case "", "auto":
	case "off":
		plan.noPython = true
	default:
		return nil, fmt.Errorf("--python %q: auto or off", o.Python)
	}
	if o.PythonBudget < 0 || o.PythonBudget > 1000 {
		return nil, fmt.Errorf("--python-budget %g: a percentage, 0 to 1000", o.PythonBudget)
	}
	plan.pyBudget = o.PythonBudget / 100
	planRuntime(cfg, plan, o.KeepEnv)
	plan.unwind, err = planUnwind(o.Unwind, o.StackSize, cfg, plan.binary)
	plan.refresh = o.Refresh
	plan.limits = limits{nodes: o.MaxNodes, log: o.MaxLog, symbols: o.SymbolBudget, namesOnly: o.NamesOnly}
	planBranchStack(cfg)
	return plan, err
}

// offCPURingPages is the ring of each CPU in pages in the off-CPU modes.
const offCPURingPages = 256

// planMode records context switches for the off-CPU and wall modes. Wall
// time adds time off the CPU to the samples' time on it, which must then
// be a clock's.
func planMode(cfg *sampler.Config, plan *Plan, mode string) error {
	switch mode {
	case "", ModeCPU:
		plan.mode = ModeCPU
		return nil
	case ModeOffCPU, ModeWall:
	default:
		return usageError("--mode %s: want cpu, offcpu or wall", mode)
	}
	if mode == ModeWall && !cfg.Leader.IsClock() {
		return usageError("--mode wall adds time off the CPU to a clock's time on it: -e %s counts %s, not time (use -e cpu-clock, or --mode offcpu)", cfg.Leader.Name, cfg.Leader.Name)
	}
	plan.mode = mode
	cfg.OffCPU = true
	// Two records a switch, thousands of switches a second per CPU:
	// rings that hold a quarter second of them where the default holds
	// a few milliseconds.
	cfg.RingPages = max(cfg.RingPages, offCPURingPages)
	return nil
}

// planBranchStack asks for each sample's branch stack where the sampling
// event is the PMU's and the PMU records them (LBR, BRBE): their runs are
// the basic-block profile of flow correction (DynamicOutflowCorrection). A
// software clock cannot carry them.
func planBranchStack(cfg *sampler.Config) {
	if cfg.Leader.Hardware && cfg.BranchStack == 0 && sampler.ProbeBranchStack() == nil {
		cfg.BranchStack = sampler.BranchAny | sampler.BranchUser
	}
}

// UsageError is an option the engine cannot run with, worded for the
// command line's flags.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageError(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Record samples cfg's target under plan until it exits or ctx ends, and
// builds its tree. A target the session launched is stopped when ctx ends
// first, and its last samples are kept. The caller closes the recording.
func Record(ctx context.Context, cfg sampler.Config, plan *Plan, stderr io.Writer) (*Recording, error) {
	return recordTarget(ctx, cfg, plan, stderr)
}

// Tree is the recorded calling context tree.
func (r *Recording) Tree() *cct.Tree { return r.b.tree }

// WriteProfile writes the recording to path, atomically, in format
// ("pprof" or "folded").
func (r *Recording) WriteProfile(path, format string) error {
	return writeProfile(path, format, r.b.tree, profileMeta(r.cfg, r))
}

// WriteTreeProfile writes a tree as a pprof profile to path, atomically:
// windows merged by a front end (cctop agent -o).
func WriteTreeProfile(path string, t *cct.Tree, m cct.Meta) error {
	return lean(func() error { return writeProfile(path, "pprof", t, m) })
}

// Summary writes the record summary: samples, losses, counting, stacks,
// notes and the top functions by self time.
func (r *Recording) Summary(w io.Writer) { summary(w, r.cfg, r) }

// Close closes the session and releases its probes (see closeSession).
func (r *Recording) Close(stderr io.Writer) {
	closeSession(r.sess, stderr)
	r.b.py.close()
}

// StartLive opens a session on cfg's target for the live aggregator. The
// caller runs it (Run) until it is done with it, then closes it (Close).
func StartLive(cfg sampler.Config, plan *Plan, stderr io.Writer) (*Live, error) {
	if cfg.IdlePoll == 0 {
		// An idle target: a wake-up a second, each a snapshot's worth
		// of nothing. The TUI's requests wake the reader (Do).
		cfg.IdlePoll = liveIdlePoll
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = livePoll
	}
	sess, b, err := startSession(cfg, plan, stderr)
	if err != nil {
		return nil, err
	}
	b.enableProcesses(cfg.AllProcesses, uint32(sess.PID()))
	l := newLive(targetName(cfg, sess), sess, b, plan)
	l.SetRefresh(plan.refresh)
	l.launched = len(cfg.Argv) > 0
	return l, nil
}

// Run aggregates the session's samples into snapshots, and carries out the
// TUI's actions, until ctx ends.
func (l *Live) Run(ctx context.Context) { l.run(ctx) }

// Close stops a target the session launched (an attached one runs on),
// closes the session and releases its probes.
func (l *Live) Close(stderr io.Writer) {
	if l.launched {
		l.sess.Stop(2 * time.Second)
	}
	closeSession(l.sess, stderr)
	l.b.py.close()
}

// OpenProfile is the TUI's source for the saved profile at path, with
// deltas against the one at basePath ("": none).
func OpenProfile(path, basePath string) (tui.Source, error) {
	return OpenProfiles(ViewOptions{Sources: []string{path}, Base: basePath})
}

// OpenProfiles is the TUI's source for the profiles o names: read (files, stdin, URLs),
// merged, filtered by their labels, shown by sample type, compared with a base.
func OpenProfiles(o ViewOptions) (tui.Source, error) {
	l, err := loadProfiles(o)
	if err != nil {
		return nil, err
	}
	s, err := newFileSourceOf(l)
	if err != nil {
		return nil, err
	}
	return s, nil
}
