//go:build linux

package sampler

// Off-CPU stacks (Config.OffCPU): which source the session takes them from,
// context-switch samples or the wait probes, and what the Next goroutine
// shares with the probes.

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// OffCPU says where the off-CPU stacks come from: "" when Config.OffCPU is
// off, OffCPUSwitchSamples (the kernel samples every switch out), or
// OffCPUWaitProbes with why the kernel's samples are not used and what the
// probes cost.
func (s *Session) OffCPU() (source, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offCPU.source, s.offCPU.why
}

// syncOffCPU starts or stops the wait probes as the configuration in force,
// the kernel's permissions, as opening the events found them, and switch
// samples turned off (SetSwitchSamples) want, and keeps what OffCPU says.
// Call it once the events are open.
func (s *Session) syncOffCPU() {
	if s.prober != nil {
		s.prober.halt()
		s.prober = nil
	}
	var source, why string
	switch {
	case s.SwitchSamplesOn():
		source = OffCPUSwitchSamples
	case s.waitProbes():
		source, why = OffCPUWaitProbes, s.waitProbesWhy()
		s.prober = s.startWaitProber()
	}
	s.mu.Lock()
	s.offCPU.source, s.offCPU.why = source, why
	s.mu.Unlock()
}

// waitProbesWhy says why the probes are used, and at what cost.
func (s *Session) waitProbesWhy() string {
	hz := s.cfg.ProbeHz
	if hz <= 0 {
		hz = DefaultProbeHz
	}
	how := fmt.Sprintf("blocked threads' user stacks are read from /proc at %d Hz, %d threads a look", hz, MaxProbeThreads)
	switch {
	case s.cfg.OffCPUProbe:
		return "asked for: " + how
	case s.switchSamples():
		return "switch samples are turned off (a stack copy at every switch costs a switch-heavy target most of its speed): " + how
	case s.cfg.UserOnly:
		return "user space only was asked for: the kernel drops context-switch samples of user-only events, so " + how
	}
	return fmt.Sprintf("kernel samples are not permitted (perf_event_paranoid %s): the kernel drops context-switch samples of user-only events, so %s", paranoid(), how)
}

// SetSwitchSamples turns the switch samples off, the wait probes taking the
// off-CPU stacks instead, or back on, while the target runs and without
// reopening any event: a target that switches faster than its stacks can
// be copied at each switch keeps its speed, and its switch records, which
// stay exact. Call it from the goroutine that calls Next, as Reconfigure.
//
// Off disables every context-switches event the session holds (each
// thread's, followed threads one by one) and starts the probes; on stops the
// probes and enables the events again. The kernel carries the state to
// every inherited copy, those of threads created later included (a copy
// is made in its parent's state), and followed threads are opened in it.
// The change drops nothing: what was taken before it, switch samples or
// probes, comes in the batches Next returns after it, in time order. The
// state stays across ReconfigureWith until changed here; OffCPU says
// which source is in force, and SwitchSamplesOn whether switch samples are.
//
// Where no switch samples are taken at all (no Config.OffCPU,
// Config.OffCPUProbe, kernel samples not permitted) it does nothing and
// returns nil: the wait probes, if any, run anyway. An error is the first
// ioctl that failed; the others are made all the same.
func (s *Session) SetSwitchSamples(on bool) error {
	if s.closed || !s.switchSamples() || s.switchOff == !on {
		return nil
	}
	s.switchOff = !on
	var first error
	if on {
		// The probes stop first: what they took until now is queued,
		// and handed on as the rings catch up with it (takeProbes).
		s.stopWaitProber()
		first = s.ioctlSwitchLeaders(unix.PERF_EVENT_IOC_ENABLE)
	} else {
		first = s.ioctlSwitchLeaders(unix.PERF_EVENT_IOC_DISABLE)
	}
	s.syncOffCPU()
	return first
}

// SwitchSamplesOn reports whether off-CPU stacks come from switch samples:
// Config.OffCPU where the kernel allows them, not turned off.
func (s *Session) SwitchSamplesOn() bool { return s.switchSamples() && !s.switchOff }

// SwitchSamplesAllowed reports whether switch samples can be had at all:
// off-CPU time is recorded, the kernel allows kernel samples and the probes
// were not asked for. SetSwitchSamples changes nothing otherwise.
func (s *Session) SwitchSamplesAllowed() bool { return s.switchSamples() }

// ioctlSwitchLeaders enables or disables every context-switches event. Not
// as a group (PERF_IOC_FLAG_GROUP), which it is alone in anyway: the ioctl
// then reaches the event and each inherited copy (perf_event_for_each_child).
func (s *Session) ioctlSwitchLeaders(req uint) error {
	var first error
	for fd := range s.leaders {
		if !s.switchLeader(fd) {
			continue
		}
		if err := unix.IoctlSetInt(fd, req, 0); err != nil && first == nil {
			first = fmt.Errorf("switch samples: %w", err)
		}
	}
	return first
}

// switchLeader reports whether fd is a context-switches event.
func (s *Session) switchLeader(fd int) bool {
	ref, ok := s.ids[s.fdID[fd]]
	return ok && s.groups[ref.Group].format.OffCPU
}

// stopWaitProber stops the probes: for good (Close, DetachEvents), or
// until syncOffCPU starts them again.
func (s *Session) stopWaitProber() {
	if s.prober != nil {
		s.prober.halt()
		s.prober = nil
	}
}

// takeProbes adds to b the probes' records that the rings' records have
// caught up with, and keeps the probes' view of the target current.
func (s *Session) takeProbes(b *Batch) {
	if s.probeQ == nil {
		return
	}
	s.stats.probes.Add(uint64(s.probeQ.take(b, s.horizon)))
	p := s.prober
	if p == nil {
		return
	}
	s.publishProcs()
	if err := p.refused.Load(); err != nil {
		s.note(fmt.Sprintf("wait probes: reading the target's threads in /proc is refused (%v): it takes the rights ptrace would (the same user and kernel.yama.ptrace_scope, or CAP_SYS_PTRACE)", *err))
	}
}

// publishProcs gives the probes the target's processes as they are now,
// when they changed: the Next goroutine owns them.
func (s *Session) publishProcs() {
	if cur := s.procList.Load(); cur != nil && len(*cur) == len(s.procs) &&
		!slices.ContainsFunc(*cur, func(pid int) bool { return !s.procs[pid] }) {
		return
	}
	list := s.processes()
	s.procList.Store(&list)
}
