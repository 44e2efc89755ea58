package main

import (
	"bufio"
	"bytes"
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

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/sampler"
)

// evalWorkload is one built-in workload as the evaluation runs it: sized
// for a few seconds under counting uprobes, deterministic (-rounds), with
// the functions whose calls are counted and checked.
type evalWorkload struct {
	name  string
	args  []string
	funcs []string // in package workload
}

const workloadPkg = "github.com/cctop/cctop/workload."

var evalWorkloads = []evalWorkload{
	{"density", []string{"-size", "4000", "-calls", "3000", "-rounds", "20"},
		[]string{"densityPhaseC", "densityPhaseD", "densityLeaf"}},
	{"latency", []string{"-threads", "4", "-size", "20000", "-calls", "50", "-outside", "0", "-rounds", "60"},
		[]string{"latencySiteA", "latencySiteB", "latencyLeaf", "latencyOutside"}},
	{"recursive", []string{"-depth", "40", "-size", "20000", "-width", "4", "-branch", "3", "-levels", "2", "-rounds", "800"},
		[]string{"recursiveDeep", "recursiveBottom", "recursiveWide", "wideLeaf0", "wideLeaf1", "wideLeaf2", "wideLeaf3"}},
}

// callsPeriodFor is N of the calls-trigger run: the first prime at or
// above calls/samples, so that it takes about as many samples as the clock
// run did and the two compare at the same cost; prime so that it does not
// lock into the workload's loop counts (see callsPeriodDefault).
func callsPeriodFor(calls int64, samples int) uint64 {
	n := uint64(1)
	if samples > 0 && calls > int64(samples) {
		n = uint64((calls + int64(samples)/2) / int64(samples))
	}
	for n > 2 && !prime(n) {
		n++
	}
	return n
}

func prime(n uint64) bool {
	if n < 2 {
		return false
	}
	for d := uint64(2); d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

var defaultSweep = []float64{0, 0.01, 0.1, 1, 10, 100, 1000}

type evalResult struct {
	Name    string `json:"name"`
	Overlap struct {
		Samples        float64 `json:"samples"`
		Density        float64 `json:"density"`
		DensityLatency float64 `json:"density_latency"`
		CallsTrigger   float64 `json:"calls_trigger"`
	} `json:"overlap"`
	AlphaSweep []sweepPoint     `json:"alpha_sweep"`
	LatencyNS  map[string]int64 `json:"latency_ns"`
	// Beyond the schema: how much each run saw, for judging the figures.
	Samples     int    `json:"samples_taken"`
	CallsPeriod uint64 `json:"calls_period"` // N of the calls trigger
	ExactCalls  int64  `json:"exact_calls"`
	ExactOK     bool   `json:"exact_matches_workload_counts"`
}

type sweepPoint struct {
	Alpha   float64 `json:"alpha"`
	Overlap float64 `json:"overlap"`
}

func cmdEval(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	jsonOut := fs.String("json", "", "also write the results as JSON to `FILE`")
	only := fs.String("workload", "", "evaluate only this `NAME`")
	alphas := fs.String("alpha", "", "comma-separated `LIST` of alphas to sweep")
	alpha := fs.Float64("default-alpha", correct.DefaultAlpha, "alpha of the density+latency column")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("eval takes no arguments besides its flags")
	}
	if !validAlpha(*alpha) {
		return usageError("--default-alpha must be >= 0 and finite, got %g", *alpha)
	}
	sweep := defaultSweep
	if *alphas != "" {
		sweep = nil
		for _, f := range strings.Split(*alphas, ",") {
			a, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !validAlpha(a) {
				return usageError("bad --alpha list %q", *alphas)
			}
			sweep = append(sweep, a)
		}
	}
	var todo []evalWorkload
	for _, w := range evalWorkloads {
		if *only == "" || *only == w.name {
			todo = append(todo, w)
		}
	}
	if len(todo) == 0 {
		return usageError("unknown --workload %q (density, latency, recursive)", *only)
	}
	if *jsonOut != "" {
		if err := checkWritable(*jsonOut); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find own executable: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), quitSignals...)
	defer stop()

	var results []evalResult
	for _, w := range todo {
		fmt.Fprintf(stderr, "cctop eval: %s: sampled, calls-trigger and exact runs...\n", w.name)
		r, err := evalOne(ctx, exe, w, sweep, *alpha)
		if err != nil {
			return fmt.Errorf("eval %s: %v", w.name, err)
		}
		results = append(results, r)
		if ctx.Err() != nil {
			return fmt.Errorf("eval interrupted")
		}
	}
	printEval(stdout, results, sweep, *alpha)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"workloads": results}, "", "  ")
		if err := writeFileAtomic(*jsonOut, append(b, '\n')); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "cctop eval: wrote %s\n", *jsonOut)
	}
	return nil
}

