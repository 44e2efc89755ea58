//go:build linux

package sampler

// Event attributes: the perf_event_attr of each event group, built from the
// configuration in force (sample and read formats, rates, inheritance, uprobe
// events through tracefs or the uprobe PMU), and the choice between
// inherited events and following threads one by one that uprobes force.

import (
	"fmt"
	"os"
	"slices"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// groupAttrs is one group's attrs, ready for perf_event_open.
type groupAttrs struct {
	name     string
	leader   unix.PerfEventAttr
	members  []unix.PerfEventAttr
	names    []string
	format   Format
	entry    bool // the leader is a uprobe at a function's entry
	copies   bool // the leader copies Config.UserStack bytes of stack (SetUserStacks may change it per thread)
	allTasks bool
	paths    [][]byte // uprobe paths: config1 points into them
}

// buildAttrs turns the configured groups into attrs. Only the first group
// asks for sideband records (mmap, comm, task): one copy of each is enough.
func (s *Session) buildAttrs() error {
	s.groups = s.groups[:0]
	// The probes of the attrs replaced are released after the new ones
	// are acquired, so that those both use stay in tracefs.
	prevHeld := s.held
	s.held = nil
	defer func() { s.probes.release(prevHeld) }()
	for gi, g := range s.cfg.groups() {
		var ga groupAttrs
		ga.name = g.Leader.Name
		a := unix.PerfEventAttr{
			Size:        uint32(unsafeSizeofAttr),
			Sample_type: sampleIdentifier | sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleRead | sampleCallchain,
			Read_format: readGroup | readID | readTotalTimeEnabled | readTotalTimeRunning,
			Bits:        unix.PerfBitSampleIDAll | unix.PerfBitWatermark | unix.PerfBitExcludeHv,
		}
		if gi == 0 {
			a.Bits |= unix.PerfBitMmap | unix.PerfBitComm | unix.PerfBitTask | unix.PerfBitMmap2 | unix.PerfBitCommExec
			if s.cfg.OffCPU {
				// A record at every switch of a target's task, in and
				// out: the off-CPU time.
				a.Bits |= unix.PerfBitContextSwitch
			}
		}
		useMonotonic(&a)
		if gi == 0 && s.cfg.NoGroupRead && len(g.Members) == 0 {
			// Since Linux 6.12 an inherited event may read its group on
			// every sample, but the scheduler then cannot swap two
			// threads' like contexts at a switch and moves every event
			// out and in: a target switching 300,000 times a second ran
			// at 45% of its speed. Nothing to read, nothing to pay.
			a.Sample_type &^= sampleRead
		}
		if err := s.setEvent(&a, g.Leader, &ga); err != nil {
			return err
		}
		if gi == 0 || g.Leader.UprobePath != "" {
			// At a function's entry the caller's frame pointer is still in
			// BP, so a frame-pointer walk skips the caller; its return
			// address is the word at SP. Sample the frame pointer and the
			// two top stack words: probe samples sit at entries, and clock
			// samples land there while a counting uprobe is handled, also a
			// while after its event is closed (the kernel unregisters the
			// probe later).
			a.Sample_type |= sampleRegsUser | sampleStackUser
			a.Sample_regs_user = entryRegsMask
			a.Sample_stack_user = 16
			ga.entry = g.Leader.UprobePath != ""
			if gi == 0 && s.cfg.UserStack > 0 && unwindRegsMask != 0 {
				a.Sample_regs_user = unwindRegsMask
				a.Sample_stack_user = stackAttrSize(s.cfg.UserStack)
				ga.copies = true
			}
		}
		if gi == 0 && s.cfg.BranchStack != 0 {
			a.Sample_type |= sampleBranch
			a.Branch_sample_type = s.cfg.BranchStack
		}
		// Probe events in tracefs are inherited like any event, so a
		// probe-led group follows the target's threads itself; only
		// uprobe PMU leaders need to watch every task. System-wide,
		// every group watches every task, on each CPU: nothing to
		// inherit. The idle task is no process: a clock would sample
		// every idle CPU at the full rate. Software events only: arm64's
		// PMU refuses exclude_idle, and its cycles stop in idle anyway.
		ga.allTasks = g.AllTasks && gi > 0 && !s.probes.usable() && !s.cfg.AllProcesses
		switch {
		case s.cfg.AllProcesses && a.Type == unix.PERF_TYPE_SOFTWARE:
			a.Bits |= unix.PerfBitExcludeIdle
		case !s.cfg.AllProcesses && !s.cfg.Follow && !ga.allTasks:
			a.Bits |= unix.PerfBitInherit
		}
		if s.excludeK {
			a.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeCallchainKernel
		}
		var fixed uint64
		if g.Period > 0 {
			// With PERIOD in the sample type and a fixed period, the
			// kernel's software and tracepoint events (uprobes among them)
			// ignore the period and write a sample on every event
			// (perf_swevent_event): a calls trigger of 1000 became a
			// sample per call. Without it, each sample's period is the
			// configured one, as it is for hardware and clock events.
			a.Sample = g.Period
			a.Sample_type &^= samplePeriod
			fixed = g.Period
		} else {
			a.Sample = g.Freq
			a.Bits |= unix.PerfBitFreq
		}
		// Wake the reader when a quarter of the ring is full (or what
		// WakeupDiv says); the poll timeout bounds latency at low rates.
		div := s.cfg.WakeupDiv
		if div < 2 {
			div = 4
		}
		a.Wakeup = uint32(s.cfg.RingPages * os.Getpagesize() / div)
		ga.leader = a
		ga.format = Format{SampleType: a.Sample_type, ReadFormat: a.Read_format, SampleIDAll: true,
			RegsUser: a.Sample_regs_user, EntryProbe: ga.entry, Period: fixed, BranchType: a.Branch_sample_type}
		for _, m := range g.Members {
			// A member keeps its leader's clock: the kernel refuses a
			// group whose events' clocks differ.
			ma := unix.PerfEventAttr{Size: a.Size, Read_format: a.Read_format, Clockid: a.Clockid,
				Bits: a.Bits & (unix.PerfBitInherit | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv | unix.PerfBitUseClockID)}
			if err := s.setEvent(&ma, m, &ga); err != nil {
				return err
			}
			ga.members = append(ga.members, ma)
			ga.names = append(ga.names, m.Name)
		}
		s.groups = append(s.groups, ga)
	}
	if s.switchSamples() {
		s.groups = append(s.groups, switchSampleAttrs(&s.groups[0]))
	}
	// All groups share the sample_id layout, so sideband records decode
	// with the first group's format whatever event wrote them.
	s.decoder = newDecoder(s.groups[0].format)
	return nil
}

// switchSamples reports whether off-CPU stacks are sampled at context
// switches: the kernel takes those samples in the kernel (in __schedule), and
// drops them all from events that exclude it (perf_exclude_event), so
// without kernel samples the wait probes (waitprobe.go) read them instead.
func (s *Session) switchSamples() bool {
	return s.cfg.OffCPU && !s.cfg.OffCPUProbe && !s.excludeK
}

// waitProbes reports whether off-CPU stacks come from the wait probes: where
// there are no switch samples, or while they are turned off.
func (s *Session) waitProbes() bool { return s.cfg.OffCPU && (!s.switchSamples() || s.switchOff) }

// switchSampleAttrs is the group that samples the context-switches software
// event on switches of the target's tasks, each sample of the
// thread leaving the CPU: its kernel stack ends in the scheduler, its user
// part is the blocking call's. It carries what the primary group's samples
// do (registers, stack copy, group read) so that it is unwound the same way,
// and follows the target's tasks as the primary group does (inherited, or
// opened per thread), wherever that is opened.
//
// Every switch out is sampled (period 1). A switch-heavy target is spared
// by turning the group off (SetSwitchSamples), not by a longer period: a
// new period means reopening the events, which on a running target are
// opened per thread, and the scheduler can then no longer swap the threads'
// cloned contexts at a switch, which halves such a target's speed for the
// rest of the run; PERF_EVENT_IOC_PERIOD would reach the parent event only,
// not its inherited copies.
func switchSampleAttrs(primary *groupAttrs) groupAttrs {
	p := &primary.leader
	a := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CONTEXT_SWITCHES,
		Size:   p.Size,
		Sample: 1,
		// A fixed period: no PERIOD field (see buildAttrs), and the
		// software PMU has no branch records.
		// No group read either: the switch samples' counts mean nothing,
		// and reading them would cost every switch (see buildAttrs).
		Sample_type:       p.Sample_type &^ (samplePeriod | sampleBranch | sampleRead),
		Read_format:       p.Read_format,
		Sample_regs_user:  p.Sample_regs_user,
		Sample_stack_user: p.Sample_stack_user,
		Wakeup:            p.Wakeup,
		Bits:              unix.PerfBitSampleIDAll | unix.PerfBitWatermark | unix.PerfBitExcludeHv | p.Bits&unix.PerfBitInherit,
	}
	useMonotonic(&a)
	return groupAttrs{name: "context-switches", leader: a,
		format: Format{SampleType: a.Sample_type, ReadFormat: a.Read_format, SampleIDAll: true,
			RegsUser: a.Sample_regs_user, Period: 1, OffCPU: true}}
}

