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
	k          boundary
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
	leaders    map[int]bool // group leader descriptors, for pause and resume
	idle       func()       // called on every wake of Run
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
	// followAuto: Follow was set because of per-thread uprobes, and goes
	// when they do; pollBefore is the poll interval it replaced.
	followAuto bool
	pollBefore time.Duration
	opening    bool // events are opened disabled (openAllThreads)

	// The reader goroutine of the current Run (reader.go). readMu keeps it
	// off the rings while drain reads them itself and while Reconfigure
	// replaces them; ringList is the rings it reads.
	rd        *reader
	readMu    sync.Mutex
	ringList  atomic.Pointer[[]*ring]
	poll      atomic.Int64 // cfg.PollInterval, for the reader
	ringBytes atomic.Int64 // the data areas of ringList

	fdID map[int]uint64 // by descriptor: its event's ID, to forget it on close
	// IDs of closed events, forgotten one drain later: their thread's last
	// samples may still sit in another CPU's ring.
	retired, retiring []uint64
	// The same for child processes that exited: samples of theirs may
	// still be in the rings.
	procsRetired, procsRetiring []int
	// Tasks whose EXIT record was read before their FORK record (written
	// on another CPU, whose ring was read first), until the drain after.
	early, earlier map[int]bool
	// With inherited events: every live task of the target that is sampled
	// by the events of a directly opened thread (its own or inherited from
	// it), and how many live tasks each directly opened thread's events
	// sample. A thread's events stay open until the last of them is gone:
	// closing them would end the sampling of every task that inherited them.
	root  map[int]int
	heirs map[int]int

	stats struct {
		samples, lost, throttled, corrupt, threadsNew atomic.Uint64
		processes, execs, missed                      atomic.Uint64
		threads                                       atomic.Int64
	}
	mu         sync.Mutex
	exitStatus *os.ProcessState
	state      targetState // guarded by mu
	lastScan   time.Time
	lastCheck  time.Time // of the target's run state (the reader's)
	lastLost   uint64    // stats.lost at the last reconcile
	alive      map[int]bool
	files      fileLimit
	startTicks uint64 // when the session began, as startTicks counts

	// probes are the tracefs uprobes of this process (tracefs.go), nil
	// until a configuration has uprobes; held is the probe ids the
	// configuration in force holds (one per use), released once its events
	// are closed.
	probes *probeSet
	held   []uint64

	// What opening thread events has cost, for ProbeFootprint.
	openTime  time.Duration
	openCount int
	// bg closes replaced events and trial probes; Close and DetachEvents
	// wait for it, so that the probes those hold are deleted.
	bg sync.WaitGroup
}

// Open starts sampling: it launches cfg.Argv with the events enabled from its
// first instruction, or attaches to every thread of cfg.PID.
func Open(cfg Config) (*Session, error) { return openWith(cfg, kernelBoundary()) }

