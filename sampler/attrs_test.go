//go:build linux

package sampler

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestOffCPUAttrs: Config.OffCPU adds the context-switch records to the
// primary group, times every event with CLOCK_MONOTONIC, and, where kernel
// samples are allowed and the probes were not asked for, adds the
// context-switches group after the configured ones, sampled on every switch
// with the primary group's registers and stack copy but no group read (it
// would cost every switch), kernel included,
// inherited as the primary group is. Without OffCPU none of it is there.
func TestOffCPUAttrs(t *testing.T) {
	member := namedEvents["task-clock"]
	extra := Group{Leader: namedEvents["task-clock"], Period: 1000}
	for _, c := range []struct {
		name                 string
		offCPU, probe        bool
		excludeK, follow     bool
		wantSwitchGroup      bool
		wantClock, wantSwRec bool
	}{
		{name: "off", wantClock: true},
		{name: "on", offCPU: true, wantSwitchGroup: true, wantClock: true, wantSwRec: true},
		{name: "on, followed", offCPU: true, follow: true, wantSwitchGroup: true, wantClock: true, wantSwRec: true},
		{name: "user only", offCPU: true, excludeK: true, wantClock: true, wantSwRec: true},
		{name: "probes asked", offCPU: true, probe: true, wantClock: true, wantSwRec: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Session{cfg: Config{Leader: namedEvents["cpu-clock"], Freq: 999, Members: []EventSpec{member},
				Extra: []Group{extra}, UserStack: 4096, RingPages: 64, BranchStack: 1,
				OffCPU: c.offCPU, OffCPUProbe: c.probe, Follow: c.follow}, excludeK: c.excludeK}
			if err := s.buildAttrs(); err != nil {
				t.Fatal(err)
			}
			want := 2
			if c.wantSwitchGroup {
				want = 3
			}
			if len(s.groups) != want {
				t.Fatalf("%d groups, want %d", len(s.groups), want)
			}
			if s.switchSamples() != c.wantSwitchGroup || s.waitProbes() != (c.offCPU && !c.wantSwitchGroup) {
				t.Errorf("switch samples %v, wait probes %v", s.switchSamples(), s.waitProbes())
			}
			p := s.groups[0].leader
			if got := p.Bits&unix.PerfBitContextSwitch != 0; got != c.wantSwRec {
				t.Errorf("context_switch on the primary leader: %v, want %v", got, c.wantSwRec)
			}
			for gi, g := range s.groups {
				for i, a := range append([]unix.PerfEventAttr{g.leader}, g.members...) {
					clock := a.Bits&unix.PerfBitUseClockID != 0
					if clock != c.wantClock || (clock && a.Clockid != unix.CLOCK_MONOTONIC) {
						t.Errorf("group %d event %d: use_clockid %v clockid %d, want %v", gi, i, clock, a.Clockid, c.wantClock)
					}
					if gi > 0 && a.Bits&unix.PerfBitContextSwitch != 0 {
						t.Errorf("group %d event %d asks for switch records too: they would come twice", gi, i)
					}
				}
			}
			// The descriptor budget counts the switch group on every CPU:
			// primary leader and member, the extra group, the switch group.
			s.cpus = []int{0, 1}
			wantFDs := 2 * 3
			if c.wantSwitchGroup {
				wantFDs = 2 * 4
			}
			if got := s.fdsPerThread(); got != wantFDs {
				t.Errorf("descriptors per thread: %d, want %d", got, wantFDs)
			}
			if !c.wantSwitchGroup {
				return
			}
			sw := s.groups[2]
			a := sw.leader
			if a.Type != unix.PERF_TYPE_SOFTWARE || a.Config != unix.PERF_COUNT_SW_CONTEXT_SWITCHES || a.Sample != 1 || a.Bits&unix.PerfBitFreq != 0 {
				t.Errorf("switch leader: type %d config %d sample %d bits %#x", a.Type, a.Config, a.Sample, a.Bits)
			}
			if a.Sample_type&(samplePeriod|sampleBranch|sampleRead) != 0 {
				t.Errorf("switch sample type %#x has PERIOD, BRANCH_STACK or READ", a.Sample_type)
			}
			if want := p.Sample_type &^ (samplePeriod | sampleBranch | sampleRead); a.Sample_type != want {
				t.Errorf("switch sample type %#x, want the primary's %#x without PERIOD, BRANCH_STACK and READ", a.Sample_type, want)
			}
			if a.Sample_regs_user != unwindRegsMask || a.Sample_stack_user != 4096 || a.Sample_regs_user != p.Sample_regs_user {
				t.Errorf("switch regs %#x stack %d, primary %#x %d", a.Sample_regs_user, a.Sample_stack_user, p.Sample_regs_user, p.Sample_stack_user)
			}
			if a.Bits&(unix.PerfBitExcludeKernel|unix.PerfBitExcludeCallchainKernel) != 0 {
				t.Errorf("switch group excludes the kernel: bits %#x", a.Bits)
			}
			if a.Bits&unix.PerfBitInherit != p.Bits&unix.PerfBitInherit || (a.Bits&unix.PerfBitInherit != 0) == c.follow {
				t.Errorf("switch inherit %v, primary %v, followed %v", a.Bits&unix.PerfBitInherit != 0, p.Bits&unix.PerfBitInherit != 0, c.follow)
			}
			if a.Bits&(unix.PerfBitMmap|unix.PerfBitComm|unix.PerfBitTask) != 0 {
				t.Errorf("switch group asks for sideband records: bits %#x", a.Bits)
			}
			f := sw.format
			if !f.OffCPU || f.Period != 1 || f.SampleType != a.Sample_type || f.RegsUser != a.Sample_regs_user || f.EntryProbe {
				t.Errorf("switch format %+v", f)
			}
			if sw.allTasks {
				t.Error("switch group opened for all tasks")
			}
		})
	}
}
