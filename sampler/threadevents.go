//go:build linux

package sampler

// Thread events: opening the event groups of one thread on every CPU (the
// first event on a CPU maps its ring), the AllTasks groups once per CPU, the
// IDs those events carry, the fallbacks taken when the kernel refuses, and
// closing a thread's events once it has exited.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openThread opens the event group for tid on every CPU. The first event on
// a CPU owns that CPU's ring; the others redirect their output into it.
func (s *Session) openThread(tid int) error {
	if _, ok := s.tidFDs[tid]; ok {
		return nil
	}
	start := time.Now()
	var fds []int
	fail := func(err error) error {
		for _, fd := range fds {
			s.retireEvent(fd)
		}
		closeAll(fds)
		return err
	}
	for _, cpu := range s.cpus {
		for gi := range s.groups {
			if s.groups[gi].allTasks {
				continue
			}
			got, err := s.openGroup(tid, cpu, gi)
			fds = append(fds, got...)
			if err != nil {
				return fail(err)
			}
		}
	}
	s.tidFDs[tid] = fds
	s.openTime += time.Since(start)
	s.openCount += len(fds)
	return nil
}

// openGroup opens group gi on tid and cpu: the leader and its members, with
// the leader's output going into the CPU's ring, mapped here if it is the
// CPU's first event. It returns the descriptors opened, also on failure,
// for the caller to close.
func (s *Session) openGroup(tid, cpu, gi int) ([]int, error) {
	var fds []int
	g := &s.groups[gi]
	attr := s.threadAttr(g, tid)
	fd, err := s.k.perfOpen(&attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return fds, err
	}
	fds = append(fds, fd)
	if err := s.learnEventID(fd, gi, 0); err != nil {
		return fds, err
	}
	s.leaders[fd] = true
	for mi := range g.members {
		ma := g.members[mi]
		mfd, err := s.k.perfOpen(&ma, tid, cpu, fd, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return fds, fmt.Errorf("counter %s: %w", g.names[mi], err)
		}
		fds = append(fds, mfd)
		if err := s.learnEventID(mfd, gi, mi+1); err != nil {
			return fds, err
		}
	}
	if owner, ok := s.ringFD[cpu]; ok {
		if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, owner); err != nil {
			return fds, fmt.Errorf("redirect ring output: %w", err)
		}
		return fds, nil
	}
	r, err := mmapRing(fd, s.cfg.RingPages)
	shrunk := false
	for errors.Is(err, unix.EPERM) && s.cfg.RingPages > minRingPages {
		// Over the locked-memory allowance (kernel.perf_event_mlock_kb,
		// then RLIMIT_MEMLOCK, for a user without CAP_IPC_LOCK):
		// smaller rings lose records sooner, no rings lose everything.
		s.cfg.RingPages /= 2
		shrunk = true
		r, err = mmapRing(fd, s.cfg.RingPages)
	}
	if errors.Is(err, unix.EPERM) {
		return fds, ringDenied(s.cfg.RingPages, err)
	}
	if err != nil {
		return fds, err
	}
	if shrunk {
		s.notes = slices.DeleteFunc(s.notes, func(n string) bool { return strings.HasPrefix(n, ringNotePrefix) })
		s.note(ringNote(s.cfg.RingPages))
	}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
		r.close()
		return fds, fmt.Errorf("epoll: %w", err)
	}
	s.rings[cpu] = r
	s.ringFD[cpu] = fd
	s.ringOwners[fd] = true
	s.publishRings()
	return fds, nil
}

// threadAttr is the attr of g's leader as tid's events open it:
// disabled while every thread's are being opened (openAllThreads enables
// them together), and the switch samples' while they are turned off, so
// that a thread followed after SetSwitchSamples(false) takes none; with
// the stack copy SetUserStacks chose for tid.
func (s *Session) threadAttr(g *groupAttrs, tid int) unix.PerfEventAttr {
	attr := g.leader
	if n, ok := s.stackFor[tid]; ok && g.copies {
		attr.Sample_stack_user = stackAttrSize(n)
	}
	if s.opening || (g.format.OffCPU && s.switchOff) {
		attr.Bits |= unix.PerfBitDisabled
	}
	return attr
}

// minRingPages is the smallest ring Open falls back to.
const minRingPages = 8

// learnEventID reads the ID of fd's event, which samples and group reads
// carry, and remembers which event it is (group, member) and how its samples
// are laid out.
func (s *Session) learnEventID(fd, group, member int) error {
	var id uint64
	if err := ioctlID(fd, &id); err != nil {
		return fmt.Errorf("event id: %w", err)
	}
	s.ids[id] = EventRef{Group: group, Member: member}
	s.fdID[fd] = id
	if member == 0 {
		s.decoder.setFormat(id, &s.groups[group].format)
	}
	return nil
}

// ioctlID reads an event's id (PERF_EVENT_IOC_ID), which group reads report
// next to each value.
func ioctlID(fd int, id *uint64) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(unix.PERF_EVENT_IOC_ID), uintptr(unsafe.Pointer(id)))
	if errno != 0 {
		return errno
	}
	return nil
}