// useMonotonic times a's records with CLOCK_MONOTONIC instead of the perf
// clock, so that they compare with the times the wait probes take with
// clock_gettime and with the timestamps JIT runtimes write into their
// jitdump files (code loaded at an address at a time: perf record -k mono
// for the same reason). Every event of every group must: records of
// different clocks sort into nonsense.
func useMonotonic(a *unix.PerfEventAttr) {
	a.Bits |= unix.PerfBitUseClockID
	a.Clockid = unix.CLOCK_MONOTONIC
}

// setEvent fills the event-selecting fields of a for spec.
func (s *Session) setEvent(a *unix.PerfEventAttr, spec EventSpec, ga *groupAttrs) error {
	if spec.UprobePath == "" {
		a.Type, a.Config, a.Ext1, a.Ext2 = spec.Type, spec.Config, spec.Config1, spec.Config2
		return nil
	}
	if _, err := UprobeType(); err != nil {
		return err
	}
	if s.probes.usable() {
		id, err := s.probes.acquire(spec.UprobePath, spec.UprobeOffset)
		if err != nil {
			return err
		}
		s.held = append(s.held, id)
		a.Type, a.Config = unix.PERF_TYPE_TRACEPOINT, id
		return nil
	}
	return s.setEventPMU(a, spec, ga)
}

