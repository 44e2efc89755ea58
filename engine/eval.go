package engine

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

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
	{"stages", []string{"-size", "1000", "-calls", "200", "-rounds", "60"},
		[]string{"stageRun", "stageParse", "stageTransform", "stageEmit"}},
	{"sharedleaf", []string{"-size", "1000", "-calls", "200", "-rounds", "60"},
		[]string{"sharedRun", "sharedParse", "sharedTransform", "sharedEmit", "sharedLeaf"}},
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

// DefaultSweep are the alphas eval sweeps without --alpha.
var DefaultSweep = []float64{0, 0.01, 0.1, 1, 10, 100, 1000}

// EvalResult is how closely one workload's estimated call profiles match
// its exact one.
type EvalResult struct {
	Name    string `json:"name"`
	Mode    string `json:"mode"` // of the timed run: cpu, or wall (its clock runs while threads wait)
	Overlap struct {
		Samples        float64 `json:"samples"`
		Density        float64 `json:"density"`
		DensityLatency float64 `json:"density_latency"`
		CallsTrigger   float64 `json:"calls_trigger"`
		// Flow is the samples' weights under control-flow correction
		// (FDOM, lee2007): no call counter read.
		Flow float64 `json:"flow"`
		// DensityFlow is flow correction of the density weights, each
		// counted function anchored to the calls its counter read.
		DensityFlow float64 `json:"density_flow"`
	} `json:"overlap"`
	AlphaSweep []SweepPoint     `json:"alpha_sweep"`
	LatencyNS  map[string]int64 `json:"latency_ns"`
	// Beyond the schema: how much each run saw, for judging the figures.
	Samples     int    `json:"samples_taken"`
	CallsPeriod uint64 `json:"calls_period"` // N of the calls trigger
	ExactCalls  int64  `json:"exact_calls"`
	ExactOK     bool   `json:"exact_matches_workload_counts"`
}

// SweepPoint is the density+latency overlap at one alpha.
type SweepPoint struct {
	Alpha   float64 `json:"alpha"`
	Overlap float64 `json:"overlap"`
}

// EvalWorkloads are the names of the built-in workloads Evaluate knows.
func EvalWorkloads() []string {
	var names []string
	for _, w := range evalWorkloads {
		names = append(names, w.name)
	}
	return names
}

// Evaluate runs the built-in workload name (launched as exe workload
// NAME) three times, sampled by time with counters, by calls and on every
// call, and compares the estimated call profiles with the exact one at
// alpha and at each alpha of sweep.
//
// In mode ModeWall the timed run records context switches too, and its
// clock runs while a thread is off the CPU: a sample after a wait has the
// wait in its interval, which the latency correction discounts (see
// weighing.offNS). The exact and calls runs count calls, which no mode
// changes.
func Evaluate(ctx context.Context, exe, name, mode string, sweep []float64, alpha float64) (EvalResult, error) {
	switch mode {
	case "", ModeCPU, ModeWall:
	default:
		return EvalResult{}, usageError("eval --mode %s: want cpu or wall", mode)
	}
	for _, w := range evalWorkloads {
		if w.name == name {
			return evalOne(ctx, exe, w, mode, sweep, alpha)
		}
	}
	return EvalResult{}, usageError("unknown --workload %q (%s)", name, strings.Join(EvalWorkloads(), ", "))
}

// evalOne runs w three times (time trigger with counters, calls trigger,
// exact) and compares their DCG edges.
func evalOne(ctx context.Context, exe string, w evalWorkload, mode string, sweep []float64, alpha float64) (EvalResult, error) {
	var res EvalResult
	res.Name, res.Mode = w.name, cmp.Or(mode, ModeCPU)
	full := make([]string, len(w.funcs))
	counted := map[string]bool{}
	for i, f := range w.funcs {
		full[i] = workloadPkg + f
		counted[full[i]] = true
	}
	// run records w with trigger; period is the calls trigger's N (0 for
	// the others).
	run := func(trigger string, period uint64) (*Recording, string, error) {
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
		if trigger == triggerTime {
			if err := planMode(&cfg, plan, mode); err != nil {
				return nil, "", err
			}
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
	res.Overlap.Flow = correct.Overlap(flowEdgeWeights(timed, correct.Params{}, counted), exactEdges)
	res.Overlap.Density = ov(correct.Params{Density: true})
	res.Overlap.DensityFlow = correct.Overlap(flowEdgeWeights(timed, correct.Params{Density: true}, counted), exactEdges)
	res.Overlap.DensityLatency = ov(correct.Params{Density: true, Latency: true, Alpha: alpha})
	for _, a := range sweep {
		res.AlphaSweep = append(res.AlphaSweep, SweepPoint{a, ov(correct.Params{Density: true, Latency: true, Alpha: a})})
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
func edgeWeights(rec *Recording, p correct.Params, counted map[string]bool) map[correct.Edge]float64 {
	perNode, _ := rec.b.weights.log.Reweight(p, nil)
	return projectEdges(rec.b.tree, perNode, counted)
}

// flowEdgeWeights is edgeWeights under control-flow correction
// (flowCalls): every context's weight times its factor, the edges FDOM
// predicts where no sample fell, and, under the density weight, each counted
// function anchored to the calls its counter read.
func flowEdgeWeights(rec *Recording, p correct.Params, counted map[string]bool) map[correct.Edge]float64 {
	b := rec.b
	perNode, _ := b.weights.log.Reweight(p, nil)
	var counts map[string]float64
	if p.Density {
		counts = b.weights.callCounts()
	}
	x := newFlowFixer()
	defer x.close()
	x.beginPass(b.placeBranchRuns())
	w := x.flowCalls(b.tree, perNode, counts, b.addPredicted)
	return projectEdges(b.tree, w, counted)
}

// projectEdges is edgeWeights of per-node weights perNode.
func projectEdges(t *cct.Tree, perNode []float64, counted map[string]bool) map[correct.Edge]float64 {
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
