package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cctop/cctop/annotate"
	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/sampler"
)

// cmdDemo opens the live TUI on the built-in density workload, run in a
// loop until quit. Without a terminal (or with --headless) it profiles the
// workload for a few seconds and prints the tree instead.
func cmdDemo(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	headless := fs.Bool("headless", false, "print the tree instead of opening the TUI")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("demo takes no arguments")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find own executable: %v", err)
	}
	clock, err := sampler.ParseEvent("cpu-clock")
	if err != nil {
		return err
	}
	if !*headless && isTerminal(os.Stdout) && isTerminal(os.Stdin) {
		cfg := sampler.Config{Argv: demoArgv(exe), Leader: clock, Freq: 999}
		plan, err := engine.Prepare(&cfg, engine.DefaultOptions())
		if err != nil {
			return err
		}
		return runTop(cfg, plan, stderr, nil, annotate.Options{})
	}
	ctx, stop := signal.NotifyContext(context.Background(), quitSignals...)
	defer stop()
	cfg := sampler.Config{
		Argv:     []string{exe, "workload", "density", "-duration", "3s"},
		Leader:   clock,
		Freq:     999,
		UserOnly: true,
		Stdout:   io.Discard,
	}
	fmt.Fprintf(stderr, "cctop demo: sampling `cctop workload density` for 3 s (%s)...\n", engine.Describe(cfg))
	// Time only, and no bounds on a 3 s run.
	o := engine.DefaultOptions()
	o.Calls, o.MaxNodes, o.MaxLog = "", 0, 0
	plan, err := engine.Prepare(&cfg, o)
	if err != nil {
		return err
	}
	rec, err := engine.Record(ctx, cfg, plan, stderr)
	if err != nil {
		return err
	}
	defer rec.Close(stderr)
	rec.Summary(stderr)
	fmt.Fprintln(stdout)
	printTree(stdout, rec.Tree(), 0.01)
	fmt.Fprintln(stdout, "\nBoth phases call densityLeaf equally often; phase D passes twice the input, so")
	fmt.Fprintln(stdout, "timer samples give it twice the time. That is the call-density bias cctop corrects.")
	return nil
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// printTree writes the top-down tree as indented text, skipping nodes under
// minFrac of the total and folding chains of single children that carry
// everything (runtime start-up frames) into one line.
func printTree(w io.Writer, t *cct.Tree, minFrac float64) {
	total := t.Total().Time
	if total == 0 {
		fmt.Fprintln(w, "(no samples)")
		return
	}
	fmt.Fprintf(w, "%7s %7s  %s\n", "total%", "self%", "calling context")
	var walk func(id cct.NodeID, depth int)
	walk = func(id cct.NodeID, depth int) {
		for _, c := range t.Children(id) {
			n := t.Node(c)
			if float64(n.Total.Time) < minFrac*float64(total) {
				continue
			}
			fmt.Fprintf(w, "%6.1f%% %6.1f%%  %s%s\n",
				100*float64(n.Total.Time)/float64(total), 100*float64(n.Self.Time)/float64(total),
				strings.Repeat("  ", depth), t.Func(n.Func).Short)
			walk(c, depth+1)
		}
	}
	walk(t.Root(), 0)
}

// demoArgv is the demo's workload. Its leaf is made long enough (about
// 25 µs a call) that counting every call with a uprobe, where there is no
// PMU, stays within the automatic counters' budget: at the default size the
// leaf is called so often that a probe would cost about a third of it.
func demoArgv(exe string) []string {
	return []string{exe, "workload", "density", "-loop", "-size", "12000", "-calls", "400"}
}
