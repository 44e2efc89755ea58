//go:build linux

package sampler

// System-wide sampling (Config.AllProcesses): every group's events opened
// once per CPU for every task (pid -1), which of the host's records are
// kept, and the processes tracked from their first sample to their end.
//
// The events number CPUs x the groups' leaders and members, whatever the
// threads and processes; the target modes have that many for each thread
// (opened by cctop, or copied by the kernel for an inheriting thread).
//
// The kernel reported the processes running before the session began
// (mappings, names) when they started, if ever: a process is tracked from
// its first sample, its threads and their names read from /proc then, and a
// KindNewProcess record tells the consumer to read its mappings there. A
// process created by a tracked one is tracked from its FORK record, as in
// the target modes. The records of processes not tracked are dropped, but
// for exits whose parent is tracked (a child's EXIT may be read before its
// FORK) and losses: what is never sampled costs nothing past decoding. A
// tracked process is forgotten (KindGone) the drain after its last thread
// exits, and a thread's row in the thread table goes with the thread. What
// the rings' races leave behind (a thread whose EXIT was read before it was
// listed in /proc) is mended by a look at /proc every hostScanEvery.
//
// Off-CPU time is refused: its stacks would be a stack copy at every
// context switch of every task on the host (hundreds of thousands a second
// on a busy server), without bound, and the wait probes' 16 threads a look
// cover nothing of thousands; the switch records alone, two per switch of
// every task, cost as much to decode as the samples.

import (
	"errors"
	"slices"
	"time"
)

// systemWideErr says what an AllProcesses configuration may not have.
func (c *Config) systemWideErr() error {
	switch {
	case c.PID != 0 || len(c.Argv) > 0:
		return errors.New("system-wide sampling takes no PID or command: it samples every process")
	case c.OffCPU:
		return errors.New("off-CPU time is not recorded system-wide: a stack at every context switch of every task on the host costs without bound; profile one process (a PID or a command) for it")
	}
	return nil
}

// hostScanEvery is how often an AllProcesses session looks in /proc for
// tracked threads gone without an EXIT record read.
const hostScanEvery = 10 * time.Second

// openSystemWide opens every group once per CPU for every task, disabled,
// and enables them together.
func (s *Session) openSystemWide() error {
	if err := s.cfg.systemWideErr(); err != nil {
		return err
	}
	if err := s.ensureFiles(1); err != nil {
		return err
	}
	s.cfg.Follow = false // no thread is opened: nothing to follow
	s.opening = true
	defer func() { s.opening = false }()
	s.lastScan = time.Now()
	// tidFDs[-1]: the events of "every task", which no EXIT closes.
	if err := s.openThread(-1); err != nil {
		return s.openErr(err, -1)
	}
	if err := s.Resume(); err != nil {
		s.note("enabling the events: " + err.Error())
	}
	return nil
}

// hostRecord is account's first look at a record of an AllProcesses
// session: it drops the idle task's records, cctop's own, and those of
// processes not tracked, and starts tracking a process at its first sample.
func (s *Session) hostRecord(r *Record) bool {
	switch r.Kind {
	case KindLost, KindThrottle, KindUnthrottle:
		return true
	}
	pid := int(r.PID)
	if pid == 0 || pid == s.self {
		return false
	}
	switch r.Kind {
	case KindSample, KindSwitch:
		if !s.procs[pid] {
			if !s.selects(pid) {
				return false
			}
			s.adopt(pid)
		}
		return true
	case KindFork:
		if r.PID != r.PPID {
			// A new process starts with its parent's mappings: the
			// FORK of an untracked parent would leave it none. It is
			// tracked from /proc if it is sampled.
			return s.procs[int(r.PPID)]
		}
	case KindExit:
		if r.PID == r.TID {
			delete(s.rejected, pid) // its pid may come back as another program
		}
		// A child's EXIT may be read before its FORK: see account.
		return s.procs[pid] || s.procs[int(r.PPID)]
	case KindComm:
		if r.Exec() {
			delete(s.rejected, pid) // another program now: looked at again
		}
	}
	return s.procs[pid]
}

// maxRejected bounds the processes remembered as not selected: past it
// they are forgotten and looked at again at their next sample.
const maxRejected = 1 << 16

// selects says whether Config.Select takes process pid, first sampled
// now: by its pid, or by its name read from /proc once (a process not
// taken is remembered until it exits or executes another program).
func (s *Session) selects(pid int) bool {
	sel := s.cfg.Select
	if sel == nil || slices.Contains(sel.PIDs, pid) {
		return true
	}
	if len(sel.Names) == 0 || s.rejected[pid] {
		return false
	}
	if slices.Contains(sel.Names, readComm(pid, pid)) {
		return true
	}
	if s.rejected == nil || len(s.rejected) >= maxRejected {
		s.rejected = map[int]bool{}
	}
	s.rejected[pid] = true
	return false
}

// adopt starts tracking process pid, first sampled now: its threads are
// listed and named from /proc, and a KindNewProcess record goes ahead of
// the batch's records.
func (s *Session) adopt(pid int) {
	s.procs[pid] = true
	s.stats.processes.Add(1)
	// A process that ended under this PID is superseded: forgetting it
	// after the new one was read would forget the new one.
	s.pending = slices.DeleteFunc(s.pending, func(r Record) bool { return r.Kind == KindGone && int(r.PID) == pid })
	s.firstSeen = append(s.firstSeen, Record{Kind: KindNewProcess, PID: uint32(pid), TID: uint32(pid)})
	tids, _ := listThreads(pid)
	for _, tid := range tids {
		if s.early[tid] || s.earlier[tid] {
			continue // its EXIT was read already
		}
		if s.born(pid, tid) {
			s.firstSeen = append(s.firstSeen, Record{Kind: KindComm, PID: uint32(pid), TID: uint32(tid), Comm: readComm(pid, tid)})
		}
	}
	if s.threads.liveIn[pid] == 0 {
		// Gone before it could be listed: forgotten once its last
		// records are read.
		s.procsRetired = append(s.procsRetired, pid)
	}
}

// takeFirstSeen adds to b the records made up for processes first seen in
// it: at Time 0 they sort ahead of its records.
func (s *Session) takeFirstSeen(b *Batch) {
	for i := range s.firstSeen {
		b.add(&s.firstSeen[i])
	}
	s.firstSeen = s.firstSeen[:0]
}

// scanHost ends the tracked threads gone from /proc without an EXIT record
// read (lost with a full ring, or read before the thread was listed), and
// drops the thread table's rows of threads no longer alive, every
// hostScanEvery. It stands for watch, which looks after every drain that
// lost records: on a busy host that is most of them, and a look at
// thousands of threads each time would cost more than the sampling.
func (s *Session) scanHost() {
	if time.Since(s.lastScan) < hostScanEvery {
		return
	}
	s.lastScan = time.Now()
	s.reconcile()
	s.threads.sweep()
}