// setEventPMU makes a a uprobe PMU event for spec.
func (s *Session) setEventPMU(a *unix.PerfEventAttr, spec EventSpec, ga *groupAttrs) error {
	typ, err := UprobeType()
	if err != nil {
		return err
	}
	path := append([]byte(spec.UprobePath), 0)
	ga.paths = append(ga.paths, path) // Go's heap does not move: the pointer stays valid
	uprobeAttr(a, typ, path, spec.UprobeOffset)
	return nil
}

// stackAttrSize is the attr's sample_stack_user for a copy of n bytes: the
// kernel wants a multiple of 8.
func stackAttrSize(n int) uint32 { return uint32(min(max(n, 8)+7, MaxUserStack) &^ 7) }

// uprobeAttr fills the uprobe PMU's attr fields: config1 carries a pointer
// to the binary's path as a C string, config2 the file offset. The caller
// keeps path alive (runtime.KeepAlive) until perf_event_open returns.
func uprobeAttr(a *unix.PerfEventAttr, typ uint32, path []byte, offset uint64) {
	a.Type = typ
	a.Ext1 = uint64(uintptr(unsafe.Pointer(&path[0])))
	a.Ext2 = offset
}

const unsafeSizeofAttr = unsafe.Sizeof(unix.PerfEventAttr{})

// hasUprobe reports whether any event of g is a uprobe.
func (g Group) hasUprobe() bool {
	return g.Leader.UprobePath != "" || slices.ContainsFunc(g.Members, func(e EventSpec) bool { return e.UprobePath != "" })
}

// followForUprobes switches to following threads one by one when any event
// is a uprobe: the kernel sets up an inherited uprobe event by reading its
// path (config1) again, as a user pointer, in the memory of the task that is
// creating a thread, where it points at nothing, and the target's clone
// fails with EFAULT.
func (s *Session) followForUprobes() {
	if slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) {
		s.ensureProbes()
		if !s.probes.usable() && !s.probes.told {
			s.probes.told = true
			s.note("uprobes go through the uprobe PMU, whose events close slowly and cannot follow new threads: " + s.probes.why)
		}
	}
	if s.cfg.AllProcesses {
		return // events per CPU for every task: no thread to follow
	}
	if s.cfg.Follow {
		if s.followAuto && !s.perThreadUprobes() {
			// No uprobe left to follow threads for: back to inheritance,
			// which samples a new thread from its first instruction.
			s.cfg.Follow, s.cfg.PollInterval, s.followAuto = false, s.pollBefore, false
		}
		return
	}
	if s.perThreadUprobes() {
		s.followAuto, s.pollBefore = true, s.cfg.PollInterval
		s.cfg.Follow = true
		s.note(fmt.Sprintf("uprobe events cannot be inherited by new threads: cctop opens events on each new thread itself, within about %v of its creation", followPoll))
		// A new thread runs unsampled until its FORK record is read,
		// and sideband records wake no reader: poll often. Not too
		// often: every wake-up of an idle Go process costs (the
		// runtime's sysmon thread wakes with it), and a 2 ms poll
		// alone took 1.8% of a core here.
		if s.cfg.PollInterval > followPoll {
			s.cfg.PollInterval = followPoll
		}
	}
}

// followPoll is how often the rings are read while threads are followed.
const followPoll = 10 * time.Millisecond

// perThreadUprobes reports whether any event opened per thread is a uprobe.
func (s *Session) perThreadUprobes() bool {
	if s.probes.usable() {
		return false
	}
	for gi, g := range s.cfg.groups() {
		if !(g.AllTasks && gi > 0) && g.hasUprobe() {
			return true
		}
	}
	return false
}
