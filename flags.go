package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/python"
	"github.com/cctop/cctop/sampler"
	"golang.org/x/sys/unix"
)

// targetFlags are the flags of the commands that sample a target: what to
// sample (the sampler's configuration), and how the engine counts calls,
// weighs samples, unwinds stacks and bounds its memory (its options).
type targetFlags struct {
	pid    int      // the one target of -p
	pids   []int    // -p's list
	names  []string // --pid-of
	freq   uint64
	period uint64
	event  string
	user   bool
	all    bool   // every process on the host (-a, --all)
	cpus   string // -C: the CPUs to sample on
	// hostByDefault: with no target the command samples the whole host
	// (top and record, as perf top and perf record -a), else it refuses.
	hostByDefault bool
	symMiB        int64
	opts          engine.Options
}

// newTargetFlags is the flag set of a command that samples a target.
func newTargetFlags(name string) (*flag.FlagSet, *targetFlags) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	f := &targetFlags{}
	d := engine.DefaultOptions()
	o := &f.opts
	fs.Var((*pidList)(&f.pids), "p", "attach to process `PID` (several: PID,PID,...)")
	fs.Var((*nameList)(&f.names), "pid-of", "sample the processes named `NAME` (their comm, as pidof; several: NAME,NAME,...), those started later too")
	fs.BoolVar(&f.all, "a", false, "sample every process on the host (root, CAP_PERFMON or perf_event_paranoid <= 0)")
	fs.BoolVar(&f.all, "all", false, "same as -a")
	fs.StringVar(&f.cpus, "C", "", "sample on these `CPUS` only (0-3,8, as perf's -C)")
	fs.Uint64Var(&f.freq, "F", 999, "sampling frequency in `HZ`")
	fs.Uint64Var(&f.period, "c", 0, "sample every `PERIOD` events")
	fs.StringVar(&f.event, "e", "cpu-clock", "sampling `EVENT`: cpu-clock, task-clock, cycles")
	fs.BoolVar(&f.user, "user", false, "sample user space only")
	fs.StringVar(&o.Mode, "mode", engine.ModeCPU, "time `MODE`: cpu (on the CPU), offcpu (blocked or waiting to run, from context switches) or wall (both)")
	fs.StringVar(&o.Unwind, "unwind", d.Unwind, "user stack `MODE`: auto, fp (frame pointers) or dwarf (stack copies unwound with CFI)")
	fs.IntVar(&o.StackSize, "stack-size", d.StackSize, "`BYTES` of user stack copied per sample for --unwind dwarf")
	fs.IntVar(&o.MaxNodes, "max-nodes", d.MaxNodes, "keep at most `N` calling contexts; colder ones fold into [other] (0: no limit)")
	fs.IntVar(&o.MaxLog, "max-log", d.MaxLog, "keep the newest `N` samples for re-weighting call estimates (0: no limit)")
	fs.StringVar(&o.Trigger, "trigger", d.Trigger, "sampling `TRIGGER`: time, calls or exact")
	fs.StringVar(&o.Calls, "calls", d.Calls, "call counter: auto, hw, none, or uprobe:`F1,F2`")
	fs.Float64Var(&o.Alpha, "alpha", d.Alpha, "latency factor `ALPHA`")
	fs.BoolVar(&o.NoDensity, "no-density", false, "turn call-density correction off")
	fs.BoolVar(&o.NoLatency, "no-latency", false, "turn sampling-latency correction off")
	fs.Float64Var(&o.Budget, "budget", d.Budget, "automatic counting may cost the target at most `PERCENT` of its CPU time")
	fs.BoolVar(&o.KeepEnv, "keep-env", false, "launch the command with the environment as it is (by default a CPython 3.12+ gets PYTHONPERFSUPPORT=1 for its perf trampolines)")
	fs.StringVar(&o.Python, "python", "auto", "`MODE` of Python frames: auto (read from CPython interpreters' memory where the layout is known) or off")
	fs.Float64Var(&o.PythonBudget, "python-budget", 100*python.DefaultBudget, "reading Python stacks may cost at most `PERCENT` of cctop's own CPU time (more: reads closer to each sample)")
	fs.Int64Var(&f.symMiB, "symbol-mib", d.SymbolBudget>>20, "hold at most `MIB` of symbol and unwind tables; the least recently used are dropped and read again when needed")
	return fs, f
}

// pidList is -p: one PID, or several separated by commas.
type pidList []int

func (l *pidList) String() string {
	if l == nil {
		return ""
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(*l)), ","), "[]")
}

func (l *pidList) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("bad PID %q", f)
		}
		if pid <= 0 {
			return fmt.Errorf("bad PID %d", pid)
		}
		if !slices.Contains(*l, pid) {
			*l = append(*l, pid)
		}
	}
	return nil
}

// nameList is --pid-of: names separated by commas.
type nameList []string

func (l *nameList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *nameList) Set(s string) error {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return fmt.Errorf("empty name in %q", s)
		}
		if len(f) > 15 {
			// The kernel keeps 15 bytes of a comm.
			f = f[:15]
		}
		*l = append(*l, f)
	}
	return nil
}