func openWith(cfg Config, k boundary) (*Session, error) {
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
	cpus, err := k.cpus()
	if err != nil {
		return nil, err
	}
	s := &Session{
		cfg: cfg, cpus: cpus, k: k, epfd: -1, pidfd: -1,
		rings: map[int]*ring{}, ringFD: map[int]int{}, owners: map[int]bool{}, tidFDs: map[int][]int{},
		ids: map[uint64]EventRef{}, fdID: map[int]uint64{}, alive: map[int]bool{}, procs: map[int]bool{},
		root: map[int]int{}, heirs: map[int]int{}, leaders: map[int]bool{},
		early: map[int]bool{}, earlier: map[int]bool{},
	}
	s.excludeK = cfg.UserOnly
	s.startTicks = uptimeTicks()
	s.followForUprobes()
	s.poll.Store(int64(s.cfg.PollInterval))
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
	s.startReader()
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
		// Probe events in tracefs are inherited like any event, so a
		// probe-led group follows the target's threads itself; only
		// uprobe PMU leaders need to watch every task.
		ga.allTasks = g.AllTasks && gi > 0 && !s.probes.usable()
		if !s.cfg.Follow && !ga.allTasks {
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
		// Wake the reader when a quarter of the ring is full; the poll
		// timeout bounds latency at low rates.
		a.Wakeup = uint32(s.cfg.RingPages * os.Getpagesize() / 4)
		ga.leader = a
		ga.format = Format{SampleType: a.Sample_type, ReadFormat: a.Read_format, SampleIDAll: true,
			RegsUser: a.Sample_regs_user, EntryProbe: ga.entry, Period: fixed}
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
	if slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) {
		s.ensureProbes()
		if !s.probes.usable() && !s.probes.told {
			s.probes.told = true
			s.note("uprobes go through the uprobe PMU, whose events close slowly and cannot follow new threads: " + s.probes.why)
		}
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

// CPUs is how many CPUs are sampled: every thread has an event group on each.
func (s *Session) CPUs() int { return len(s.cpus) }

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

// DetachEvents stops every event, unmaps the rings and hands the events'
// descriptors over as files, so that another process can hold the last
// reference and pay for closing them, and the tracefs probes they use,
// which that process deletes (DeleteProbes) once it has closed them; the
// session keeps none. Call it after the last Run.
func (s *Session) DetachEvents() ([]*os.File, []string) {
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
	start := time.Now()
	var fds []int
	fail := func(err error) error {
		for _, fd := range fds {
			s.forget(fd)
		}
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
			if s.opening {
				attr.Bits |= unix.PerfBitDisabled // see openAllThreads
			}
			fd, err := s.k.perfOpen(&attr, tid, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return fail(err)
			}
			fds = append(fds, fd)
			if err := s.recordID(fd, gi, 0); err != nil {
				return fail(err)
			}
			s.leaders[fd] = true
			for mi := range g.members {
				ma := g.members[mi]
				mfd, err := s.k.perfOpen(&ma, tid, cpu, fd, unix.PERF_FLAG_FD_CLOEXEC)
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
			s.publishRings()
		}
	}
	s.tidFDs[tid] = fds
	s.openTime += time.Since(start)
	s.openCount += len(fds)
	return nil
}

func (s *Session) recordID(fd, group, member int) error {
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
	slow := slices.ContainsFunc(s.cfg.groups(), Group.hasUprobe) && !s.probes.usable()
	keep := fds[:0]
	for _, fd := range fds {
		switch {
		case s.owners[fd]:
			keep = append(keep, fd)
		case slow:
			s.forget(fd)
			s.exitedFDs = append(s.exitedFDs, fd)
		default:
			s.forget(fd)
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

// forget drops what the session knows of an event about to be closed. Its
// ID is kept until the drain after next, for samples still in the rings.
func (s *Session) forget(fd int) {
	delete(s.leaders, fd)
	if id, ok := s.fdID[fd]; ok {
		delete(s.fdID, fd)
		s.retired = append(s.retired, id)
	}
}

// forgetRetired forgets the IDs of events closed before the previous drain:
// every record they wrote has been read since.
func (s *Session) forgetRetired() {
	for _, id := range s.retiring {
		delete(s.ids, id)
		s.decoder.forget(id)
	}
	s.retiring, s.retired = s.retired, s.retiring[:0]
	for _, pid := range s.procsRetiring {
		delete(s.procs, pid)
	}
	s.procsRetiring, s.procsRetired = s.procsRetired, s.procsRetiring[:0]
	clear(s.earlier)
	s.earlier, s.early = s.early, s.earlier
}

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
		return s.files.tooFew(len(s.tidFDs)+1, s.fdsPerThread())
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
			if s.opening {
				attr.Bits |= unix.PerfBitDisabled
			}
			fd, err := s.k.perfOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if err != nil {
				return fmt.Errorf("%s on CPU %d: %w", g.name, cpu, s.openErr(err, -1))
			}
			s.cpuFDs = append(s.cpuFDs, fd)
			s.leaders[fd] = true
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
//
// Batches follow each other in time order thread by thread, not across
// CPUs: the rings are copied one after another, so a sample written to a
// ring just after it was copied, while the next ring's newer records were
// being copied, comes in the next batch. A thread's samples are a
// millisecond or more apart and cannot straddle that window of
// microseconds; what is computed from consecutive samples (intervals,
// latency) is per thread.
func (s *Session) Run(ctx context.Context, fn func(*Batch)) error {
	if len(s.pending) > 0 {
		s.drain(fn)
	}
	for {
		if ctx.Err() != nil {
			s.drain(fn)
			return nil
		}
		var c *chunk
		select {
		case c = <-s.rd.full:
		case <-s.rd.done:
			// The reader ended: its wait failed, or the session closed.
			if s.rd.err != nil {
				return fmt.Errorf("epoll_wait: %w", s.rd.err)
			}
			return nil
		case <-ctx.Done():
			continue
		}
		s.process(c, fn)
		if s.cfg.Follow && time.Since(s.lastScan) > 200*time.Millisecond {
			if _, err := s.scanThreads(); err != nil && !errors.Is(err, ErrNoProcess) {
				s.tellFiles(err)
			}
		}
		s.watch()
		if s.idle != nil {
			s.idle()
		}
		if s.exited.Load() {
			s.endStop()
			s.reap()
			s.drain(fn)
			return nil
		}
	}
}

// process hands fn one batch of c's records and those of any other chunk
// already queued.
func (s *Session) process(c *chunk, fn func(*Batch)) {
	b := s.startBatch()
	s.decodeChunk(c, b)
	s.decodeQueued(b)
	s.endBatch(b, fn)
}

// decodeQueued adds to b the chunks the reader has queued by now. Not
// those it queues meanwhile: a reader that keeps up with the decoding (each
// decoded chunk lets it copy another) would keep the batch from ever ending,
// and the consumer would see nothing while it grew.
func (s *Session) decodeQueued(b *Batch) {
	for n := len(s.rd.full); n > 0; n-- {
		select {
		case c := <-s.rd.full:
			s.decodeChunk(c, b)
		default:
			return
		}
	}
}

// drain hands fn every record not yet handed on, in one batch: those the
// reader queued, then those still in the rings.
func (s *Session) drain(fn func(*Batch)) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.drainLocked(fn)
}

// drainLocked is drain with readMu held.
func (s *Session) drainLocked(fn func(*Batch)) {
	b := s.startBatch()
	if s.rd != nil {
		// Oldest first: what the reader copied out before.
		s.decodeQueued(b)
	}
	var rec Record
	for _, cpu := range s.cpus {
		r := s.rings[cpu]
		if r == nil {
			continue
		}
		_, corrupt := r.readAll(func(raw []byte) { s.decodeRecord(raw, &rec, b) })
		if corrupt {
			s.stats.corrupt.Add(1)
		}
	}
	s.endBatch(b, fn)
}

// startBatch resets the batch, with the records cctop made up first.
func (s *Session) startBatch() *Batch {
	b := &s.batch
	b.reset()
	for _, r := range s.pending {
		b.add(&r)
	}
	s.pending = s.pending[:0]
	return b
}

// endBatch orders the batch and hands it to fn; one drain is over.
func (s *Session) endBatch(b *Batch, fn func(*Batch)) {
	s.forgetRetired()
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
		if s.early[int(r.TID)] || s.earlier[int(r.TID)] {
			// Its EXIT came first: it is gone already.
			delete(s.early, int(r.TID))
			delete(s.earlier, int(r.TID))
			s.stats.threadsNew.Add(1)
			return true
		}
		if r.PID != r.PPID && s.procs[int(r.PPID)] && !s.procs[int(r.PID)] {
			s.procs[int(r.PID)] = true
			s.stats.processes.Add(1)
		}
		if !s.alive[int(r.TID)] {
			s.alive[int(r.TID)] = true
			s.stats.threads.Add(1)
			s.stats.threadsNew.Add(1)
		}
		s.forked(int(r.TID), int(r.PTID), int(r.PID))
	case KindExit:
		if _, ok := s.root[int(r.TID)]; !ok && !s.alive[int(r.TID)] {
			s.early[int(r.TID)] = true
		}
		s.exited1(int(r.TID))
	case KindComm:
		if r.Exec() && s.procs[int(r.PID)] {
			s.stats.execs.Add(1)
			s.mu.Lock()
			s.state.exec = r.Comm
			s.mu.Unlock()
		}
	}
	return true
}

// forked takes a new task of the target: with inherited events it is
// sampled by its creator's, else cctop opens events on it now, whichever of
// the target's processes it belongs to.
func (s *Session) forked(tid, ptid, pid int) {
	if s.cfg.Follow {
		if !s.procs[pid] || s.exited.Load() {
			return
		}
		err := s.openThread(tid)
		switch {
		case err == nil:
		case errors.Is(err, unix.ESRCH):
			// Gone before its events could be opened: none of its
			// samples were taken, and no EXIT record will come.
			s.stats.missed.Add(1)
			s.exited1(tid)
		case errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE):
			if s.ensureFiles(1) == nil && s.openThread(tid) == nil {
				return
			}
			s.stats.missed.Add(1)
			s.tellFiles(s.files.tooFew(len(s.tidFDs)+1, s.fdsPerThread()))
		default:
			s.stats.missed.Add(1)
			s.note(fmt.Sprintf("thread %d not sampled: %v", tid, err))
		}
		return
	}
	r, ok := s.root[ptid]
	if !ok {
		return
	}
	if s.root[tid] == tid {
		// Opened directly while its creator, already sampled, was
		// creating it: it inherited its creator's events as well, and
		// would be sampled twice.
		s.release(tid)
	}
	s.root[tid] = r
	s.heirs[r]++
}

// exited1 takes the exit of one of the target's tasks.
func (s *Session) exited1(tid int) {
	if s.alive[tid] {
		delete(s.alive, tid)
		s.stats.threads.Add(-1)
	}
	if tid != s.pid && s.procs[tid] {
		// A child process's first thread: the process is ending.
		s.procsRetired = append(s.procsRetired, tid)
	}
	if s.cfg.Follow {
		s.closeThread(tid)
		return
	}
	if _, ok := s.root[tid]; ok {
		s.release(tid)
		delete(s.root, tid)
	}
}

// release ends tid's use of the events it is sampled by, and closes them
// when no other live task uses them.
func (s *Session) release(tid int) {
	r := s.root[tid]
	if s.heirs[r]--; s.heirs[r] <= 0 {
		delete(s.heirs, r)
		s.closeThread(r)
	}
}

// direct records that tid is sampled by events opened on it.
func (s *Session) direct(tid int) {
	if s.cfg.Follow {
		return
	}
	if _, ok := s.root[tid]; !ok {
		s.root[tid] = tid
		s.heirs[tid]++
	}
}

// tellFiles notes, once, that new threads go unsampled for err (a
// descriptor limit, say).
func (s *Session) tellFiles(err error) {
	if s.files.told {
		return
	}
	s.files.told = true
	s.note("new threads not sampled: " + err.Error())
}

// Reconfigure replaces the counters read with the primary group (to arm
// other uprobes, say) without stopping the target: see ReconfigureWith.
func (s *Session) Reconfigure(members []EventSpec, fn func(*Batch)) error {
	return s.ReconfigureWith(func(c *Config) { c.Members = members }, fn)
}

// ReconfigureWith changes the sampling configuration (rate, trigger,
// counters) without stopping the target: records still in the rings go to
// fn, every event is closed, and new ones, set up by change, are opened on
// every live thread of the target and of the child processes it started.
// Counters of the new set start from zero on each thread. When the new set
// cannot be opened, the old one is opened again and the error says so. The
// target and its processes stay as they were.
func (s *Session) ReconfigureWith(change func(*Config), fn func(*Batch)) error {
	// The reader stays off the rings until the new ones are in place.
	s.readMu.Lock()
	defer s.readMu.Unlock()
	s.drainLocked(fn)
	// Closing a uprobe event waits for the kernel to unregister it (about
	// 0.1 s each here, and there is one per thread, CPU and probe): stop the
	// old events now and let a goroutine close them, so the caller's
	// goroutine, which feeds the UI, does not stall for seconds.
	s.Pause()
	s.dropEvents()
	prev := s.cfg
	change(&s.cfg)
	err := s.reopen()
	if err == nil || errors.Is(err, ErrNoProcess) {
		return err
	}
	// The new configuration cannot be opened (too many descriptors, a
	// probe the kernel refuses): sample on with the one before.
	s.dropEvents()
	s.cfg = prev
	if err2 := s.reopen(); err2 != nil {
		return fmt.Errorf("%w; reopening the previous configuration failed too: %v", err, err2)
	}
	return fmt.Errorf("%w (sampling goes on as before)", err)
}

// dropEvents hands every event and ring to a goroutine that closes them and
// leaves the session with none.
func (s *Session) dropEvents() {
	for fd := range s.owners {
		unix.EpollCtl(s.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	old := &Session{tidFDs: s.tidFDs, cpuFDs: s.cpuFDs, rings: s.rings, exitedFDs: s.exitedFDs, probes: s.probes, held: s.held}
	s.held = nil
	s.rings, s.ringFD, s.owners, s.tidFDs, s.cpuFDs, s.exitedFDs = map[int]*ring{}, map[int]int{}, map[int]bool{}, map[int][]int{}, nil, nil
	s.publishRings()
	if len(old.held) > 0 {
		// Its tracefs probes are deleted once it is closed: Close waits.
		s.bg.Go(old.closeEvents)
	} else {
		go old.closeEvents()
	}
	s.ids, s.fdID, s.retired, s.retiring = map[uint64]EventRef{}, map[int]uint64{}, nil, nil
	s.leaders, s.root, s.heirs = map[int]bool{}, map[int]int{}, map[int]int{}
}

// reopen opens the configuration in force on every live thread.
func (s *Session) reopen() error {
	s.followForUprobes()
	s.poll.Store(int64(s.cfg.PollInterval))
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
	for fd := range s.leaders {
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
	// A stopped target (SIGSTOP, ^Z) would only act on SIGTERM once
	// continued.
	s.cmd.Process.Signal(unix.SIGCONT)
	s.endStop()
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
