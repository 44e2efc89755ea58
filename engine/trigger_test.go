package engine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
)

// TestTriggerConfig: each trigger's events, for probes and for a PMU
// counter, and a round trip time → calls → exact → time through
// triggerConfig (what a live g does) ends where it started.
func TestTriggerConfig(t *testing.T) {
	clock, _ := sampler.ParseEvent("cpu-clock")
	probes := hpm.Source{Kind: "uprobe"}
	targets := []hpm.Target{{Func: "leaf", Path: "/bin/x", Offset: 0x10}, {Func: "mid", Path: "/bin/x", Offset: 0x40}}
	timeCfg := sampler.Config{PID: 42, Leader: clock, Freq: 999, RingPages: 64}

	cfg := timeCfg
	if !triggerConfig(&cfg, triggerTime, probes, targets, callsPeriodDefault) || len(cfg.Members) != 2 || cfg.Leader != clock || cfg.UserOnly {
		t.Errorf("time with probes: %+v", cfg)
	}
	calls := cfg
	if !triggerConfig(&calls, triggerCalls, probes, targets, callsPeriodDefault) {
		t.Fatal("calls with probes refused")
	}
	if calls.Leader != dummyEvent || len(calls.Extra) != 2 || calls.Extra[0].Period != callsPeriodDefault || !calls.Extra[1].AllTasks ||
		calls.Members != nil || !calls.UserOnly || calls.RingPages != 256 || calls.Freq != 0 {
		t.Errorf("calls with probes: %+v", calls)
	}
	exact := calls
	if !triggerConfig(&exact, triggerExact, probes, targets, callsPeriodDefault) || exact.Extra[0].Period != 1 || exact.RingPages != 1024 {
		t.Errorf("exact with probes: %+v", exact)
	}
	back := timeCfg // a live switch to time restores the time configuration first
	triggerConfig(&back, triggerTime, probes, targets, callsPeriodDefault)
	if !reflect.DeepEqual(back, cfg) {
		t.Errorf("back to time:\n got %+v\nwant %+v", back, cfg)
	}

	// Nothing counted: time is fine, calls and exact are refused.
	none := timeCfg
	if !triggerConfig(&none, triggerTime, probes, nil, callsPeriodDefault) || none.Members != nil {
		t.Errorf("time with nothing armed: %+v", none)
	}
	if triggerConfig(&none, triggerCalls, probes, nil, callsPeriodDefault) || triggerConfig(&none, triggerExact, hpm.Source{Kind: "none"}, nil, 1) {
		t.Error("a calls or exact trigger with nothing counted was accepted")
	}
}

// TestLostRecordsMarkCounts: records lost under a counting trigger make
// its counts a lower bound, said in the live header and in the profile's
// comment with the number lost; a time profile's header is left alone
// (its loss shows in the lost count beside it).
func TestLostRecordsMarkCounts(t *testing.T) {
	for _, tr := range []string{triggerExact, triggerCalls} {
		if got := triggerLost(tr, 17); got != 17 {
			t.Errorf("%s with 17 lost: %d counted short", tr, got)
		}
	}
	if got := triggerLost(triggerTime, 17); got != 0 {
		t.Errorf("time trigger with 17 lost: %d counted short", got)
	}
	if n := lostNote(triggerExact, 17); !strings.Contains(n, "lower bound") || !strings.Contains(n, "17 calls") {
		t.Errorf("exact trigger's note %q", n)
	}

	// The saved profile, opened by cctop view, says so again.
	for tr, want := range map[string]uint64{triggerExact: 17, triggerTime: 0} {
		path := filepath.Join(t.TempDir(), "p.pb.gz")
		meta := cct.Meta{Comments: []string{"trigger=" + tr, fmt.Sprintf("lost_records=17 %s", lostNote(tr, 17))}}
		if err := writeProfile(path, "pprof", smallTree(), meta); err != nil {
			t.Fatal(err)
		}
		src, err := newFileSource(path, "")
		if err != nil {
			t.Fatal(err)
		}
		if h := src.Snapshot().Header; h.Trigger != tr || h.TriggerLost != want {
			t.Errorf("a %s profile with 17 lost opens as trigger %q, %d lost; want %d", tr, h.Trigger, h.TriggerLost, want)
		}
	}
}
