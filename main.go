// Command cctop is a live profiler for Linux: it samples call stacks of a
// running or launched process with perf_event_open and builds its calling
// context tree. README.md says how to use it; ARCHITECTURE.md is the map of
// the code: the packages, the path of a sample, who owns what.
//
// This package is the command line only: the dispatch and usage here, the
// flags in flags.go, and one file per command that turns its flags into
// engine options and calls package engine, which does the profiling.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/workload"
)

const usage = `cctop: a live calling-context profiler for Linux

usage:
  cctop demo                                         the live TUI on a built-in workload
  cctop top [flags] [-p PID | -- CMD [ARGS...]]      the live TUI: browse the calling context tree as it grows;
                                                     with no target, every process on the host (as perf top)
  cctop view SOURCE... [flags]                       the TUI on pprof profiles: files, - (stdin), http(s) URLs
  cctop record [flags] [-p PID | -- CMD [ARGS...]]   sample headless, write a pprof profile (no target: the host)
  cctop agent [flags] (--all | -p PID | -- CMD [ARGS...]) --otlp HOST:PORT
                                                     always on, at 19 Hz: a profile every --window, pushed to
                                                     an OpenTelemetry collector (OTLP profiles over gRPC)
  cctop eval [--json FILE] [--workload NAME] [--alpha LIST]
                                                     accuracy of raw vs corrected vs exact call profiles
  cctop doctor [-p PID]                              what works on this machine, and the fix for what doesn't;
                                                     with -p, how completely PID's stacks unwind, by module
  cctop workload NAME [flags]                        run a built-in target program (%s)

record flags:
  -p PID          attach to a running process (all its threads, and threads it creates later);
                  several, PID,PID,..., are sampled with per-CPU events (as -a), each its own process
  --pid-of NAME   the processes named NAME (their comm, as pidof; NAME,NAME,...), those started later too
  -a, --all       every process on the host, the default with no target (per-CPU events; root,
                  CAP_PERFMON or perf_event_paranoid <= 0)
  -C CPUS         sample on these CPUs only (0-3,8)
  -F HZ           sampling frequency (default 999)
  -c PERIOD       sample every PERIOD events instead (ns for clock events)
  -e EVENT        cpu-clock (default), task-clock, or cycles (needs a hardware PMU)
  --user          sample user space only (like perf's --all-user)
  -d DURATION     stop after this long (default: when the target exits, or Ctrl-C)
  -o FILE         output file (default cctop.pb.gz)
  --format F      pprof (default) or folded
  --trigger T     time (default: a clock), calls (every -c calls of the counted functions), exact (every call)
  --calls C       call counter: auto (default: hardware, else uprobes on the hottest functions), hw, none,
                  or uprobe:F1,F2 (functions of the target's executable)
  --budget P      automatic uprobe counting may cost the target at most P%% of its CPU time (default 5)
  --alpha A       latency factor of calls_adjusted (default %g)
  --no-density, --no-latency   leave a correction out of the summary's weights
  --max-nodes N   keep at most N calling contexts (default %d); colder ones fold into [other]
  --max-log N     keep the newest N samples for re-weighting call estimates (default %d)
  --symbol-mib N  hold at most N MiB of symbol, debug and unwind tables (default %d; the agent's 256); the
                  least recently used binaries' are dropped and read again when needed

view flags:
  --base FILE       subtract and compare with this profile (pprof's -diff_base)
  --sample-index T  the sample type shown first, by name or index (the key y cycles them)
  --tagfocus E, --tagignore E   keep or drop samples by label: key=regexp, regexp, or key=lo:hi
  --top N           print the flat top N functions, as go tool pprof -top, and exit
  --list RE, --disasm RE   print the annotated source or machine code of the functions matching RE,
                    as go tool pprof -list and -disasm, and exit
  --source-path DIRS, --trim-path PREFIXES   where source files are found (pprof's -source_path,
                    -trim_path; top takes them too, for its annotate view)
  --seconds N       a URL's profile length (seconds=N); --timeout D: how long to wait for it

top flags (and the record flags above):
  --refresh D     redraw for new samples every D (default 1s; keys are answered at once)

agent flags (and the record flags above; the agent's defaults are -F 19, --calls none and --symbol-mib 256):
  --window D      cut and push a profile every D (default 10s)
  --otlp HOST:PORT   the collector's OTLP/gRPC endpoint, TLS with the system's roots unless:
  --otlp-insecure    plaintext (loopback, trusted networks)
  --otlp-ca FILE     trust the CA in FILE (PEM)
  --otlp-header K=V  sent with every push, e.g. an auth token (repeatable)
  --service-name S   service.name of the profiles (default: the executable's name)
  -o FILE         also write everything profiled as one pprof profile when the agent stops
  --lines         also read DWARF for source lines and inlined frames (default: function names from
                  symbol tables; backends symbolize lines by the mappings' build IDs)
  --flush-timeout D  on SIGTERM, keep pushing what is queued for at most D (default 10s)
`

// exitError carries an exit code; its message is printed as one line.
type exitError struct {
	code int
	msg  string
	// usageShown: the command printed its own usage (a workload's flags),
	// and cctop's would bury it.
	usageShown bool
}

func (e *exitError) Error() string { return e.msg }

// usageError is a bad command line: the message, then usage, exit status 2.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	var err error
	if args[0] != engine.ReleaseCmd { // the child that closes probes after quit: not cctop's run
		defer startSelfTrace(stderr)()
	}
	switch args[0] {
	case "demo":
		err = cmdDemo(args[1:], stdout, stderr)
	case "top":
		tuneRuntime()
		err = cmdTop(args[1:], stderr)
	case "view":
		err = cmdView(args[1:], stdout, stderr)
	case "record":
		tuneRuntime()
		err = cmdRecord(args[1:], stderr)
	case "agent":
		tuneRuntime()
		err = cmdAgent(args[1:], stderr)
	case "eval":
		err = cmdEval(args[1:], stdout, stderr)
	case "doctor":
		err = cmdDoctor(args[1:], stdout)
	case "workload":
		err = cmdWorkload(args[1:], stdout, stderr)
	case engine.ReleaseCmd:
		engine.Release(args[1:])
		return 0
	case "help", "-h", "--help", "-help":
		printUsage(stdout)
		return 0
	default:
		err = usageError("unknown command %q", args[0])
	}
	return exitStatus(err, stdout, stderr)
}

// exitStatus reports a command's error, if any, and is the status cctop
// exits with.
func exitStatus(err error, stdout, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return 0
	}
	var ue *engine.UsageError
	if errors.As(err, &ue) {
		err = usageError("%s", ue.Msg)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "cctop: %s\n", ee.msg)
		if ee.code == 2 && !ee.usageShown {
			printUsage(stderr)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "cctop: %s\n", oneLine(err.Error()))
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, usage, strings.Join(workload.Names(), ", "), correct.DefaultAlpha, engine.DefaultMaxNodes, engine.DefaultMaxLog, engine.DefaultSymbolMiB)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func cmdWorkload(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("workload needs a name: %s", strings.Join(workload.Names(), ", "))
	}
	if err := workload.Run(args[0], args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		if !slices.Contains(workload.Names(), args[0]) {
			return usageError("workload %s: %v", args[0], err)
		}
		// The workload's error names it, and its flags were printed.
		return &exitError{code: 2, msg: err.Error(), usageShown: true}
	}
	return nil
}
