//go:build linux

package sampler

// The session as a whole: the Session type, which holds the state the other
// files of the package own parts of, Open, and what a session reports about
// itself (notes, totals, the events' IDs).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Session is an open event set on a target: per-CPU rings, one event group
// per (thread, CPU), or per CPU for every task (AllProcesses), and the
// target's lifecycle.
type Session struct {
	cfg  Config
	cpus []int
	// rejected: processes Config.Select does not take (systemwide.go).
	rejected   map[int]bool
	k          boundary
	rings      map[int]*ring // by CPU
	ringFD     map[int]int   // by CPU: the event whose ring the others write into
	ringOwners map[int]bool  // the fds in ringFD
	tidFDs     map[int][]int // by thread: its events (leaders and members)
	exitedFDs  []int         // probe events of exited threads, not closed yet (see closeThread)
	ids        map[uint64]EventRef
	cpuFDs     []int        // events of AllTasks groups
	procs      map[int]bool // the target's processes
	groups     []groupAttrs
	generation int
	leaders    map[int]bool // group leader descriptors, for pause and resume
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
	// AllProcesses: records made up for the processes first seen in the
	// drain under way, which go ahead of its records (systemwide.go),
	// and cctop's own PID, whose records are dropped (0: kept).
	firstSeen []Record
	self      int
	// followAuto: Follow was set because of per-thread uprobes, and goes
	// when they do; pollBefore is the poll interval it replaced.
	followAuto bool
	pollBefore time.Duration
	opening    bool // events are opened disabled (openAllThreads)

	// The reader goroutine (reader.go). readMu keeps it
	// off the rings while drain reads them itself and while Reconfigure
	// replaces them; ringList is the rings it reads.
	rd         *reader
	heldChunks []*chunk // decoded into the last batch, whose stacks are in them
	readMu     sync.Mutex
	ringList   atomic.Pointer[[]*ring]
	poll       atomic.Int64 // cfg.PollInterval, for the reader
	idlePoll   atomic.Int64 // cfg.IdlePoll, 0 while threads are followed
	woken      atomic.Bool  // Wake asked the reader for a pass
	ringBytes  atomic.Int64 // the data areas of ringList

	fdID map[int]uint64 // by descriptor: its event's ID, to retire it on close
	// IDs of closed events, forgotten one drain later: their thread's last
	// samples may still sit in another CPU's ring.
	retired, retiring []uint64
	// The same for child processes whose last thread exited: records of
	// theirs may still be in the rings (threads.go).
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
	// Tasks that ended, kept in root until the drain after next, and the
	// roots whose events no task uses, closed then (see releaseEvents).
	rootEnded                   map[int]bool
	rootsRetired, rootsRetiring []int
	unheired, unheiring         []int

	stats struct {
		samples, lost, throttled, corrupt, threadsNew atomic.Uint64
		switches, switchSamples, probes, probeMisses  atomic.Uint64
		processes, execs, missed                      atomic.Uint64
		threads                                       atomic.Int64
	}
	mu         sync.Mutex
	exitStatus *os.ProcessState
	state      targetState // guarded by mu
	lastScan   time.Time
	lastCheck  time.Time // of the target's run state (the reader's)
	lastLost   uint64    // stats.lost at the last reconcile
	threads    threadTable
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

	// Off-CPU stacks (offcpu.go): the wait probes' goroutine when they
	// run, the records it queues, the target's processes as it sees them,
	// and how far the rings have been read (CLOCK_MONOTONIC ns: the
	// probes' records up to there can be handed on). offCPU is what
	// OffCPU says, under mu.
	prober   *waitProber
	probeQ   *probeQueue
	procList atomic.Pointer[[]int]
	horizon  uint64
	offCPU   struct{ source, why string }
	// switchOff: the switch samples are turned off (SetSwitchSamples), and
	// every context-switches event is kept disabled, new ones included.
	switchOff bool
	// stackFor: the user stack copy of threads whose size SetUserStacks
	// changed, in bytes (stacksize.go); the others copy Config.UserStack.
	stackFor map[int]int
}

// Open starts sampling: it launches cfg.Argv with the events enabled from its
// first instruction, attaches to every thread of cfg.PID, or, with
// cfg.AllProcesses, samples every task on every CPU.
func Open(cfg Config) (*Session, error) { return openWith(cfg, kernelBoundary()) }

func openWith(cfg Config, k boundary) (*Session, error) {
	if cfg.AllProcesses {
		if err := cfg.systemWideErr(); err != nil {
			return nil, err
		}
	} else if (cfg.PID > 0) == (len(cfg.Argv) > 0) {
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
	if cpus, err = chooseCPUs(cpus, cfg.CPUs); err != nil {
		return nil, err
	}
	s := &Session{
		cfg: cfg, cpus: cpus, k: k, epfd: -1, pidfd: -1,
		rings: map[int]*ring{}, ringFD: map[int]int{}, ringOwners: map[int]bool{}, tidFDs: map[int][]int{},
		ids: map[uint64]EventRef{}, fdID: map[int]uint64{}, threads: newThreadTable(), procs: map[int]bool{},
		root: map[int]int{}, heirs: map[int]int{}, rootEnded: map[int]bool{}, leaders: map[int]bool{},
		early: map[int]bool{}, earlier: map[int]bool{},
	}
	s.excludeK = cfg.UserOnly
	if cfg.AllProcesses {
		s.threads.forgetExited = true
		if !cfg.IncludeSelf {
			s.self = os.Getpid()
		}
	}
	s.startTicks = uptimeTicks()
	s.followForUprobes()
	s.storePoll()
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
	switch {
	case cfg.AllProcesses:
		err = s.openSystemWide()
	case len(cfg.Argv) > 0:
		err = s.launch()
	default:
		err = s.attach()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.syncOffCPU()
	if !s.excludeK {
		if n := KallsymsNote(); n != "" {
			s.note(n)
		}
	}
	s.startReader()
	return s, nil
}

// CPUs is how many CPUs are sampled: every thread has an event group on each.
func (s *Session) CPUs() int { return len(s.cpus) }

// PID is the target process, 0 in an AllProcesses session.
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
// Config.Extra[i], len(Config.Extra)+1 the context-switch samples of
// Config.OffCPU) and its place in the group (0 the leader, i+1 Members[i]).
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

		Switches:      s.stats.switches.Load(),
		SwitchSamples: s.stats.switchSamples.Load(),
		Probes:        s.stats.probes.Load(),
		ProbeMisses:   s.stats.probeMisses.Load(),
	}
}

// Config is the configuration in force.
func (s *Session) Config() Config { return s.cfg }

// noProcessError: the thread or process is gone (or never was).
type noProcessError struct{ id int }

func (e *noProcessError) Error() string { return fmt.Sprintf("no such process: %d", e.id) }

// Is makes errors.Is(err, ErrNoProcess) true.
func (e *noProcessError) Is(target error) bool { return target == ErrNoProcess }