// evalOne runs w three times (time trigger with counters, calls trigger,
// exact) and compares their DCG edges.
func evalOne(ctx context.Context, exe string, w evalWorkload, sweep []float64, alpha float64) (evalResult, error) {
	var res evalResult
	res.Name = w.name
	full := make([]string, len(w.funcs))
	counted := map[string]bool{}
	for i, f := range w.funcs {
		full[i] = workloadPkg + f
		counted[full[i]] = true
	}
	// run records w with trigger; period is the calls trigger's N (0 for
	// the others).
	run := func(trigger string, period uint64) (*recording, string, error) {
		var out bytes.Buffer
		cfg := sampler.Config{
			Argv:     append([]string{exe, "workload", w.name}, w.args...),
			Leader:   mustEvent("cpu-clock"),
			Freq:     999,
			UserOnly: true,
			Stdout:   &out,
		}
		cfg.Period = period
		plan, err := planCounting(countingFlags{trigger: trigger, calls: "uprobe:" + strings.Join(full, ","), alpha: alpha}, &cfg, period > 0)
		if err != nil {
			return nil, "", err
		}
		rec, err := recordTarget(ctx, cfg, plan, io.Discard)
		if err != nil {
			return nil, "", err
		}
		rec.sess.Close()
		// The exact run must see every call. The others are estimates a
		// few lost records barely move, and their uprobes fire in every
		// process running this binary (other cctops, in a test run), whose
		// records share the rings.
		if st := rec.sess.Stats(); st.Lost > 0 && (trigger == triggerExact || st.Lost*100 > st.Samples) {
			return nil, "", fmt.Errorf("%s run lost %d records (%d samples taken)", trigger, st.Lost, st.Samples)
		}
		return rec, out.String(), nil
	}

	exact, printed, err := run(triggerExact, 0)
	if err != nil {
		return res, err
	}
	exactEdges := edgeWeights(exact, correct.Params{Density: true}, counted)
	for _, v := range exactEdges {
		res.ExactCalls += int64(v)
	}
	res.ExactOK = matchesPrinted(exactEdges, printed)

	timed, _, err := run(triggerTime, 0)
	if err != nil {
		return res, err
	}
	res.Samples = timed.b.weights.log.Len()
	ov := func(p correct.Params) float64 {
		return correct.Overlap(edgeWeights(timed, p, counted), exactEdges)
	}
	res.Overlap.Samples = ov(correct.Params{})
	res.Overlap.Density = ov(correct.Params{Density: true})
	res.Overlap.DensityLatency = ov(correct.Params{Density: true, Latency: true, Alpha: alpha})
	for _, a := range sweep {
		res.AlphaSweep = append(res.AlphaSweep, sweepPoint{a, ov(correct.Params{Density: true, Latency: true, Alpha: a})})
	}
	lat := correct.Summarize(timed.b.weights.log.Latencies(nil))
	res.LatencyNS = map[string]int64{"min": int64(lat.Min), "median": int64(lat.Median), "mean": int64(lat.Mean), "max": int64(lat.Max)}

	res.CallsPeriod = callsPeriodFor(res.ExactCalls, res.Samples)
	calls, _, err := run(triggerCalls, res.CallsPeriod)
	if err != nil {
		return res, err
	}
	res.Overlap.CallsTrigger = correct.Overlap(edgeWeights(calls, correct.Params{Density: true}, counted), exactEdges)
	return res, nil
}

// edgeWeights projects a run's weighted samples on DCG edges: a sample
// counts for the call of the innermost counted function on its stack, the
// edge from that function's caller to it.
func edgeWeights(rec *recording, p correct.Params, counted map[string]bool) map[correct.Edge]float64 {
	t := rec.b.tree
	edgeOf := make([]int32, t.Len())
	var edges []correct.Edge
	index := map[correct.Edge]int32{}
	for id := 0; id < t.Len(); id++ {
		n := t.Node(cct.NodeID(id))
		edgeOf[id] = -1
		if n.Parent == cct.NoNode {
			continue
		}
		name := t.Func(n.Func).Name
		if !counted[name] {
			edgeOf[id] = edgeOf[n.Parent]
			continue
		}
		e := correct.Edge{Caller: t.Func(t.Node(n.Parent).Func).Name, Callee: name}
		i, ok := index[e]
		if !ok {
			i = int32(len(edges))
			index[e] = i
			edges = append(edges, e)
		}
		edgeOf[id] = i
	}
	perNode, _ := rec.b.weights.log.Reweight(p, nil)
	out := map[correct.Edge]float64{}
	for node, w := range perNode {
		if w != 0 && node < len(edgeOf) && edgeOf[node] >= 0 {
			out[edges[edgeOf[node]]] += w
		}
	}
	return out
}

// matchesPrinted checks the exact run against the workload's own counts
// of the same edges.
func matchesPrinted(exact map[correct.Edge]float64, printed string) bool {
	want := map[correct.Edge]float64{}
	sc := bufio.NewScanner(strings.NewReader(printed))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 5 && f[0] == "calls" && f[2] == "->" {
			n, err := strconv.ParseFloat(f[4], 64)
			if err != nil {
				return false
			}
			want[correct.Edge{Caller: f[1], Callee: f[3]}] += n
		}
	}
	if len(want) == 0 {
		return false
	}
	for e, n := range want {
		if exact[e] != n {
			return false
		}
	}
	return true
}

func printEval(w io.Writer, results []evalResult, sweep []float64, alpha float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Overlap of DCG edges with the exact run, %% (density+latency at alpha=%g)\n", alpha)
	fmt.Fprintln(tw, "workload\tsamples\tdensity\tdensity+latency\tcalls trigger\tsamples taken\tcalls N\texact calls\texact = workload counts\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\t%v\t\n", r.Name, r.Overlap.Samples, r.Overlap.Density,
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
