package engine

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/tui"
)

// TestEngineDirect drives the engine the way a front end other than the
// command line would, through its exported API only: plan a run on the
// density workload, start the live aggregator, read snapshots until the
// workload's leaf shows up under both of its callers, then close; and
// record the same workload headless and export the profile.
func TestEngineDirect(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	leaf := workloadPkg + "densityLeaf"
	// callersOf are the functions whose frames call name in t's
	// contexts that hold samples.
	callersOf := func(tr *cct.Tree, name string) map[string]bool {
		out := map[string]bool{}
		for i := 0; i < tr.Len(); i++ {
			n := tr.Node(cct.NodeID(i))
			if n.Parent == cct.NoNode || n.Total.Samples == 0 || tr.Func(n.Func).Name != name {
				continue
			}
			out[tr.Func(tr.Node(n.Parent).Func).Short] = true
		}
		return out
	}

	t.Run("live", func(t *testing.T) {
		cfg, plan := clockPlan(t, false, cctopBin, "workload", "density", "-loop")
		l, err := StartLive(cfg, plan, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var src tui.Source = l
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { l.Run(ctx); close(done) }()
		defer func() {
			cancel()
			<-done
			l.Close(io.Discard)
		}()
		var snap tui.Snapshot
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			snap = src.Snapshot()
			if snap.Tree != nil {
				c := callersOf(snap.Tree, leaf)
				if c["workload.densityPhaseC"] && c["workload.densityPhaseD"] {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no samples of %s under both phases in 20 s; last snapshot: %d samples, header %+v", leaf, snapshotSamples(snap), snap.Header)
			}
		}
		if snap.Metric != "time" || snap.Header.Samples == 0 || len(snap.Self) != snap.Tree.Len() {
			t.Errorf("snapshot: metric %q, %d samples in the header, %d self weights for %d nodes",
				snap.Metric, snap.Header.Samples, len(snap.Self), snap.Tree.Len())
		}
	})

	t.Run("record", func(t *testing.T) {
		rec := recordFor(t, 2*time.Second, cctopBin, "workload", "density", "-loop")
		if c := callersOf(rec.Tree(), leaf); !c["workload.densityPhaseC"] || !c["workload.densityPhaseD"] {
			t.Errorf("%s's callers with samples: %v", leaf, c)
		}
		out := filepath.Join(t.TempDir(), "d.pb.gz")
		if err := rec.WriteProfile(out, "pprof"); err != nil {
			t.Fatal(err)
		}
		src, err := OpenProfile(out, "")
		if err != nil {
			t.Fatal(err)
		}
		if snap := src.Snapshot(); snap.Tree == nil || len(callersOf(snap.Tree, leaf)) == 0 {
			t.Errorf("the exported profile, opened again, has no samples of %s", leaf)
		}
	})
}

// clockPlan plans sampling the command argv on the CPU clock at 999 Hz,
// counting no calls, as `cctop record --calls none` does; userOnly leaves
// kernel frames out.
func clockPlan(t testing.TB, userOnly bool, argv ...string) (sampler.Config, *Plan) {
	t.Helper()
	clock, err := sampler.ParseEvent("cpu-clock")
	if err != nil {
		t.Fatal(err)
	}
	cfg := sampler.Config{Argv: argv, Leader: clock, Freq: 999, UserOnly: userOnly, Stdout: io.Discard, Stderr: io.Discard}
	o := DefaultOptions()
	o.Calls = "none"
	plan, err := Prepare(&cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, plan
}

// recordFor records argv for d as clockPlan plans it, user space only,
// through the exported API; the recording is closed when the test ends.
func recordFor(t testing.TB, d time.Duration, argv ...string) *Recording {
	t.Helper()
	cfg, plan := clockPlan(t, true, argv...)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	rec, err := Record(ctx, cfg, plan, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close(io.Discard) })
	return rec
}

// snapshotSamples is the number of samples in snap's tree.
func snapshotSamples(snap tui.Snapshot) int64 {
	if snap.Tree == nil {
		return 0
	}
	return snap.Tree.Total().Samples
}
