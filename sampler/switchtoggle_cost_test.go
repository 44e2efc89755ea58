//go:build linux

package sampler

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestSwitchToggleCost measures, by hand, what turning switch samples off
// spares a target that switches some 300,000 times a second: `cctop
// workload pingpong` pinned to CPU 0, alone, then launched under a session
// with OffCPU that keeps switch samples on, takes the wait probes from the
// start (the floor: switch records and probes only), turns switch samples
// off after 200 ms (SetSwitchSamples), or reopens its events then
// (ReconfigureWith, what a new switch sample period took). It logs the workload's rounds/s, the
// median of CCTOP_TRIALS runs (default 3); nothing is asserted. Run it
// pinned apart from the target, with a cctop binary:
//
//	CCTOP_PINGPONG=/tmp/cctop-t taskset -c 1 go test -run TestSwitchToggleCost -v ./sampler/
func TestSwitchToggleCost(t *testing.T) {
	bin := os.Getenv("CCTOP_PINGPONG")
	if bin == "" {
		t.Skip("set CCTOP_PINGPONG to a cctop binary to measure")
	}
	skipIfNoPerf(t)
	trials := 3
	if n, err := strconv.Atoi(os.Getenv("CCTOP_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	rounds := os.Getenv("CCTOP_ROUNDS")
	if rounds == "" {
		rounds = "300000"
	}
	argv := []string{"taskset", "-c", "0", bin, "workload", "pingpong", "-rounds", rounds}
	rateRE := regexp.MustCompile(`(?m)^rounds/s\s+([0-9.]+)`)
	rate := func(out []byte) float64 {
		m := rateRE.FindSubmatch(out)
		if m == nil {
			t.Fatalf("no rounds/s in the workload's output:\n%s", out)
		}
		r, _ := strconv.ParseFloat(string(m[1]), 64)
		return r
	}
	alone := func() (float64, string) {
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatal(err)
		}
		return rate(out), ""
	}
	sampled := func(probes bool, change func(*Session) error) func() (float64, string) {
		return func() (float64, string) {
			var out bytes.Buffer
			s, err := Open(Config{Argv: argv, OffCPU: true, OffCPUProbe: probes, UserStack: 8192, RingPages: 256, NoGroupRead: true, Stdout: &out})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if src, why := s.OffCPU(); src != OffCPUSwitchSamples && !probes {
				t.Skipf("off-CPU stacks from %q here: %s", src, why)
			}
			start := time.Now()
			changed := change == nil
			var took time.Duration
			for {
				_, err := s.Next(context.Background())
				if !changed && time.Since(start) >= 200*time.Millisecond {
					changed = true
					t0 := time.Now()
					if err := change(s); err != nil {
						t.Fatal(err)
					}
					took = time.Since(t0)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			st := s.Stats()
			return rate(out.Bytes()), "change took " + took.String() + ", switches " + strconv.FormatUint(st.Switches, 10) +
				", switch samples " + strconv.FormatUint(st.SwitchSamples, 10) + ", probes " + strconv.FormatUint(st.Probes, 10) +
				", lost " + strconv.FormatUint(st.Lost, 10)
		}
	}
	for _, phase := range []struct {
		name string
		run  func() (float64, string)
	}{
		{"alone", alone},
		{"switch samples on", sampled(false, nil)},
		{"wait probes from the start", sampled(true, nil)},
		{"SetSwitchSamples(false) at 200 ms", sampled(false, func(s *Session) error { return s.SetSwitchSamples(false) })},
		{"ReconfigureWith at 200 ms", sampled(false, func(s *Session) error {
			_, err := s.ReconfigureWith(func(c *Config) { c.Freq = 997 })
			return err
		})},
	} {
		var rates []float64
		for range trials {
			r, what := phase.run()
			rates = append(rates, r)
			t.Logf("%s: %.0f rounds/s; %s", phase.name, r, what)
		}
		slices.Sort(rates)
		t.Logf("%s: median %.0f rounds/s", phase.name, rates[len(rates)/2])
	}
}
