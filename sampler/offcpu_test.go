//go:build linux

package sampler

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The sleeper's fixed work: rounds sleeps of sleepMS each.
const (
	sleepRounds = 40
	sleepMS     = 20
)

// buildSleeper compiles testdata/sleeper.c (frame pointers, no PIE) and
// returns it with the address ranges of its functions sleep_round and main,
// where the return addresses of its sleeping stack point.
func buildSleeper(t *testing.T) (string, map[string][2]uint64) {
	t.Helper()
	bin := gccBuild(t, "testdata/sleeper.c", "-O0", "-fno-omit-frame-pointer", "-no-pie")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	code := map[string][2]uint64{}
	for _, s := range syms {
		if s.Name == "sleep_round" || s.Name == "main" {
			code[s.Name] = [2]uint64{s.Value, s.Value + s.Size}
		}
	}
	if len(code) != 2 {
		t.Fatalf("sleeper symbols: %v", code)
	}
	return bin, code
}

// offCPURun is what a session of the sleeper handed on, copied out of the
// batches.
type offCPURun struct {
	pid                     int
	source, why             string
	switches                map[uint32][]Record // the target's, by thread, in the order handed on
	order                   map[uint32][]Record // switches and off-CPU samples, by thread, in the order handed on
	switchOuts              int
	offCPU                  []Record // samples with OffCPU
	onCPU                   int
	firstSwitch, lastSwitch uint64
	stats                   Stats
}

// keep copies r out of its batch.
func keep(r *Record) Record {
	c := *r
	c.Stack, c.Chain, c.Regs = slices.Clone(r.Stack), slices.Clone(r.Chain), slices.Clone(r.Regs)
	c.Values, c.Branches = nil, nil
	return c
}

// add takes one batch.
func (run *offCPURun) add(b *Batch) {
	for i := range b.Records {
		r := &b.Records[i]
		switch {
		case r.Kind == KindSwitch:
			if int(r.PID) != run.pid {
				continue
			}
			if run.firstSwitch == 0 {
				run.firstSwitch = r.Time
			}
			run.lastSwitch = max(run.lastSwitch, r.Time)
			run.switches[r.TID] = append(run.switches[r.TID], *r)
			run.order[r.TID] = append(run.order[r.TID], *r)
			if r.SwitchOut() {
				run.switchOuts++
			}
		case r.Kind == KindSample && r.OffCPU:
			run.offCPU = append(run.offCPU, keep(r))
			run.order[r.TID] = append(run.order[r.TID], *r)
		case r.Kind == KindSample:
			run.onCPU++
		}
	}
}

// runSleeper launches the sleeper under cfg and collects its run to the end.
func runSleeper(t *testing.T, cfg Config) *offCPURun {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := &offCPURun{pid: s.PID(), switches: map[uint32][]Record{}, order: map[uint32][]Record{}}
	run.source, run.why = s.OffCPU()
	if err := s.Run(context.Background(), run.add); err != nil {
		t.Fatal(err)
	}
	run.stats = s.Stats()
	return run
}

// blockedTime is the time the thread's switch records say it was off the
// CPU blocked: from each switch out that was not a preemption to the
// switch in after it. Each thread's records must come in time order.
func blockedTime(t *testing.T, recs []Record) time.Duration {
	var sum, out uint64
	for i, r := range recs {
		if i > 0 && r.Time < recs[i-1].Time {
			t.Fatalf("thread %d: switch at %d handed on after one at %d", r.TID, r.Time, recs[i-1].Time)
		}
		switch {
		case r.SwitchOut() && !r.Preempted():
			out = r.Time
		case r.SwitchOut():
			out = 0
		case out != 0:
			sum += r.Time - out
			out = 0
		}
	}
	return time.Duration(sum)
}

// stackHolds reports whether a stack copy holds a word inside each range:
// return addresses into those functions.
func stackHolds(stack []byte, code map[string][2]uint64) bool {
	found := map[string]bool{}
	for i := 0; i+8 <= len(stack); i += 8 {
		w := binary.NativeEndian.Uint64(stack[i:])
		for name, r := range code {
			if r[0] < w && w < r[1] {
				found[name] = true
			}
		}
	}
	return len(found) == len(code)
}

