//go:build linux

package sampler

// Stack copies per thread: the size of the user stack copy each thread's
// samples carry, changed while the target runs (the engine's unwinding
// plan asks for a large copy only for the threads whose stacks pass
// through code without frame pointers).

import (
	"slices"

	"golang.org/x/sys/unix"
)

// StackChange is the outcome of SetUserStacks.
type StackChange struct {
	// Changed are the threads whose own events were reopened with their
	// new copy size (the cheap way: one thread's groups on each CPU).
	Changed []int
	// Pending are the threads whose size waits for a reopen of every
	// event: they are sampled by events they inherited, which cannot be
	// changed for one thread (or they own events other threads
	// inherited). SetUserStacks does that reopen when allowed.
	Pending []int
	// Reopened says every event was reopened; Batch then holds the old
	// events' records not yet handed on, as ReconfigureWith returns them.
	Reopened bool
	Batch    *Batch
}

// SetUserStacks sets the user stack copy of each thread in sizes (bytes;
// 0 or the configured Config.UserStack: back to the default). A thread
// that owns its events and shares them with no other task gets new ones
// at once: its sampling group is opened again on every CPU with the new
// size before the old group is disabled, so that no sample is missed (one
// may be taken twice), and the old events are closed (a CPU's ring owner is
// kept, disabled, until the thread is gone). A thread sampled by inherited
// events needs every event reopened (ReconfigureWith), which costs one
// open per thread and CPU and restarts the counters: it is done only when
// reopenAll is true, else the thread is listed as pending and keeps its
// size until a later call. The sizes are kept for the threads' events
// opened later (a reopen, following). New threads inherit their
// creator's copy. Without stack copies (Config.UserStack 0) or over every
// task of the host (AllProcesses, where events belong to CPUs, not
// threads), nothing changes.
func (s *Session) SetUserStacks(sizes map[int]int, reopenAll bool) (StackChange, error) {
	var c StackChange
	if s.cfg.UserStack <= 0 || s.cfg.AllProcesses || len(sizes) == 0 {
		return c, nil
	}
	s.readMu.Lock()
	locked := true
	defer func() {
		if locked {
			s.readMu.Unlock()
		}
	}()
	if s.stackFor == nil {
		s.stackFor = map[int]int{}
	}
	tids := make([]int, 0, len(sizes))
	for tid := range sizes {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	var firstErr error
	for _, tid := range tids {
		n := sizes[tid]
		if n <= 0 || stackAttrSize(n) == stackAttrSize(s.cfg.UserStack) {
			n = 0
		}
		if n == s.stackFor[tid] {
			continue
		}
		if _, alive := s.threads.alive[tid]; !alive {
			continue
		}
		if !s.ownsAlone(tid) {
			c.Pending = append(c.Pending, tid)
			continue
		}
		prev := s.stackFor[tid]
		s.setStackFor(tid, n)
		if err := s.reopenCopies(tid); err != nil {
			s.setStackFor(tid, prev)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c.Changed = append(c.Changed, tid)
	}
	if len(c.Pending) == 0 || !reopenAll {
		return c, firstErr
	}
	for _, tid := range c.Pending {
		n := sizes[tid]
		if n <= 0 || stackAttrSize(n) == stackAttrSize(s.cfg.UserStack) {
			n = 0
		}
		s.setStackFor(tid, n)
	}
	locked = false
	s.readMu.Unlock()
	b, err := s.ReconfigureWith(func(*Config) {})
	c.Batch, c.Reopened = b, err == nil
	if err == nil {
		c.Changed = append(c.Changed, c.Pending...)
		c.Pending = nil
	}
	if firstErr == nil {
		firstErr = err
	}
	return c, firstErr
}

// setStackFor keeps tid's copy size, 0 the configured one.
func (s *Session) setStackFor(tid, n int) {
	if n == 0 {
		delete(s.stackFor, tid)
		return
	}
	s.stackFor[tid] = n
}

// UserStackOf is the copy size tid's own events were opened with, or
// Config.UserStack when none was set for it.
func (s *Session) UserStackOf(tid int) int {
	if n, ok := s.stackFor[tid]; ok {
		return n
	}
	return s.cfg.UserStack
}

// ownsAlone reports whether tid is sampled by events opened on it directly
// that no other live task inherited: those can be replaced without
// touching another thread's sampling.
func (s *Session) ownsAlone(tid int) bool {
	if _, ok := s.tidFDs[tid]; !ok {
		return false
	}
	if s.cfg.Follow {
		return true
	}
	return s.root[tid] == tid && s.heirs[tid] <= 1
}

// reopenCopies opens tid's stack-copying groups again on every CPU with its
// size in force, then stops and closes the old ones.
func (s *Session) reopenCopies(tid int) error {
	var fresh []int
	for _, cpu := range s.cpus {
		for gi := range s.groups {
			if !s.groups[gi].copies || s.groups[gi].allTasks {
				continue
			}
			got, err := s.openGroup(tid, cpu, gi)
			fresh = append(fresh, got...)
			if err != nil {
				for _, fd := range fresh {
					s.retireEvent(fd)
				}
				closeAll(fresh)
				return err
			}
		}
	}
	old := s.tidFDs[tid]
	keep := make([]int, 0, len(old)+len(fresh))
	var closing []int
	for _, fd := range old {
		id, ok := s.fdID[fd]
		ref, known := s.ids[id]
		if !ok || !known || !s.groups[ref.Group].copies {
			keep = append(keep, fd)
			continue
		}
		if s.leaders[fd] {
			unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, unix.PERF_IOC_FLAG_GROUP)
		}
		s.retireEvent(fd)
		if s.ringOwners[fd] {
			// The CPU's ring lives as long as this descriptor: kept,
			// disabled, until the thread's events are closed.
			keep = append(keep, fd)
			continue
		}
		closing = append(closing, fd)
	}
	s.tidFDs[tid] = append(keep, fresh...)
	s.openCount += len(fresh)
	if slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) {
		// Closing a uprobe event waits for the kernel to unregister it.
		s.bg.Go(func() { closeAll(closing) })
	} else {
		closeAll(closing)
	}
	return nil
}
