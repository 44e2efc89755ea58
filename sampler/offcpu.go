//go:build linux

package sampler

// Off-CPU stacks (Config.OffCPU): which source the session takes them from,
// context-switch samples or the wait probes, and what the Next goroutine
// shares with the probes.

import (
	"fmt"
	"slices"
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

// syncOffCPU starts or stops the wait probes as the configuration in force
// and the kernel's permissions, as opening the events found them, want, and
// keeps what OffCPU says. Call it once the events are open.
func (s *Session) syncOffCPU() {
	if s.prober != nil {
		s.prober.halt()
		s.prober = nil
	}
	var source, why string
	switch {
	case s.switchSamples():
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
	case s.cfg.UserOnly:
		return "user space only was asked for: the kernel drops context-switch samples of user-only events, so " + how
	}
	return fmt.Sprintf("kernel samples are not permitted (perf_event_paranoid %s): the kernel drops context-switch samples of user-only events, so %s", paranoid(), how)
}

// stopWaitProber stops the probes for good (Close, DetachEvents).
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
