//go:build linux

package sampler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Session is an open event set on a target: per-CPU rings, one event group
// per (thread, CPU), and the target's lifecycle.
type Session struct {
	cfg        Config
	cpus       []int
	rings      map[int]*ring // by CPU
	ringFD     map[int]int   // by CPU: the event whose ring the others write into
	owners     map[int]bool  // the fds in ringFD
	tidFDs     map[int][]int // by thread: its events (leaders and members)
	exitedFDs  []int         // probe events of exited threads, not closed yet (see closeThread)
	ids        map[uint64]EventRef
	cpuFDs     []int        // events of AllTasks groups
	procs      map[int]bool // the target's processes
	groups     []groupAttrs
	generation int
	leaders    []int  // group leader descriptors, for pause and resume
	idle       func() // called on every wake of Run
	epfd       int
	waiter     *waiter // owns epfd
	pidfd      int
	pid        int
	cmd        *exec.Cmd
	waitErr    chan error
	decoder    *decoder
	batch      Batch
	pending    []Record // records made up by cctop (existing threads' names)
	exited     atomic.Bool
	closed     bool
	notes      []string
	excludeK   bool

	stats struct {
		samples, lost, throttled, corrupt, threadsNew atomic.Uint64
		threads                                       atomic.Int64
	}
	mu         sync.Mutex
	exitStatus *os.ProcessState
	lastScan   time.Time
	alive      map[int]bool
}

// Open starts sampling: it launches cfg.Argv with the events enabled from its
// first instruction, or attaches to every thread of cfg.PID.
func Open(cfg Config) (*Session, error) {
	if (cfg.PID > 0) == (len(cfg.Argv) > 0) {
		return nil, errors.New("give either a PID to attach to or a command to launch")
	}
	if cfg.Leader.Name == "" {
		cfg.Leader = namedEvents["cpu-clock"]
	}
	if cfg.Freq == 0 && cfg.Period == 0 {
		cfg.Freq = 999
	}
	if cfg.RingPages == 0 {
		cfg.RingPages = DefaultRingPages
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 100 * time.Millisecond
	}
	cpus, err := onlineCPUs()
	if err != nil {
		return nil, err
	}
	s := &Session{
		cfg: cfg, cpus: cpus, epfd: -1, pidfd: -1,
		rings: map[int]*ring{}, ringFD: map[int]int{}, owners: map[int]bool{}, tidFDs: map[int][]int{},
		ids: map[uint64]EventRef{}, alive: map[int]bool{}, procs: map[int]bool{},
	}
	s.excludeK = cfg.UserOnly
	s.followForUprobes()
	if err := s.buildAttrs(); err != nil {
		return nil, err
	}
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if s.waiter, err = newWaiter(s.epfd); err != nil {
		s.epfd = -1
		return nil, fmt.Errorf("epoll: %w", err)
	}
	if len(cfg.Argv) > 0 {
		err = s.launch()
	} else {
		err = s.attach()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	if !s.excludeK {
		if n := KallsymsNote(); n != "" {
			s.note(n)
		}
	}
	return s, nil
}

// groupAttrs is one group's attrs, ready for perf_event_open.
type groupAttrs struct {
	name     string
	leader   unix.PerfEventAttr
	members  []unix.PerfEventAttr
	names    []string
	format   Format
	entry    bool // the leader is a uprobe at a function's entry
	allTasks bool
	paths    [][]byte // uprobe paths: config1 points into them
}

// buildAttrs turns the configured groups into attrs. Only the first group
// asks for sideband records (mmap, comm, task): one copy of each is enough.
func (s *Session) buildAttrs() error {
	s.groups = s.groups[:0]
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
				a.Sample_stack_user = uint32(min(s.cfg.UserStack+7, MaxUserStack) &^ 7)
			}
		}
		ga.allTasks = g.AllTasks && gi > 0
		if !s.cfg.Follow && !ga.allTasks {
			a.Bits |= unix.PerfBitInherit
		}
		if s.excludeK {
			a.Bits |= unix.PerfBitExcludeKernel | unix.PerfBitExcludeCallchainKernel
		}
		if g.Period > 0 {
			a.Sample = g.Period
		} else {
			a.Sample = g.Freq
			a.Bits |= unix.PerfBitFreq
		}
		// Wake the reader when a quarter of the ring is full; the poll
		// timeout bounds latency at low rates.
		a.Wakeup = uint32(s.cfg.RingPages * os.Getpagesize() / 4)
		ga.leader = a
		ga.format = Format{SampleType: a.Sample_type, ReadFormat: a.Read_format, SampleIDAll: true,
			RegsUser: a.Sample_regs_user, EntryProbe: ga.entry}
		for _, m := range g.Members {
			ma := unix.PerfEventAttr{Size: a.Size, Read_format: a.Read_format,
				Bits: a.Bits & (unix.PerfBitInherit | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv)}
			if err := s.setEvent(&ma, m, &ga); err != nil {
				return err
			}
			ga.members = append(ga.members, ma)
			ga.names = append(ga.names, m.Name)
		}
		s.groups = append(s.groups, ga)
	}
	// All groups share the sample_id layout, so sideband records decode
	// with the first group's format whatever event wrote them.
	s.decoder = newDecoder(s.groups[0].format)
	return nil
}

