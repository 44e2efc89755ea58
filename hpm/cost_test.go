package hpm

import (
	"errors"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cctop/cctop/sampler"
)

func skipWithoutUprobes(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		t.Skipf("uprobes not permitted: %v", err)
	}
}

func TestMeasureUprobeCost(t *testing.T) {
	if _, err := sampler.UprobeType(); err != nil {
		t.Skipf("no uprobes here: %v", err)
	}
	const iters = 20000
	cost, hits, err := measureUprobe(probeTarget, false, iters)
	skipWithoutUprobes(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("an entry uprobe hit costs %v (%d hits counted)", cost, hits)
	// Every call made while the probe was on is a hit, no more, no less.
	if hits != costRounds*iters {
		t.Errorf("the counter saw %d hits, want %d", hits, costRounds*iters)
	}
	if cost <= 0 || cost > time.Millisecond {
		t.Errorf("cost %v per hit, want positive and believable", cost)
	}
	if c, err := MeasureUprobeCost(iters); err != nil || c <= 0 {
		t.Errorf("MeasureUprobeCost: %v, %v", c, err)
	}
	if _, err := MeasureUprobeCost(0); err == nil {
		t.Error("0 iterations: no error")
	}
}

// A probe past the stack-bound check counts every call exactly once and,
// on the emulated PUSHQ BP, costs less than one the kernel single-steps.
func TestMeasureUprobeCostAfterStackCheck(t *testing.T) {
	if _, err := sampler.UprobeType(); err != nil {
		t.Skipf("no uprobes here: %v", err)
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the Go stack-bound check is only recognised on amd64")
	}
	const iters = 20000
	after, hits, err := measureUprobe(framedTarget, true, iters)
	skipWithoutUprobes(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if hits != costRounds*iters {
		t.Errorf("past the check: %d hits, want %d", hits, costRounds*iters)
	}
	entry, entryHits, err := measureUprobe(framedTarget, false, iters)
	if err != nil {
		t.Fatal(err)
	}
	// At the entry a call that went through morestack (a preemption
	// request, stack growth) is counted twice; never less than once.
	if entryHits < costRounds*iters {
		t.Errorf("at the entry: %d hits, want at least %d", entryHits, costRounds*iters)
	}
	t.Logf("per hit: %v at the entry (CMPQ, stepped; %d hits for %d calls), %v past the check (PUSHQ BP, emulated)",
		entry, entryHits, costRounds*iters, after)
	if after <= 0 || after > entry {
		t.Errorf("past the check %v, at the entry %v: want cheaper and positive", after, entry)
	}
	if c, err := MeasureUprobeCostAfterStackCheck(iters); err != nil || c <= 0 {
		t.Errorf("MeasureUprobeCostAfterStackCheck: %v, %v", c, err)
	}
}

// TestMeasureBreakpointCost: a hardware execution breakpoint counts every
// call of the function (MeasureBreakpointCost checks the count) and costs
// each something, far less than the microseconds a second a caller would
// notice per call; where the machine has no breakpoint PMU or debug
// registers it says so and the test skips.
func TestMeasureBreakpointCost(t *testing.T) {
	c, err := MeasureBreakpointCost(2000)
	if err != nil {
		if strings.Contains(err.Error(), "counted") {
			t.Fatal(err) // it opened and miscounted
		}
		t.Skipf("no hardware breakpoints here: %v", err)
	}
	if c <= 0 || c > 100*time.Microsecond {
		t.Errorf("a breakpoint hit costs %v", c)
	}
	t.Logf("breakpoint hit: %v", c)
}
