package sampler

import (
	"errors"
	"io"
	"time"
)

// ErrNoProcess matches errors about a target (or thread) that is gone.
var ErrNoProcess = errors.New("no such process")

// Config says what to sample and how.
// Selection is which processes an AllProcesses session samples: those
// whose pid is one of PIDs, and those whose name (their comm, as pidof
// matches a program) is one of Names, a process taken at its first sample,
// so that one started later (a new postgres backend) is too. The processes
// a selected one creates are sampled with it.
type Selection struct {
	PIDs  []int
	Names []string
}

type Config struct {
	// Exactly one of PID (attach), Argv (launch) and AllProcesses is set.
	PID  int
	Argv []string
	// AllProcesses samples every process on the host: each group's
	// events are opened once per CPU for every task (pid -1), so that the
	// events number groups x events x CPUs whatever the threads and
	// processes. It needs kernel.perf_event_paranoid <= 0, or CAP_PERFMON
	// or root (SystemWideAllowed). A process is tracked from its first
	// sample (KindNewProcess) or its creation by a tracked one, and
	// forgotten when it ends (KindGone); the idle task is not sampled.
	// The session runs until the caller's context ends or Close. OffCPU
	// is refused with it (see systemwide.go).
	AllProcesses bool
	// IncludeSelf keeps cctop's own process in an AllProcesses session,
	// which otherwise leaves it out: the profiler sampling itself is
	// noise.
	IncludeSelf bool
	// Select limits an AllProcesses session to some processes and those
	// they create from then on (nil: every process).
	Select *Selection
	// CPUs limits the events to these CPUs (perf's -C): every online one
	// when empty. A CPU that is not online is an error at Open.
	CPUs []int
	// For a launched command.
	Dir            string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	Leader EventSpec // default cpu-clock
	Freq   uint64    // samples per second (frequency mode), used when Period is 0
	Period uint64    // fixed period in the leader's unit
	// UserOnly samples user space only. Without it kernel frames are
	// included where the kernel permits, and user space alone where not.
	UserOnly bool
	// Members are counted alongside the leader and read on every sample.
	Members []EventSpec
	// Extra are further sampling groups, each with its own leader: the
	// calls and exact triggers sample on one uprobe per function.
	Extra []Group
	// UserStack, when positive, copies that many bytes of each sample's
	// user stack (rounded up to 8) along with every user register, for
	// unwinding in user space (Record.Stack, Record.Regs). Zero copies
	// the two words a function's entry needs.
	UserStack int
	// BranchStack, when not 0, is the branch_sample_type of the first
	// group's samples (BranchAny|BranchUser, say): each sample carries the
	// CPU's last taken branches (Record.Branches). Only a PMU with branch
	// records has them (ProbeBranchStack).
	BranchStack uint64
	// RingPages is the size of each per-CPU ring in pages (power of two).
	RingPages int
	// Follow tracks threads by opening events for each new thread instead of
	// by inheritance. Chosen automatically where the kernel refuses
	// inherited events with PERF_SAMPLE_READ (before 6.12).
	Follow bool
	// PollInterval bounds how long records wait in the rings.
	PollInterval time.Duration
	// IdlePoll, when above PollInterval, lets the poll interval double
	// while passes over the rings find nothing, up to IdlePoll: an idle
	// target then costs a wake-up a second, not ten. Wake ends a wait at
	// once for a consumer with something to do. Followed threads keep
	// PollInterval: their FORK records wake no reader.
	IdlePoll time.Duration
	// WakeupDiv sets when a ring wakes the reader: when 1/WakeupDiv of
	// it is full (0: 4, a quarter). An always-on agent wakes on its poll
	// interval instead, with rings that hold more than one (2: half).
	WakeupDiv int
	// OffCPU records the target's context switches (KindSwitch) and the
	// stacks of its threads off the CPU (Record.OffCPU): a sample at
	// every switch out where the kernel lets cctop sample kernel events,
	// else probes of blocked threads' user stacks read from /proc
	// (Session.OffCPU says which). Session.SetSwitchSamples turns the
	// switch samples off, the probes taking over, and on again. Every event then times its records
	// with CLOCK_MONOTONIC, the probes' clock.
	OffCPU bool
	// OffCPUProbe takes off-CPU stacks with the probes even where
	// switch samples are allowed.
	OffCPUProbe bool
	// NoGroupRead leaves the leader's count out of the primary group's
	// samples when it has no members: the caller weighs no sample by its
	// interval. Reading it costs a target every context switch.
	NoGroupRead bool
	// ProbeHz is how often the probes look at blocked threads (default
	// DefaultProbeHz); each look reads at most MaxProbeThreads threads.
	ProbeHz int
}

// DefaultProbeHz is the probes' default rate, and MaxProbeThreads how many
// threads one look reads at most, round robin over the target's threads:
// the cost is bounded whatever the number of threads.
const (
	DefaultProbeHz  = 100
	MaxProbeThreads = 16
)

// Where off-CPU stacks come from (Session.OffCPU).
const (
	OffCPUSwitchSamples = "switch samples"
	OffCPUWaitProbes    = "wait probes"
)

// MaxUserStack is the largest user stack copy the kernel allows: a record
// is at most 64 KiB, and the size must be a multiple of 8.
const MaxUserStack = 65528

// Stats are running totals, safe to read while sampling.
type Stats struct {
	Samples    uint64
	Lost       uint64 // records the kernel dropped because a ring was full
	Throttled  uint64 // throttle events: the kernel lowered the rate
	Corrupt    uint64 // ring batches dropped at a malformed header
	Threads    int    // threads seen alive
	ThreadsNew uint64 // threads created since start
	// With Config.OffCPU: switches out of the CPU recorded, samples
	// taken at them, probes of blocked threads that gave a stack, and
	// probes that did not (the thread ran again, or was gone).
	Switches, SwitchSamples, Probes, ProbeMisses uint64
}

// Thread is one of the target's threads as a profile names it.
type Thread struct {
	TID, PID uint32
	Name     string
	Samples  uint64 // the target's samples taken on it so far
	// OffCPU is its off-CPU samples (Record.OffCPU) so far, which
	// Samples leaves out: the thread's row stays for them too.
	OffCPU uint64
}

// Group is one event group: a sampling leader and the counters read with it
// on every sample.
type Group struct {
	Leader  EventSpec
	Freq    uint64 // used when Period is 0
	Period  uint64
	Members []EventSpec
	// AllTasks asks that a uprobe-led group see a new thread's first
	// call. Tracefs probes (tracefs.go) do it by inheritance, like every
	// other group. Uprobe PMU leaders cannot be inherited (see
	// followForUprobes), and opening them per thread after the fact
	// misses calls: with those the group is opened once per CPU for every
	// task (pid -1), keeping only the target's samples, and every process
	// that maps the probed file traps on it. Only the primary group's
	// events track the target.
	AllTasks bool
}

// groups is the primary group followed by the extra ones.
func (c *Config) groups() []Group {
	return append([]Group{{Leader: c.Leader, Freq: c.Freq, Period: c.Period, Members: c.Members}}, c.Extra...)
}

// TargetState says what became of the target besides its samples.
type TargetState struct {
	Stopped    bool          // stopped now (SIGSTOP, SIGTSTP, a debugger)
	Stops      int           // times it was seen stopped
	StoppedFor time.Duration // time spent stopped, the current stop included
	Processes  uint64        // child processes it started, sampled with it (AllProcesses: processes tracked)
	Execs      uint64        // programs its processes executed
	Exec       string        // the command name after the last exec
	Missed     uint64        // threads gone before cctop could open events on them
}
