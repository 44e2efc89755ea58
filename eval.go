package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/engine"
)

func cmdEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	jsonOut := fs.String("json", "", "also write the results as JSON to `FILE`")
	only := fs.String("workload", "", "evaluate only this `NAME`")
	alphas := fs.String("alpha", "", "comma-separated `LIST` of alphas to sweep")
	alpha := fs.Float64("default-alpha", correct.DefaultAlpha, "alpha of the density+latency column")
	mode := fs.String("mode", engine.ModeCPU, "`MODE` of the timed run: cpu, or wall (its clock runs while threads wait, so latency correction sees the waits)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("eval takes no arguments besides its flags")
	}
	if !engine.ValidAlpha(*alpha) {
		return usageError("--default-alpha must be >= 0 and finite, got %g", *alpha)
	}
	sweep := engine.DefaultSweep
	if *alphas != "" {
		sweep = nil
		for _, f := range strings.Split(*alphas, ",") {
			a, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !engine.ValidAlpha(a) {
				return usageError("bad --alpha list %q", *alphas)
			}
			sweep = append(sweep, a)
		}
	}
	var todo []string
	for _, name := range engine.EvalWorkloads() {
		if *only == "" || *only == name {
			todo = append(todo, name)
		}
	}
	if len(todo) == 0 {
		return usageError("unknown --workload %q (%s)", *only, strings.Join(engine.EvalWorkloads(), ", "))
	}
	if *jsonOut != "" {
		if err := engine.CheckWritable(*jsonOut); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find own executable: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), quitSignals...)
	defer stop()

	var results []engine.EvalResult
	for _, name := range todo {
		fmt.Fprintf(stderr, "cctop eval: %s: sampled, calls-trigger and exact runs...\n", name)
		r, err := engine.Evaluate(ctx, exe, name, *mode, sweep, *alpha)
		if err != nil {
			return fmt.Errorf("eval %s: %v", name, err)
		}
		results = append(results, r)
		if ctx.Err() != nil {
			return fmt.Errorf("eval interrupted")
		}
	}
	printEval(stdout, results, sweep, *alpha)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"workloads": results}, "", "  ")
		if err := engine.WriteFileAtomic(*jsonOut, append(b, '\n')); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "cctop eval: wrote %s\n", *jsonOut)
	}
	return nil
}

func printEval(w io.Writer, results []engine.EvalResult, sweep []float64, alpha float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Overlap of DCG edges with the exact run, %% (density+latency at alpha=%g)\n", alpha)
	fmt.Fprintln(tw, "workload\tsamples\tflow\tdensity\tdensity+flow\tdensity+latency\tcalls trigger\tsamples taken\tcalls N\texact calls\texact = workload counts\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\t%v\t\n", r.Name, r.Overlap.Samples, r.Overlap.Flow, r.Overlap.Density, r.Overlap.DensityFlow,
			r.Overlap.DensityLatency, r.Overlap.CallsTrigger, r.Samples, r.CallsPeriod, r.ExactCalls, r.ExactOK)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nAlpha sweep: density+latency overlap with the exact run, %")
	fmt.Fprint(tw, "workload\t")
	for _, a := range sweep {
		fmt.Fprintf(tw, "%g\t", a)
	}
	fmt.Fprintln(tw)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t", r.Name)
		for _, p := range r.AlphaSweep {
			fmt.Fprintf(tw, "%.1f\t", p.Overlap)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	fmt.Fprintln(w, "\nSampling latency (delta - lambda), ns")
	fmt.Fprintln(tw, "workload\tmin\tmedian\tmean\tmax\t")
	for _, r := range results {
		l := r.LatencyNS
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", r.Name, l["min"], l["median"], l["mean"], l["max"])
	}
	tw.Flush()
}