// followForUprobes switches to following threads one by one when any event
// is a uprobe: the kernel sets up an inherited uprobe event by reading its
// path (config1) again, as a user pointer, in the memory of the task that is
// creating a thread, where it points at nothing, and the target's clone
// fails with EFAULT.
func (s *Session) followForUprobes() {
	if s.cfg.Follow {
		return
	}
	for gi, g := range s.cfg.groups() {
		if g.AllTasks && gi > 0 {
			continue
		}
		if g.hasUprobe() {
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
			return
		}
	}
}

// ProbeEvents is how many open events close slowly: with uprobes in the
// configuration, every event of it (the kernel unregisters a uprobe on
// close, about 0.1 s each), else 0.
func (s *Session) ProbeEvents() int {
	if !slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) {
		return 0
	}
	n := len(s.cpuFDs) + len(s.exitedFDs)
	for _, fds := range s.tidFDs {
		n += len(fds)
	}
	return n
}

// DetachEvents stops every event, unmaps the rings and hands the events'
// descriptors over as files, so that another process can hold the last
// reference and pay for closing them; the session keeps none. Call it after
// the last Run.
func (s *Session) DetachEvents() []*os.File {
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
	for _, r := range s.rings {
		r.close()
	}
	s.tidFDs, s.rings, s.ringFD, s.cpuFDs, s.leaders, s.exitedFDs = nil, nil, nil, nil, nil, nil
	return files
}

// followPoll is how often the rings are read while threads are followed.
const followPoll = 10 * time.Millisecond

// minRingPages is the smallest ring Open falls back to.
const minRingPages = 8

// hasUprobe reports whether any event of g is a uprobe.
func (g Group) hasUprobe() bool {
	return g.Leader.UprobePath != "" || slices.ContainsFunc(g.Members, func(e EventSpec) bool { return e.UprobePath != "" })
}

// setEvent fills the event-selecting fields of a for spec.
func (s *Session) setEvent(a *unix.PerfEventAttr, spec EventSpec, ga *groupAttrs) error {
	if spec.UprobePath == "" {
		a.Type, a.Config, a.Ext1, a.Ext2 = spec.Type, spec.Config, spec.Config1, spec.Config2
		return nil
	}
	typ, err := UprobeType()
	if err != nil {
		return err
	}
	path := append([]byte(spec.UprobePath), 0)
	ga.paths = append(ga.paths, path) // Go's heap does not move: the pointer stays valid
	uprobeAttr(a, typ, path, spec.UprobeOffset)
	return nil
}

// PID is the target process.
func (s *Session) PID() int { return s.pid }

// Notes are things the user should know about how sampling was set up
// (fallbacks taken, kernel frames excluded).
func (s *Session) Notes() []string { return s.notes }

// note records something the user should know, once, and at most a
// screenful of them: a target churning threads must not grow this forever.
func (s *Session) note(msg string) {
	if len(s.notes) >= 20 || slices.Contains(s.notes, msg) {
		return
	}
	s.notes = append(s.notes, msg)
}

