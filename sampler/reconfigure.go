//go:build linux

package sampler

// Reconfiguration and pause: replacing every event with those of a new
// configuration while the target runs, and stopping and starting sampling.

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Reconfigure replaces the counters read with the primary group (to arm
// other uprobes, say) without stopping the target: see ReconfigureWith.
func (s *Session) Reconfigure(members []EventSpec) (*Batch, error) {
	return s.ReconfigureWith(func(c *Config) { c.Members = members })
}

// ReconfigureWith changes the sampling configuration (rate, trigger,
// counters) without stopping the target: the records of the old events not
// yet handed on are returned in a batch, as Next returns them, every event is
// closed, and new ones, set up by change, are opened on every live thread of
// the target and of the child processes it started. Counters of the new set
// start from zero on each thread. When the new set cannot be opened, the old
// one is opened again and the error says so; the batch is the old events'
// records all the same. The target and its processes stay as they were, and
// so do switch samples turned off (SetSwitchSamples): they stay off.
//
// Reopening costs a switch-heavy target: events opened on a running
// target are opened per thread, and the scheduler no longer swaps the
// threads' cloned contexts at a switch (see switchSampleAttrs).
func (s *Session) ReconfigureWith(change func(*Config)) (*Batch, error) {
	// The reader stays off the rings until the new ones are in place.
	s.readMu.Lock()
	defer s.readMu.Unlock()
	// The probes stop first, so that the drain hands on every record
	// they took under the old configuration (syncOffCPU restarts them).
	s.stopWaitProber()
	b := s.drainLocked()
	// Closing a uprobe event waits for the kernel to unregister it (about
	// 0.1 s each here, and there is one per thread, CPU and probe): stop the
	// old events now and let a goroutine close them, so the caller's
	// goroutine, which feeds the UI, does not stall for seconds.
	s.Pause()
	s.dropEvents()
	// OffCPU may have changed, or the kernel's permissions with the
	// events: the probes start, stop or restart with the new settings.
	defer s.syncOffCPU()
	prev := s.cfg
	change(&s.cfg)
	err := s.reopen()
	if err == nil || errors.Is(err, ErrNoProcess) {
		return b, err
	}
	// The new configuration cannot be opened (too many descriptors, a
	// probe the kernel refuses): sample on with the one before.
	s.dropEvents()
	s.cfg = prev
	if err2 := s.reopen(); err2 != nil {
		return b, fmt.Errorf("%w; reopening the previous configuration failed too: %v", err, err2)
	}
	return b, fmt.Errorf("%w (sampling goes on as before)", err)
}

// dropEvents hands every event and ring to a goroutine that closes them and
// leaves the session with none.
func (s *Session) dropEvents() {
	for fd := range s.ringOwners {
		unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	old := &Session{tidFDs: s.tidFDs, cpuFDs: s.cpuFDs, rings: s.rings, exitedFDs: s.exitedFDs, probes: s.probes, held: s.held}
	s.held = nil
	s.rings, s.ringFD, s.ringOwners, s.tidFDs, s.cpuFDs, s.exitedFDs = map[int]*ring{}, map[int]int{}, map[int]bool{}, map[int][]int{}, nil, nil
	s.publishRings()
	if len(old.held) > 0 {
		// Its tracefs probes are deleted once it is closed: Close waits.
		s.bg.Go(old.closeEvents)
	} else {
		go old.closeEvents()
	}
	s.ids, s.fdID, s.retired, s.retiring = map[uint64]EventRef{}, map[int]uint64{}, nil, nil
	s.leaders, s.root, s.heirs, s.rootEnded = map[int]bool{}, map[int]int{}, map[int]int{}, map[int]bool{}
	s.rootsRetired, s.rootsRetiring, s.unheired, s.unheiring = nil, nil, nil, nil
}

// reopen opens the configuration in force on every live thread.
func (s *Session) reopen() error {
	s.followForUprobes()
	s.storePoll()
	if err := s.buildAttrs(); err != nil {
		return err
	}
	s.generation++
	if s.cfg.AllProcesses {
		return s.openSystemWide()
	}
	return s.openAllThreads()
}

// Generation counts Reconfigure calls: records of a new generation carry
// counters that restarted from zero.
func (s *Session) Generation() int { return s.generation }

// Pause stops sampling on every thread, inherited copies included; Resume
// starts it again, but for switch samples turned off (SetSwitchSamples).
// The target runs on.
func (s *Session) Pause() error  { return s.ioctlLeaders(unix.PERF_EVENT_IOC_DISABLE) }
func (s *Session) Resume() error { return s.ioctlLeaders(unix.PERF_EVENT_IOC_ENABLE) }

func (s *Session) ioctlLeaders(req uint) error {
	var first error
	for fd := range s.leaders {
		if req == unix.PERF_EVENT_IOC_ENABLE && s.switchOff && s.switchLeader(fd) {
			continue
		}
		if err := unix.IoctlSetInt(fd, req, unix.PERF_IOC_FLAG_GROUP); err != nil && first == nil {
			first = err
		}
	}
	return first
}