// TestOffCPUSwitchSamples: with OffCPU where kernel samples are allowed,
// the sleeper's switch records measure its sleeps (within 15% of the time
// it was asked to sleep), every sleep brings a switch sample whose chain
// has a kernel part (the scheduler) and whose stack copy holds the return
// addresses into sleep_round and main, and the stats count switches and
// switch samples apart from on-CPU samples.
func TestOffCPUSwitchSamples(t *testing.T) {
	skipIfNoPerf(t)
	bin, code := buildSleeper(t)
	run := runSleeper(t, Config{Argv: []string{bin, strconv.Itoa(sleepRounds), strconv.Itoa(sleepMS)},
		OffCPU: true, UserStack: 4096, Stdout: new(nopWriter)})
	if run.source != OffCPUSwitchSamples {
		t.Skipf("off-CPU stacks from %q here: %s", run.source, run.why)
	}
	if run.why != "" {
		t.Errorf("why %q for switch samples", run.why)
	}
	var blocked time.Duration
	for _, recs := range run.switches {
		blocked += blockedTime(t, recs)
	}
	want := time.Duration(sleepRounds*sleepMS) * time.Millisecond
	t.Logf("blocked %v (asked %v); %d switch outs, %d off-CPU samples, %d on-CPU; stats %+v",
		blocked, want, run.switchOuts, len(run.offCPU), run.onCPU, run.stats)
	if d := blocked - want; d < -want*15/100 || d > want*15/100 {
		t.Errorf("switch records say %v blocked, want %v ±15%%", blocked, want)
	}
	good := 0
	for _, r := range run.offCPU {
		if r.Probed || r.Period != 1 {
			t.Fatalf("switch sample probed %v, period %d", r.Probed, r.Period)
		}
		k, u := SplitChain(r.Chain)
		if len(r.Stack) > 0 && len(k) > 0 && len(u) > 0 && stackHolds(r.Stack, code) {
			good++
		}
	}
	if good < sleepRounds {
		t.Errorf("%d switch samples with a kernel chain and the sleeper's frames in the stack copy, want >= %d (one per sleep); %d in all",
			good, sleepRounds, len(run.offCPU))
	}
	// A switch sample is taken as its thread leaves the CPU, just before
	// the switch out is written.
	for tid, recs := range run.order {
		for i, r := range recs {
			if r.Kind == KindSample && (i+1 == len(recs) || !recs[i+1].SwitchOut()) {
				t.Errorf("thread %d: switch sample %d of %d at %d not followed by a switch out", tid, i, len(recs), r.Time)
			}
		}
	}
	st := run.stats
	if st.Switches == 0 || st.Switches != uint64(run.switchOuts) {
		t.Errorf("Stats.Switches %d, switch outs handed on %d", st.Switches, run.switchOuts)
	}
	if st.SwitchSamples != uint64(len(run.offCPU)) || st.Samples != uint64(run.onCPU) {
		t.Errorf("Stats.SwitchSamples %d, Samples %d; handed on %d off-CPU and %d on-CPU", st.SwitchSamples, st.Samples, len(run.offCPU), run.onCPU)
	}
	if st.Probes != 0 {
		t.Errorf("%d probes with switch samples", st.Probes)
	}
}

