package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/cctop/cctop/sampler"
)

// samplingFlags are the flags shared by the commands that sample a target.
type samplingFlags struct {
	pid    int
	freq   uint64
	period uint64
	event  string
	user   bool
	unwind string
	stack  int
	limits limits
}

// limits bound cctop's memory on a long run (0: no bound).
type limits struct {
	nodes int // calling contexts in the tree; the cold ones fold into [other]
	log   int // samples in the log the call estimates are re-weighted from; the newest stay
}

// The default bounds: a context takes about 220 bytes (go test -bench
// NodeMemory ./cct/), so the tree stays near 55 MB, and twice that while
// the TUI holds a snapshot; the log holds half an hour of one thread at
// 999 Hz in 48 MB.
const (
	defaultMaxNodes = 250_000
	defaultMaxLog   = 2_000_000
	minMaxNodes     = 100 // room for a readable top of the tree
)

// defaultLimits are the bounds of a run without flags (the demo's).
var defaultLimits = limits{nodes: defaultMaxNodes, log: defaultMaxLog}

func (f *samplingFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.pid, "p", 0, "attach to process `PID`")
	fs.Uint64Var(&f.freq, "F", 999, "sampling frequency in `HZ`")
	fs.Uint64Var(&f.period, "c", 0, "sample every `PERIOD` events")
	fs.StringVar(&f.event, "e", "cpu-clock", "sampling `EVENT`: cpu-clock, task-clock, cycles")
	fs.BoolVar(&f.user, "user", false, "sample user space only")
	fs.StringVar(&f.unwind, "unwind", unwindAuto, "user stack `MODE`: auto, fp (frame pointers) or dwarf (stack copies unwound with CFI)")
	fs.IntVar(&f.stack, "stack-size", defaultStackSize, "`BYTES` of user stack copied per sample for --unwind dwarf")
	fs.IntVar(&f.limits.nodes, "max-nodes", defaultLimits.nodes, "keep at most `N` calling contexts; colder ones fold into [other] (0: no limit)")
	fs.IntVar(&f.limits.log, "max-log", defaultLimits.log, "keep the newest `N` samples for re-weighting call estimates (0: no limit)")
}

// config checks the flags against each other and the remaining arguments
// and turns them into a sampler configuration.
func (f *samplingFlags) config(fs *flag.FlagSet) (sampler.Config, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	argv := fs.Args()
	var cfg sampler.Config
	switch {
	case set["p"] && f.pid <= 0:
		return cfg, usageError("bad PID %d", f.pid)
	case f.pid != 0 && len(argv) > 0:
		return cfg, usageError("give either -p PID or a command after --, not both")
	case f.pid == 0 && len(argv) == 0:
		return cfg, usageError("nothing to sample: give -p PID or -- CMD [ARGS...]")
	case set["F"] && set["c"]:
		return cfg, usageError("-F and -c are exclusive")
	case set["F"] && f.freq == 0:
		return cfg, usageError("-F must be at least 1")
	case set["c"] && f.period == 0:
		return cfg, usageError("-c must be at least 1")
	case f.limits.nodes < 0 || f.limits.nodes > 0 && f.limits.nodes < minMaxNodes:
		return cfg, usageError("--max-nodes must be 0 (no limit) or at least %d", minMaxNodes)
	case f.limits.log < 0:
		return cfg, usageError("--max-log must be 0 (no limit) or more")
	}
	ev, err := sampler.ParseEvent(f.event)
	if err != nil {
		return cfg, usageError("%v", err)
	}
	cfg = sampler.Config{PID: f.pid, Argv: argv, Leader: ev, UserOnly: f.user}
	if set["c"] {
		cfg.Period = f.period
	} else {
		cfg.Freq = f.freq
	}
	return cfg, nil
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

// describe is the one-line form of the sampling parameters, for summaries
// and profile comments.
func describe(cfg sampler.Config) string {
	if probesSample(cfg) {
		return fmt.Sprintf("every %d calls of %d counted functions", samplePeriod(cfg), len(cfg.Extra))
	}
	rate := fmt.Sprintf("%d Hz", cfg.Freq)
	if cfg.Period > 0 {
		rate = fmt.Sprintf("every %d events", cfg.Period)
	}
	return fmt.Sprintf("%s at %s", cfg.Leader.Name, rate)
}

// probesSample reports whether cfg's samples come from its probes (the
// calls and exact triggers without a PMU): its dummy leader only carries
// the sideband records.
func probesSample(cfg sampler.Config) bool { return cfg.Leader == dummyEvent && len(cfg.Extra) > 0 }

// samplePeriod is the fixed period of cfg's sampling events, 0 in
// frequency mode: the probes' when they sample, else the leader's.
func samplePeriod(cfg sampler.Config) uint64 {
	if probesSample(cfg) {
		return cfg.Extra[0].Period
	}
	return cfg.Period
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
