//go:build linux

package sampler

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSwitchToggleNoop: without switch samples (no OffCPU, the probes asked
// for, user space only) SetSwitchSamples does nothing and says nothing.
func TestSwitchToggleNoop(t *testing.T) {
	for _, s := range []*Session{
		{cfg: Config{}},
		{cfg: Config{OffCPU: true, OffCPUProbe: true}},
		{cfg: Config{OffCPU: true}, excludeK: true},
	} {
		for _, on := range []bool{false, true} {
			if err := s.SetSwitchSamples(on); err != nil {
				t.Errorf("%+v: SetSwitchSamples(%v): %v", s.cfg, on, err)
			}
			if s.switchOff || s.prober != nil || s.SwitchSamplesOn() {
				t.Errorf("%+v: SetSwitchSamples(%v) changed something: off %v, prober %v", s.cfg, on, s.switchOff, s.prober != nil)
			}
		}
	}
}

// TestSwitchToggleAttrs: switch samples turned off, a thread's
// context-switches event opens disabled (a followed thread starts off) and
// the other groups' do not; the probes take the stacks.
func TestSwitchToggleAttrs(t *testing.T) {
	s := &Session{cfg: Config{Leader: namedEvents["cpu-clock"], Freq: 999, UserStack: 1024, RingPages: 8, OffCPU: true, Follow: true}}
	if err := s.buildAttrs(); err != nil {
		t.Fatal(err)
	}
	disabled := func(gi int) bool {
		a := s.threadAttr(&s.groups[gi], 0)
		return a.Bits&unix.PerfBitDisabled != 0
	}
	if len(s.groups) != 2 || disabled(0) || disabled(1) || !s.SwitchSamplesOn() || s.waitProbes() {
		t.Fatalf("on: %d groups, disabled %v %v, switch samples %v, probes %v", len(s.groups), disabled(0), disabled(1), s.SwitchSamplesOn(), s.waitProbes())
	}
	s.switchOff = true
	if disabled(0) || !disabled(1) || s.SwitchSamplesOn() || !s.waitProbes() {
		t.Errorf("off: disabled %v %v, switch samples %v, probes %v", disabled(0), disabled(1), s.SwitchSamplesOn(), s.waitProbes())
	}
	s.opening = true
	if !disabled(0) || !disabled(1) {
		t.Errorf("opening: disabled %v %v", disabled(0), disabled(1))
	}
}

// buildLateThread compiles testdata/latethread.c.
func buildLateThread(t *testing.T) string {
	return gccBuild(t, "testdata/latethread.c", "-O0", "-fno-omit-frame-pointer", "-pthread")
}

// switchCounts sums what the session's context-switches events have
// counted and how long they have been enabled, their inherited copies'
// included (a read of an inherited event adds its copies'): both stand
// still while every one of them is disabled.
func switchCounts(t *testing.T, s *Session) (count, enabled uint64, fds int) {
	t.Helper()
	// nr, time enabled, time running, then the leader's value and ID.
	var buf [40]byte
	for fd := range s.leaders {
		if !s.switchLeader(fd) {
			continue
		}
		n, err := unix.Read(fd, buf[:])
		if err != nil || n != len(buf) {
			t.Fatalf("reading a context-switches event: %d bytes, %v", n, err)
		}
		enabled += binary.NativeEndian.Uint64(buf[8:])
		count += binary.NativeEndian.Uint64(buf[24:])
		fds++
	}
	return count, enabled, fds
}

func TestSwitchToggle(t *testing.T)       { testSwitchToggle(t, false) }
func TestSwitchToggleFollow(t *testing.T) { testSwitchToggle(t, true) }

// testSwitchToggle: switch samples turned off and on while a target
// sleeps. Off, no switch sample is taken (none timed after the change),
// the probes take the stacks and the switch records go on; a thread the
// target starts then takes none either, its events inherited from a
// disabled one (or, followed, opened disabled), and every context-switches
// event stands still, through Pause and Resume too. On again, switch
// samples come back, the late thread's among them, and no probe is taken.
// Off once more, a Reconfigure keeps them off.
func testSwitchToggle(t *testing.T, follow bool) {
	skipIfNoPerf(t)
	bin := buildLateThread(t)
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	// Up to 60 s of 20 ms sleeps: longer than the phases below take.
	s, err := Open(Config{Argv: []string{bin, "3000", "20"}, OffCPU: true, Follow: follow, UserStack: 1024,
		Stdin: in, Stdout: new(nopWriter)})
	in.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if src, why := s.OffCPU(); src != OffCPUSwitchSamples || !s.SwitchSamplesOn() {
		t.Skipf("off-CPU stacks from %q here: %s", src, why)
	}
	if s.Followed() != follow {
		t.Skipf("followed %v, asked %v", s.Followed(), follow)
	}
	pid := s.PID()

	// The records timed after since, counted from the last mark.
	var (
		since                             uint64
		late                              uint32 // the thread started on request
		switches, lateSwitches            int
		switchSamples, lateSamples, probe int
		stale                             int // off-CPU samples taken before since, handed on after it
	)
	take := func(b *Batch) {
		for i := range b.Records {
			r := &b.Records[i]
			if r.Kind == KindFork && int(r.PID) == pid && r.TID != r.PID {
				late = r.TID
			}
			if int(r.PID) != pid {
				continue
			}
			if r.Time <= since {
				if r.Kind == KindSample && r.OffCPU {
					stale++
				}
				continue
			}
			switch {
			case r.Kind == KindSwitch && r.SwitchOut():
				switches++
				if r.TID == late {
					lateSwitches++
				}
			case r.Kind == KindSample && r.Probed:
				probe++
			case r.Kind == KindSample && r.OffCPU:
				switchSamples++
				if r.TID == late {
					lateSamples++
				}
			}
		}
	}
	mark := func() {
		since = monoNow()
		switches, lateSwitches, switchSamples, lateSamples, probe, stale = 0, 0, 0, 0, 0, 0
	}
	until := func(phase string, done func() bool) {
		t.Helper()
		readUntil(t, s, take, done, func() string {
			return fmt.Sprintf("%s: the target ended first (%d switches, %d of the late thread; %d switch samples, %d of the late thread; %d probes)",
				phase, switches, lateSwitches, switchSamples, lateSamples, probe)
		})
	}
	toggle := func(on bool) {
		t.Helper()
		start := time.Now()
		err := s.SetSwitchSamples(on)
		took := time.Since(start)
		mark()
		if err != nil {
			t.Fatal(err)
		}
		_, _, fds := switchCounts(t, s)
		t.Logf("SetSwitchSamples(%v): %v for %d context-switches events", on, took, fds)
		src, why := s.OffCPU()
		if on && (src != OffCPUSwitchSamples || why != "" || !s.SwitchSamplesOn() || s.prober != nil) {
			t.Errorf("on: OffCPU() %q, %q; SwitchSamplesOn %v, prober %v", src, why, s.SwitchSamplesOn(), s.prober != nil)
		}
		if !on && (src != OffCPUWaitProbes || why == "" || s.SwitchSamplesOn() || s.prober == nil) {
			t.Errorf("off: OffCPU() %q, %q; SwitchSamplesOn %v, prober %v", src, why, s.SwitchSamplesOn(), s.prober != nil)
		}
	}

	until("on", func() bool { return switches >= 6 && switchSamples >= 3 })
	if probe != 0 {
		t.Errorf("on: %d probes", probe)
	}
	// What the ioctls alone take, SetSwitchSamples starting or stopping
	// the probes' goroutine besides.
	start := time.Now()
	errOff := s.ioctlSwitchLeaders(unix.PERF_EVENT_IOC_DISABLE)
	off := time.Since(start)
	start = time.Now()
	errOn := s.ioctlSwitchLeaders(unix.PERF_EVENT_IOC_ENABLE)
	on := time.Since(start)
	if errOff != nil || errOn != nil {
		t.Fatalf("ioctls: %v, %v", errOff, errOn)
	}
	_, _, fds := switchCounts(t, s)
	t.Logf("ioctls alone on %d context-switches events: disable %v, enable %v", fds, off, on)

	toggle(false)
	_, why := s.OffCPU()
	t.Logf("off: %s", why)
	count, enabled, _ := switchCounts(t, s)
	// The late thread starts now, its parent's events disabled.
	if _, err := feed.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	until("off", func() bool { return late != 0 && lateSwitches >= 4 && switches >= 8 && probe >= 3 })
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	n := switches
	until("off, resumed", func() bool { return switches >= n+4 })
	t.Logf("off: %d switch outs (%d of the late thread %d), %d probes, %d off-CPU samples taken before", switches, lateSwitches, late, probe, stale)
	if switchSamples != 0 {
		t.Errorf("off: %d switch samples taken after SetSwitchSamples(false), %d of the late thread", switchSamples, lateSamples)
	}
	if c, e, _ := switchCounts(t, s); c != count || e != enabled {
		t.Errorf("off: the context-switches events went on: count %d -> %d, enabled %d -> %d ns", count, c, enabled, e)
	}
	if follow {
		if _, ok := s.tidFDs[int(late)]; !ok {
			t.Errorf("the late thread %d has no events of its own", late)
		}
	}

	toggle(true)
	until("on again", func() bool { return switches >= 6 && switchSamples >= 3 && lateSamples >= 2 })
	t.Logf("on again: %d switch outs, %d switch samples (%d of the late thread), %d stale", switches, switchSamples, lateSamples, stale)
	if probe != 0 {
		t.Errorf("on again: %d probes taken after SetSwitchSamples(true)", probe)
	}
	if c, e, _ := switchCounts(t, s); c <= count || e <= enabled {
		t.Errorf("on again: the context-switches events stand still: count %d -> %d, enabled %d -> %d ns", count, c, enabled, e)
	}

	toggle(false)
	b, err := s.ReconfigureWith(func(c *Config) { c.Freq = 499 })
	take(b)
	if err != nil {
		t.Fatal(err)
	}
	if src, _ := s.OffCPU(); src != OffCPUWaitProbes || s.SwitchSamplesOn() || s.prober == nil {
		t.Errorf("reconfigured: OffCPU() %q, SwitchSamplesOn %v, prober %v", src, s.SwitchSamplesOn(), s.prober != nil)
	}
	until("reconfigured", func() bool { return switches >= 8 && lateSwitches >= 4 && probe >= 3 })
	if switchSamples != 0 {
		t.Errorf("reconfigured: %d switch samples", switchSamples)
	}
	if c, e, fds := switchCounts(t, s); c != 0 || e != 0 || fds == 0 {
		t.Errorf("reconfigured: %d context-switches events counted %d switches, enabled %d ns", fds, c, e)
	}
}