// KernelFrames reports whether kernel frames are sampled.
func (s *Session) KernelFrames() bool { return !s.excludeK }

// Followed reports whether new threads are followed by opening events for
// them rather than by inheritance.
func (s *Session) Followed() bool { return s.cfg.Follow }

// EventRef names one opened event: its group (0 the primary group, i+1
// Config.Extra[i]) and its place in the group (0 the leader, i+1 Members[i]).
type EventRef struct{ Group, Member int }

// Event maps an event ID (a sample's ID, or a group-read value's ID) to
// the event it belongs to.
func (s *Session) Event(id uint64) (EventRef, bool) {
	r, ok := s.ids[id]
	return r, ok
}

// Stats returns running totals.
func (s *Session) Stats() Stats {
	return Stats{
		Samples:    s.stats.samples.Load(),
		Lost:       s.stats.lost.Load(),
		Throttled:  s.stats.throttled.Load(),
		Corrupt:    s.stats.corrupt.Load(),
		Threads:    int(s.stats.threads.Load()),
		ThreadsNew: s.stats.threadsNew.Load(),
	}
}

// ExitStatus is the launched command's exit status once it has exited.
func (s *Session) ExitStatus() *os.ProcessState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exitStatus
}

// Exited reports whether the target has exited.
func (s *Session) Exited() bool { return s.exited.Load() }

// openThread opens the event group for tid on every CPU. The first event on
// a CPU owns that CPU's ring; the others redirect their output into it.
func (s *Session) openThread(tid int) error {
	if _, ok := s.tidFDs[tid]; ok {
		return nil
	}
	var fds []int
	fail := func(err error) error {
		closeAll(fds)
		return err
	}
	for _, cpu := range s.cpus {
		for gi := range s.groups {
			g := &s.groups[gi]
			if g.allTasks {
				continue
			}
			attr := g.leader
			fd, err := unix.PerfEventOpen(&attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return fail(err)
			}
			fds = append(fds, fd)
			if err := s.recordID(fd, gi, 0); err != nil {
				return fail(err)
			}
			s.leaders = append(s.leaders, fd)
			for mi := range g.members {
				ma := g.members[mi]
				mfd, err := unix.PerfEventOpen(&ma, tid, cpu, fd, unix.PERF_FLAG_FD_CLOEXEC)
				if err != nil {
					return fail(fmt.Errorf("counter %s: %w", g.names[mi], err))
				}
				fds = append(fds, mfd)
				if err := s.recordID(mfd, gi, mi+1); err != nil {
					return fail(err)
				}
			}
			if owner, ok := s.ringFD[cpu]; ok {
				if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, owner); err != nil {
					return fail(fmt.Errorf("redirect ring output: %w", err))
				}
				continue
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
				return fail(ringDenied(s.cfg.RingPages, err))
			}
			if err != nil {
				return fail(err)
			}
			if shrunk {
				s.notes = slices.DeleteFunc(s.notes, func(n string) bool { return strings.HasPrefix(n, ringNotePrefix) })
				s.note(ringNote(s.cfg.RingPages))
			}
			if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
				r.close()
				return fail(fmt.Errorf("epoll: %w", err))
			}
			s.rings[cpu] = r
			s.ringFD[cpu] = fd
			s.owners[fd] = true
		}
	}
	s.tidFDs[tid] = fds
	return nil
}

func (s *Session) recordID(fd, group, member int) error {
	var id uint64
	if err := ioctlID(fd, &id); err != nil {
		return fmt.Errorf("event id: %w", err)
	}
	s.ids[id] = EventRef{Group: group, Member: member}
	if member == 0 {
		s.decoder.setFormat(id, &s.groups[group].format)
	}
	return nil
}