// openAllTasks opens the AllTasks groups once per CPU, writing into the
// rings the target's own events created.
func (s *Session) openAllTasks() error {
	for _, cpu := range s.cpus {
		owner, ok := s.ringFD[cpu]
		if !ok {
			continue
		}
		for gi := range s.groups {
			g := &s.groups[gi]
			if !g.allTasks {
				continue
			}
			attr := g.leader
			if s.opening {
				attr.Bits |= unix.PerfBitDisabled
			}
			fd, err := s.k.perfOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return fmt.Errorf("%s on CPU %d: %w", g.name, cpu, s.openErr(err, -1))
			}
			s.cpuFDs = append(s.cpuFDs, fd)
			s.leaders[fd] = true
			if err := s.learnEventID(fd, gi, 0); err != nil {
				return err
			}
			if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, owner); err != nil {
				return fmt.Errorf("redirect ring output: %w", err)
			}
		}
	}
	return nil
}

// openWithFallbacks opens tid's events, stepping down to what the kernel
// allows: user space only when kernel sampling is refused, and thread
// following when inherited events can't carry group reads.
func (s *Session) openWithFallbacks(tid int) error {
	err := s.openThread(tid)
	if err == nil {
		return nil
	}
	var perm *PermissionError
	if IsPermission(err) && !errors.As(err, &perm) && !s.excludeK {
		s.excludeK = true
		s.buildAttrs()
		err2 := s.openThread(tid)
		if err2 == nil {
			s.note(fmt.Sprintf("kernel frames excluded: perf_event_paranoid=%s allows user space only; to add them: %s", paranoid(), FixKernelFrames()))
			return nil
		}
		// User space alone fails too: say why that fails (a full ring
		// allowance, say), not why kernel frames were refused.
		err = err2
	}
	if errors.Is(err, unix.EINVAL) && !s.cfg.Follow {
		s.cfg.Follow = true
		s.buildAttrs()
		if err2 := s.openThread(tid); err2 == nil {
			s.note("this kernel refuses inherited events with per-sample counter reads (needs 6.12+): following threads one by one")
			return nil
		}
	}
	return s.openErr(err, tid)
}

// openErr turns a perf_event_open failure into one line that names the fix.
func (s *Session) openErr(err error, tid int) error {
	var errno unix.Errno
	var perm *PermissionError
	if errors.As(err, &perm) || !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case unix.EACCES, unix.EPERM:
		uprobes := slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) && !Capable(unix.CAP_SYS_ADMIN)
		switch {
		case s.cfg.AllProcesses && (!uprobes || !systemWideCapable()):
			return systemWideDenied(errno)
		case s.cfg.PID > 0 && othersProcess(s.cfg.PID):
			return AttachDenied(s.cfg.PID, errno)
		case uprobes:
			return UprobesDenied(errno)
		}
		return perfDenied(errno)
	case unix.ESRCH:
		return &noProcessError{tid}
	case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV:
		if s.cfg.Leader.Hardware {
			return fmt.Errorf("event %s is not supported here: this machine has no hardware PMU (a VM without PMU passthrough?); use -e cpu-clock", s.cfg.Leader.Name)
		}
		return fmt.Errorf("event %s is not supported by this kernel: %v", s.cfg.Leader.Name, err)
	case unix.EMFILE, unix.ENFILE:
		return s.files.tooFew(len(s.tidFDs)+1, s.fdsPerThread())
	}
	return fmt.Errorf("perf_event_open: %w", err)
}

// closeThread closes a dead thread's events, except those that own a
// ring: the ring stays mapped while other threads write into it. Events of
// a configuration with uprobes are not closed here: closing one waits for
// the kernel to unregister its uprobe (0.1 to 0.5 s each), and when a
// target with many threads exits, or is stopped on Ctrl-C, closing theirs
// one by one held up the reading of the rings, and cctop's exit, for tens
// of seconds. They are kept with the others for Close, or for
// DetachEvents to hand over; past maxExitedFDs a goroutine closes them.
func (s *Session) closeThread(tid int) {
	fds, ok := s.tidFDs[tid]
	if !ok {
		return
	}
	slow := slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) && !s.probes.usable()
	keep := fds[:0]
	for _, fd := range fds {
		switch {
		case s.ringOwners[fd]:
			keep = append(keep, fd)
		case slow:
			s.retireEvent(fd)
			s.exitedFDs = append(s.exitedFDs, fd)
		default:
			s.retireEvent(fd)
			unix.Close(fd)
		}
	}
	if len(s.exitedFDs) > maxExitedFDs {
		go closeAll(s.exitedFDs)
		s.exitedFDs = nil
	}
	if len(keep) == 0 {
		delete(s.tidFDs, tid)
	} else {
		s.tidFDs[tid] = keep
	}
}

// maxExitedFDs bounds the events of exited threads kept open: a target
// that keeps making threads must not use up the descriptors.
const maxExitedFDs = 4096

// retireEvent drops what the session knows of an event about to be closed
// but its ID, which is retired: forgotten at the drain after next
// (forgetRetired), for samples still in the rings.
func (s *Session) retireEvent(fd int) {
	delete(s.leaders, fd)
	if id, ok := s.fdID[fd]; ok {
		delete(s.fdID, fd)
		s.retired = append(s.retired, id)
	}
}