// hostRingBytes is the ring a CPU of a session over the whole host: 512
// KiB, as perf record's.
const hostRingBytes = 512 << 10

// resolve checks the parsed flags against each other and the remaining
// arguments, turns them into a sampler configuration, and has the engine
// plan the run.
func (f *targetFlags) resolve(fs *flag.FlagSet) (sampler.Config, *engine.Plan, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	argv := fs.Args()
	var cfg sampler.Config
	if f.symMiB < 1 {
		return cfg, nil, usageError("--symbol-mib must be at least 1")
	}
	f.opts.SymbolBudget = f.symMiB << 20
	var sel *sampler.Selection
	if len(f.pids) == 1 && len(f.names) == 0 {
		f.pid = f.pids[0]
	} else if len(f.pids) > 0 || len(f.names) > 0 {
		// Several processes: per-CPU events for every task, and the
		// records of the ones selected and their children kept.
		sel = &sampler.Selection{PIDs: f.pids, Names: f.names}
	}
	switch {
	case sel != nil && len(argv) > 0:
		return cfg, nil, usageError("give either processes (-p, --pid-of) or a command after --, not both")
	case sel != nil && f.all:
		return cfg, nil, usageError("-a samples every process: give no -p or --pid-of with it")
	case f.pid != 0 && len(argv) > 0:
		return cfg, nil, usageError("give either -p PID or a command after --, not both")
	case f.all && (f.pid != 0 || len(argv) > 0):
		return cfg, nil, usageError("-a samples every process: give no -p PID or command with it")
	case f.pid == 0 && sel == nil && len(argv) == 0 && !f.all && !f.hostByDefault:
		return cfg, nil, usageError("nothing to sample: give -p PID, -- CMD [ARGS...] or --all")
	case set["F"] && set["c"]:
		return cfg, nil, usageError("-F and -c are exclusive")
	case set["F"] && f.freq == 0:
		return cfg, nil, usageError("-F must be at least 1")
	case set["c"] && f.period == 0:
		return cfg, nil, usageError("-c must be at least 1")
	case f.opts.MaxNodes < 0 || f.opts.MaxNodes > 0 && f.opts.MaxNodes < engine.MinMaxNodes:
		return cfg, nil, usageError("--max-nodes must be 0 (no limit) or at least %d", engine.MinMaxNodes)
	case f.opts.MaxLog < 0:
		return cfg, nil, usageError("--max-log must be 0 (no limit) or more")
	}
	ev, err := sampler.ParseEvent(f.event)
	if err != nil {
		return cfg, nil, usageError("%v", err)
	}
	var cpus []int
	if f.cpus != "" {
		if cpus, err = sampler.ParseCPUList(f.cpus); err != nil {
			return cfg, nil, usageError("-C: %v", err)
		}
		if err := sampler.CheckCPUs(cpus); err != nil {
			return cfg, nil, fmt.Errorf("-C: %w", err)
		}
	}
	if sel != nil {
		for _, pid := range sel.PIDs {
			if err := unix.Kill(pid, 0); err == unix.ESRCH {
				return cfg, nil, fmt.Errorf("%w: %d", sampler.ErrNoProcess, pid)
			}
		}
	}
	all := f.all || f.pid == 0 && len(argv) == 0
	cfg = sampler.Config{PID: f.pid, Argv: argv, Leader: ev, UserOnly: f.user, AllProcesses: all, CPUs: cpus, Select: sel}
	if all {
		// Records of every task on every CPU: perf record's ring a CPU
		// (512 KiB) at least, as the agent's.
		cfg.RingPages = max(cfg.RingPages, hostRingBytes/os.Getpagesize())
	}
	if set["c"] {
		cfg.Period = f.period
	} else {
		cfg.Freq = f.freq
	}
	plan, err := engine.Prepare(&cfg, f.opts)
	return cfg, plan, err
}

// parseFlags parses args, turning flag errors into usage errors (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError("%v", err)
	}
	return nil
}

// durationFlag accepts Go durations ("3s") and plain seconds ("3").
type durationFlag struct{ d time.Duration }

func (f *durationFlag) String() string { return f.d.String() }

func (f *durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		secs, err2 := strconv.ParseFloat(s, 64)
		if err2 != nil {
			return fmt.Errorf("bad duration %q (use e.g. 3s, 500ms, 2m)", s)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return fmt.Errorf("duration must be positive, got %q", s)
	}
	f.d = d
	return nil
}

// catchSignals is the context of a headless run, ended by Ctrl-C, SIGTERM
// or SIGHUP. A command calls it first, before its flags and its plan
// (which may take a while: counters probed, binaries read), so that a
// signal at any moment of its start-up ends the run with its profile
// rather than the process; a second signal is caught as the first.
func catchSignals() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), quitSignals...)
}

// runContext is ctx (catchSignals') ended after d too, when d > 0.
func runContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}