// closeThread releases a dead thread's events, except those that own a
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
	slow := slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe)
	keep := fds[:0]
	for _, fd := range fds {
		switch {
		case s.owners[fd]:
			keep = append(keep, fd)
		case slow:
			s.exitedFDs = append(s.exitedFDs, fd)
		default:
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

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
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
		switch {
		case s.cfg.PID > 0 && othersProcess(s.cfg.PID):
			return AttachDenied(s.cfg.PID, errno)
		case slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) && !Capable(unix.CAP_SYS_ADMIN):
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
		return fmt.Errorf("too many open files for %d threads x %d CPUs: raise `ulimit -n`", len(s.tidFDs)+1, len(s.cpus))
	}
	return fmt.Errorf("perf_event_open: %w", err)
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
			fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return fmt.Errorf("%s on CPU %d: %w", g.name, cpu, s.openErr(err, -1))
			}
			s.cpuFDs = append(s.cpuFDs, fd)
			s.leaders = append(s.leaders, fd)
			if err := s.recordID(fd, gi, 0); err != nil {
				return err
			}
			if err := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_OUTPUT, owner); err != nil {
				return fmt.Errorf("redirect ring output: %w", err)
			}
		}
	}
	return nil
}

// mine reports whether a sample of an AllTasks group belongs to the
// target: its process or one the target forked.
func (s *Session) mine(r *Record) bool {
	ref, ok := s.ids[r.ID]
	if !ok || !s.groups[ref.Group].allTasks {
		return true
	}
	return s.procs[int(r.PID)]
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

// Run reads the rings until the target exits or ctx ends, calling fn with
// each batch of records in time order. fn must not keep the batch.
func (s *Session) Run(ctx context.Context, fn func(*Batch)) error {
	events := make([]unix.EpollEvent, len(s.cpus)+2)
	if len(s.pending) > 0 {
		s.drain(fn)
	}
	for {
		if ctx.Err() != nil {
			s.drain(fn)
			return nil
		}
		n, err := s.waiter.wait(events, s.cfg.PollInterval)
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for i := 0; i < n; i++ {
			ev := events[i]
			if int(ev.Fd) == s.pidfd {
				s.exited.Store(true)
				continue
			}
			if ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0 {
				// The event's task is gone; level-triggered HUP would spin.
				// Its ring is still drained below.
				unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			}
		}
		s.drain(fn)
		if s.cfg.Follow && time.Since(s.lastScan) > 200*time.Millisecond {
			s.scanThreads()
		}
		if s.idle != nil {
			s.idle()
		}
		if s.exited.Load() {
			s.reap()
			s.drain(fn)
			return nil
		}
	}
}

// drain empties every ring into one batch and hands it to fn.
func (s *Session) drain(fn func(*Batch)) {
	b := &s.batch
	b.reset()
	for _, r := range s.pending {
		b.add(&r)
	}
	s.pending = s.pending[:0]
	var rec Record
	for _, cpu := range s.cpus {
		r := s.rings[cpu]
		if r == nil {
			continue
		}
		_, corrupt := r.readAll(func(raw []byte) {
			ok, err := s.decoder.decode(raw, &rec)
			if err != nil {
				s.stats.corrupt.Add(1)
				return
			}
			if ok && s.account(&rec) {
				b.add(&rec)
			}
		})
		if corrupt {
			s.stats.corrupt.Add(1)
		}
	}
	if len(b.Records) == 0 {
		return
	}
	b.seal()
	fn(b)
}

// account keeps totals and thread bookkeeping for one record, and says
// whether the record is the target's.
func (s *Session) account(r *Record) bool {
	switch r.Kind {
	case KindSample:
		if !s.mine(r) {
			return false
		}
		s.stats.samples.Add(1)
	case KindLost:
		s.stats.lost.Add(r.Lost)
	case KindThrottle:
		s.stats.throttled.Add(1)
	case KindFork:
		if r.PID != r.PPID && s.procs[int(r.PPID)] {
			s.procs[int(r.PID)] = true
		}
		if !s.alive[int(r.TID)] {
			s.alive[int(r.TID)] = true
			s.stats.threads.Add(1)
			s.stats.threadsNew.Add(1)
		}
		if s.cfg.Follow && int(r.PID) == s.pid {
			if err := s.openThread(int(r.TID)); err != nil && !errors.Is(err, unix.ESRCH) {
				s.note(fmt.Sprintf("thread %d not sampled: %v", r.TID, err))
			}
		}
	case KindExit:
		if s.alive[int(r.TID)] {
			delete(s.alive, int(r.TID))
			s.stats.threads.Add(-1)
		}
		s.closeThread(int(r.TID))
	}
	return true
}

// Reconfigure replaces the counters read with the primary group (to arm
// other uprobes, say) without stopping the target: see ReconfigureWith.
func (s *Session) Reconfigure(members []EventSpec, fn func(*Batch)) error {
	return s.ReconfigureWith(func(c *Config) { c.Members = members }, fn)
}

// ReconfigureWith changes the sampling configuration (rate, trigger,
// counters) without stopping the target: records still in the rings go to
// fn, every event is closed, and new ones, set up by change, are opened on
// every live thread of the target. Counters of the new set start from zero
// on each thread. Children the target forked are not followed past this
// point. The target and its process stay as they were.
func (s *Session) ReconfigureWith(change func(*Config), fn func(*Batch)) error {
	s.drain(fn)
	for fd := range s.owners {
		unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	// Closing a uprobe event waits for the kernel to unregister it (about
	// 0.1 s each here, and there is one per thread, CPU and probe): stop the
	// old events now and let a goroutine close them, so the caller's
	// goroutine, which feeds the UI, does not stall for seconds.
	s.Pause()
	old := &Session{tidFDs: s.tidFDs, cpuFDs: s.cpuFDs, rings: s.rings, exitedFDs: s.exitedFDs}
	go old.closeEvents()
	s.rings, s.ringFD, s.owners, s.tidFDs, s.cpuFDs, s.exitedFDs = map[int]*ring{}, map[int]int{}, map[int]bool{}, map[int][]int{}, nil, nil
	s.ids = map[uint64]EventRef{}
	s.leaders = nil
	change(&s.cfg)
	s.followForUprobes()
	if err := s.buildAttrs(); err != nil {
		return err
	}
	s.generation++
	return s.openAllThreads()
}

// SetIdle sets a function Run calls every time it wakes, records or not
// (at least every PollInterval): the place for a caller that owns the
// session's goroutine to take requests.
func (s *Session) SetIdle(fn func()) { s.idle = fn }

// Pause stops sampling on every thread, inherited copies included; Resume
// starts it again. The target runs on.
func (s *Session) Pause() error  { return s.ioctlLeaders(unix.PERF_EVENT_IOC_DISABLE) }
func (s *Session) Resume() error { return s.ioctlLeaders(unix.PERF_EVENT_IOC_ENABLE) }

func (s *Session) ioctlLeaders(req uint) error {
	var first error
	for _, fd := range s.leaders {
		if err := unix.IoctlSetInt(fd, req, unix.PERF_IOC_FLAG_GROUP); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Config is the configuration in force.
func (s *Session) Config() Config { return s.cfg }

// Generation counts Reconfigure calls: records of a new generation carry
// counters that restarted from zero.
func (s *Session) Generation() int { return s.generation }

// Stop ends a launched target: SIGTERM, then SIGKILL after grace. It does
// nothing for an attached target.
func (s *Session) Stop(grace time.Duration) {
	if s.cmd == nil || s.cmd.Process == nil || s.exited.Load() {
		return
	}
	s.cmd.Process.Signal(unix.SIGTERM)
	select {
	case err := <-s.waitErr:
		s.waitErr <- err
	case <-time.After(grace):
		s.cmd.Process.Kill()
	}
}

// reap collects the launched command's exit status.
func (s *Session) reap() {
	if s.cmd == nil {
		return
	}
	err := <-s.waitErr
	s.waitErr <- err
	s.mu.Lock()
	s.exitStatus = s.cmd.ProcessState
	s.mu.Unlock()
}

// Close releases every event, ring and descriptor. A launched target still
// running is killed.
func (s *Session) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.cmd != nil && s.cmd.Process != nil && !s.exited.Load() {
		s.cmd.Process.Kill()
		<-s.waitErr
		s.exited.Store(true)
	}
	s.closeEvents()
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
}

func (s *Session) watchExit(pid int) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	s.pidfd = fd
	return unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
}

func paranoid() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// noProcessError: the thread or process is gone (or never was).
type noProcessError struct{ id int }

func (e *noProcessError) Error() string { return fmt.Sprintf("no such process: %d", e.id) }

// Is makes errors.Is(err, ErrNoProcess) true.
func (e *noProcessError) Is(target error) bool { return target == ErrNoProcess }