// TestOffCPUWaitProbes: with OffCPUProbe the sleeper's blocked thread is
// read from /proc: probe samples say it waits in (clock_)nanosleep, carry
// its registers in the stack-copy layout and a stack copy that holds the
// return addresses into sleep_round and main, and lie in time among its
// switch records (one clock). No switch samples are taken.
func TestOffCPUWaitProbes(t *testing.T) {
	skipIfNoPerf(t)
	bin, code := buildSleeper(t)
	run := runSleeper(t, Config{Argv: []string{bin, strconv.Itoa(sleepRounds), strconv.Itoa(sleepMS)},
		OffCPU: true, OffCPUProbe: true, UserStack: 4096, Stdout: new(nopWriter)})
	if run.source != OffCPUWaitProbes || !strings.Contains(run.why, "asked for") {
		t.Errorf("OffCPU() = %q, %q", run.source, run.why)
	}
	sleeping := 0
	for _, r := range run.offCPU {
		if !r.Probed {
			t.Fatalf("an off-CPU sample not probed: %+v", r)
		}
		if int(r.PID) != run.pid || r.Period != 1 {
			t.Errorf("probe of pid %d, period %d", r.PID, r.Period)
		}
		if r.Syscall != unix.SYS_CLOCK_NANOSLEEP && r.Syscall != unix.SYS_NANOSLEEP {
			continue
		}
		sleeping++
		if len(r.Stack) == 0 || len(r.Stack) > 4096 {
			t.Errorf("probe stack of %d bytes", len(r.Stack))
		}
		if !slices.Equal(r.Chain, []uint64{contextUser, r.IP}) {
			t.Errorf("probe chain %x, ip %#x", r.Chain, r.IP)
		}
		if _, u := SplitChain(r.Chain); len(u) != 1 || u[0] != r.IP {
			t.Errorf("probe chain's user part %x", u)
		}
		if ip, ok := r.Reg(ipReg); unwindRegsMask != 0 && (!ok || ip != r.IP || r.RegsMask != unwindRegsMask) {
			t.Errorf("probe registers: mask %#x, IP %#x %v, want %#x", r.RegsMask, ip, ok, r.IP)
		}
		if sp, ok := r.UserSP(); unwindRegsMask != 0 && (!ok || sp == 0) {
			t.Errorf("probe SP %#x %v", sp, ok)
		}
		if r.HasUserFP {
			t.Error("probe claims a frame pointer")
		}
		if !stackHolds(r.Stack, code) {
			t.Errorf("probe stack of %d bytes lacks the return addresses into sleep_round and main", len(r.Stack))
		}
		if r.Time < run.firstSwitch || r.Time > run.lastSwitch {
			t.Errorf("probe at %d outside the switch records, %d to %d", r.Time, run.firstSwitch, run.lastSwitch)
		}
	}
	t.Logf("%d probes, %d in nanosleep; %d switch outs; stats %+v", len(run.offCPU), sleeping, run.switchOuts, run.stats)
	// A look every 10 ms over 800 ms of sleeping: dozens.
	if sleeping < sleepRounds/4 {
		t.Errorf("%d probes in nanosleep, want >= %d", sleeping, sleepRounds/4)
	}
	// Each probe comes, in its thread's order, while the switches say the
	// thread is off the CPU: one clock, and no probe handed on before the
	// thread's earlier switches.
	for tid, recs := range run.order {
		out := false
		for i, r := range recs {
			if i > 0 && r.Time < recs[i-1].Time {
				t.Fatalf("thread %d: %v at %d handed on after %v at %d", tid, r.Kind, r.Time, recs[i-1].Kind, recs[i-1].Time)
			}
			switch {
			case r.Kind == KindSwitch:
				out = r.SwitchOut()
			case !out:
				t.Errorf("thread %d: probe at %d while on the CPU (record %d of %d)", tid, r.Time, i, len(recs))
			}
		}
	}
	st := run.stats
	if st.Probes != uint64(len(run.offCPU)) || st.SwitchSamples != 0 {
		t.Errorf("Stats.Probes %d, SwitchSamples %d; %d probes handed on", st.Probes, st.SwitchSamples, len(run.offCPU))
	}
	if st.Switches == 0 || st.Switches != uint64(run.switchOuts) {
		t.Errorf("Stats.Switches %d, switch outs handed on %d", st.Switches, run.switchOuts)
	}
}

// TestOffCPUUserOnly: sampling user space only, the context-switches
// samples would all be dropped by the kernel: the probes take them, and
// say why. Close stops them.
func TestOffCPUUserOnly(t *testing.T) {
	skipIfNoPerf(t)
	bin, _ := buildSleeper(t)
	s, err := Open(Config{Argv: []string{bin, "1", "1"}, OffCPU: true, UserOnly: true, Stdout: new(nopWriter)})
	if err != nil {
		t.Fatal(err)
	}
	src, why := s.OffCPU()
	if src != OffCPUWaitProbes || !strings.Contains(why, "user space only") || !strings.Contains(why, "100 Hz, 16 threads") {
		t.Errorf("OffCPU() = %q, %q", src, why)
	}
	if len(s.groups) != 1 || s.prober == nil {
		t.Errorf("%d groups, prober %v", len(s.groups), s.prober != nil)
	}
	s.Close()
	if s.prober != nil {
		t.Error("the prober outlived Close")
	}
}

