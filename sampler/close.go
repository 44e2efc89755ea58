//go:build linux

package sampler

// Closing: ending the session (its events, rings, probes and descriptors),
// or handing its events over to another process to close, and what closing
// them will cost.

import (
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Close closes every event and descriptor and unmaps every ring. A launched
// target still running is killed.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.stopWaitProber()
	s.bg.Wait()
	if s.cmd != nil && s.cmd.Process != nil && !s.exited.Load() {
		s.cmd.Process.Kill()
		<-s.waitErr
		s.exited.Store(true)
	}
	s.stopReader()
	s.readMu.Lock()
	s.ringList.Store(nil)
	s.closeEvents()
	s.readMu.Unlock()
	if s.pidfd >= 0 {
		unix.Close(s.pidfd)
	}
	if s.waiter != nil {
		s.waiter.close()
		s.epfd = -1
	}
	return nil
}

// closeEvents closes every event and unmaps every ring.
func (s *Session) closeEvents() {
	for _, fds := range s.tidFDs {
		closeAll(fds)
	}
	closeAll(s.cpuFDs)
	closeAll(s.exitedFDs)
	for _, r := range s.rings {
		r.close()
	}
	s.tidFDs, s.rings, s.ringFD, s.cpuFDs, s.leaders, s.exitedFDs = nil, nil, nil, nil, nil, nil
	s.probes.release(s.held)
	s.held = nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// DetachEvents stops every event, unmaps the rings and hands the events'
// descriptors over as files, so that another process can hold the last
// reference and pay for closing them, and the tracefs probes they use,
// which that process deletes (DeleteProbes) once it has closed them; the
// session keeps none. Call it after the last Next.
func (s *Session) DetachEvents() ([]*os.File, []string) {
	s.stopWaitProber()
	s.bg.Wait()
	s.Pause()
	var files []*os.File
	for _, fds := range s.tidFDs {
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "perf_event"))
		}
	}
	for _, fd := range append(s.cpuFDs, s.exitedFDs...) {
		files = append(files, os.NewFile(uintptr(fd), "perf_event"))
	}
	s.stopReader()
	s.readMu.Lock()
	s.ringList.Store(nil)
	for _, r := range s.rings {
		r.close()
	}
	s.readMu.Unlock()
	s.tidFDs, s.rings, s.ringFD, s.cpuFDs, s.leaders, s.exitedFDs = nil, nil, nil, nil, nil, nil
	s.held = nil
	var probes []string
	if s.probes != nil {
		probes = s.probes.detach()
	}
	return files, probes
}

// ProbeEvents is how many event closes will each wait for the kernel to
// unregister a uprobe (about 0.1 s each): with tracefs probes, one per probe
// (the last of its events); with uprobe PMU events, every event of the
// configuration.
func (s *Session) ProbeEvents() int {
	if !slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) {
		return 0
	}
	if s.probes.usable() {
		s.probes.mu.Lock()
		defer s.probes.mu.Unlock()
		return len(s.probes.byKey)
	}
	n := len(s.cpuFDs) + len(s.exitedFDs)
	for _, fds := range s.tidFDs {
		n += len(fds)
	}
	return n
}