// TestOffCPUReconfigure: OffCPU turned on, switched to the probes, and off
// again while the target runs: each configuration hands on what it should,
// and nothing off-CPU comes once it is off.
func TestOffCPUReconfigure(t *testing.T) {
	skipIfNoPerf(t)
	bin, _ := buildSleeper(t)
	// Sleeps for as long as the phases below take: each waits for
	// records of a few of them.
	s, err := Open(Config{Argv: []string{bin, "100", "20"}, UserStack: 1024, Stdout: new(nopWriter)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if src, _ := s.OffCPU(); src != "" || len(s.groups) != 1 {
		t.Fatalf("OffCPU() %q, %d groups without Config.OffCPU", src, len(s.groups))
	}
	var switches, switchSamples, probes int
	take := func(b *Batch) {
		for _, r := range b.Records {
			switch {
			case r.Kind == KindSwitch:
				switches++
			case r.Kind == KindSample && r.Probed:
				probes++
			case r.Kind == KindSample && r.OffCPU:
				switchSamples++
			}
		}
	}
	// until reads batches until done says so; the target ending first
	// fails the phase.
	until := func(phase string, done func() bool) {
		t.Helper()
		readUntil(t, s, take, done, func() string {
			return fmt.Sprintf("%s: the target ended first (%d switches, %d switch samples, %d probes)", phase, switches, switchSamples, probes)
		})
	}
	reconfigure := func(change func(*Config)) {
		t.Helper()
		b, err := s.ReconfigureWith(change)
		take(b)
		if err != nil {
			t.Fatal(err)
		}
		switches, switchSamples, probes = 0, 0, 0
	}

	reconfigure(func(c *Config) { c.OffCPU = true })
	if src, _ := s.OffCPU(); src != OffCPUSwitchSamples {
		t.Skipf("off-CPU stacks from %q here", src)
	}
	until("on", func() bool { return switches >= 6 && switchSamples >= 3 })
	if probes != 0 || s.prober != nil {
		t.Errorf("%d probes with switch samples", probes)
	}

	reconfigure(func(c *Config) { c.OffCPUProbe = true })
	if src, _ := s.OffCPU(); src != OffCPUWaitProbes || s.prober == nil || len(s.groups) != 1 {
		t.Errorf("OffCPUProbe: OffCPU() %q, prober %v, %d groups", src, s.prober != nil, len(s.groups))
	}
	until("probes", func() bool { return switches >= 6 && probes >= 3 })
	if switchSamples != 0 {
		t.Errorf("%d switch samples with the probes", switchSamples)
	}

	reconfigure(func(c *Config) { c.OffCPU, c.OffCPUProbe = false, false })
	if src, _ := s.OffCPU(); src != "" || s.prober != nil || len(s.groups) != 1 {
		t.Errorf("off: OffCPU() %q, prober %v, %d groups", src, s.prober != nil, len(s.groups))
	}
	if a := s.groups[0].leader; a.Bits&unix.PerfBitContextSwitch != 0 {
		t.Errorf("off: primary leader bits %#x", a.Bits)
	}
	// The target's remaining sleeps: nothing off-CPU comes.
	if err := s.Run(context.Background(), take); err != nil {
		t.Fatal(err)
	}
	if switches+switchSamples+probes != 0 {
		t.Errorf("off: %d switches, %d switch samples, %d probes", switches, switchSamples, probes)
	}
}

// readUntil hands s's batches to take until done says so; the target ending
// first fails the test with ended's words.
func readUntil(t *testing.T, s *Session, take func(*Batch), done func() bool, ended func() string) {
	t.Helper()
	for !done() {
		b, err := s.Next(context.Background())
		take(b)
		if errors.Is(err, io.EOF) {
			t.Fatal(ended())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
