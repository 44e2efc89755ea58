//go:build linux

package sampler

import (
	"slices"
	"testing"
)

// PIDs above the kernel's largest pid_max (2^22): no such task exists here,
// so /proc says each of them is gone.
const fakePID = 1 << 22

// tableSession is a session with no events, its target process fakePID,
// that takes records as the rings would hand them over.
func tableSession() *Session {
	s := &Session{
		pid: fakePID, procs: map[int]bool{fakePID: true}, threads: newThreadTable(),
		ids: map[uint64]EventRef{}, root: map[int]int{}, heirs: map[int]int{}, rootEnded: map[int]bool{},
		early: map[int]bool{}, earlier: map[int]bool{},
	}
	s.born(fakePID, fakePID)
	return s
}

// drainOf is one drain of records rs: what Next would hand on.
func (s *Session) drainOf(rs ...Record) []Record {
	b := s.startBatch()
	for _, r := range rs {
		if s.account(&r) {
			b.add(&r)
		}
	}
	return slices.Clone(s.endBatch(b).Records)
}

func gonePIDs(rs []Record) []int {
	var pids []int
	for _, r := range rs {
		if r.Kind == KindGone {
			pids = append(pids, int(r.PID))
		}
	}
	return pids
}

// TestThreadTableForget: a child process is forgotten (a KindGone record,
// and no longer the target's) one drain after its last thread exits, not
// when its leader does; a new process that takes an ended one's PID keeps
// it; a thread that exits without samples leaves the table, a sampled one
// stays for its label; an exec by a thread other than the leader leaves
// one live thread, the leader.
func TestThreadTableForget(t *testing.T) {
	s := tableSession()
	p := func(n int) uint32 { return uint32(fakePID + 10*n) }
	fork := func(pid, tid uint32) Record {
		return Record{Kind: KindFork, PID: pid, TID: tid, PPID: fakePID, PTID: fakePID}
	}
	exit := func(pid, tid uint32) Record { return Record{Kind: KindExit, PID: pid, TID: tid} }
	sample := func(pid, tid uint32) Record { return Record{Kind: KindSample, PID: pid, TID: tid} }
	comm := func(pid, tid uint32, name string, exec bool) Record {
		r := Record{Kind: KindComm, PID: pid, TID: tid, Comm: name}
		if exec {
			r.Misc = miscCommExec
		}
		return r
	}

	s.drainOf(comm(fakePID, fakePID, "target", false),
		fork(p(2), p(2)), fork(p(2), p(2)+1), sample(p(2), p(2)), exit(p(2), p(2)+1), exit(p(2), p(2)),
		fork(p(3), p(3)), fork(p(3), p(3)+1), exit(p(3), p(3)),
		fork(p(4), p(4)), exit(p(4), p(4)), fork(p(4), p(4)))
	if th := s.threads.byTID[p(2)+1]; th != nil {
		t.Errorf("thread %d exited without samples but stays: %+v", p(2)+1, th)
	}
	if th := s.threads.byTID[p(2)]; th == nil || th.Samples != 1 || th.Name != "target" {
		t.Errorf("sampled thread %d: %+v, want its sample and the name it inherited", p(2), th)
	}
	if s.ThreadsSeen() != 7 {
		t.Errorf("%d threads seen, want 7 (the target, 2 threads of %d, 2 of %d, and %d twice)", s.ThreadsSeen(), p(2), p(3), p(4))
	}
	if got := s.Stats().Threads; got != 3 {
		t.Errorf("%d threads alive, want 3 (the target, %d, %d)", got, p(3)+1, p(4))
	}
	// The drain after: records of process 2 written on other CPUs may
	// still come; it is forgotten at its end.
	if got := gonePIDs(s.drainOf(sample(p(2), p(2)))); len(got) != 0 {
		t.Errorf("forgotten before the drain after its end: %v", got)
	}
	if !s.procs[int(p(3))] || !s.procs[int(p(4))] {
		t.Error("a process with a live thread was forgotten")
	}
	// Process 3's leader exited; its other thread runs on and is sampled.
	if got := gonePIDs(s.drainOf(sample(p(3), p(3)+1))); !slices.Equal(got, []int{int(p(2))}) {
		t.Errorf("gone %v, want [%d]", got, p(2))
	}
	if s.procs[int(p(2))] || !s.procs[int(p(3))] {
		t.Errorf("the target's processes: %v", s.procs)
	}
	s.drainOf(sample(p(3), p(3)+1), exit(p(3), p(3)+1))
	s.drainOf()
	if got := gonePIDs(s.drainOf()); !slices.Equal(got, []int{int(p(3))}) {
		t.Errorf("gone %v, want [%d] once its last thread exited", got, p(3))
	}

	// Process 5's second thread runs exec: the leader exits, and the thread
	// comes back as the leader, with no EXIT for its own TID.
	s.drainOf(fork(p(5), p(5)), fork(p(5), p(5)+1), exit(p(5), p(5)), comm(p(5), p(5), "new", true))
	_, leader := s.threads.alive[int(p(5))]
	_, old := s.threads.alive[int(p(5))+1]
	if !leader || old || s.threads.liveIn[int(p(5))] != 1 {
		t.Errorf("after the exec: alive %v, live threads of %d: %d; want only the leader", s.threads.alive, p(5), s.threads.liveIn[int(p(5))])
	}
	s.drainOf(exit(p(5), p(5)))
	if got := gonePIDs(append(s.drainOf(), s.drainOf()...)); !slices.Contains(got, int(p(5))) {
		t.Errorf("gone %v: the exec'd process %d did not end with its leader", got, p(5))
	}
	if !s.procs[int(p(4))] || s.threads.liveIn[int(p(4))] != 1 {
		t.Errorf("process %d, reborn under the PID of an ended one, was forgotten", p(4))
	}
}

// TestLateForkKeepsEvents: with inherited events, a thread's EXIT read
// before the FORK of the thread it created just before (another CPU's ring
// read first) must not close the events the child inherited: they close
// once no task uses them at the drain after next, and a task that ended
// stays known as a root until then.
func TestLateForkKeepsEvents(t *testing.T) {
	for _, late := range []bool{true, false} {
		s := tableSession()
		relay, worker := fakePID+1, fakePID+2
		s.born(fakePID, relay)
		s.useOwnEvents(fakePID)
		s.useOwnEvents(relay)
		exit := Record{Kind: KindExit, PID: fakePID, TID: uint32(relay)}
		fork := Record{Kind: KindFork, PID: fakePID, TID: uint32(worker), PPID: fakePID, PTID: uint32(relay)}
		if late {
			s.drainOf(exit)
			s.drainOf(fork)
		} else {
			s.drainOf(exit)
		}
		s.drainOf()
		s.drainOf()
		_, open := s.heirs[relay]
		if late && (!open || s.root[worker] != relay) {
			t.Errorf("late FORK: the relay's events closed (heirs %v), worker's root %d", s.heirs, s.root[worker])
		}
		if !late && open {
			t.Errorf("no FORK: the relay's events still open (heirs %v)", s.heirs)
		}
		if _, ok := s.root[relay]; ok {
			t.Errorf("late %v: the ended relay still a root after two drains", late)
		}
	}
}

// TestThreadTableExitBeforeFork: a short-lived thread's exit, read from one
// CPU's ring, is handed on a drain before its fork, read late from
// another's: no row is left for it. A later thread that takes the TID gets
// its row.
func TestThreadTableExitBeforeFork(t *testing.T) {
	s := tableSession()
	tid := uint32(fakePID + 7)
	s.drainOf(Record{Kind: KindExit, PID: fakePID, TID: tid, Time: 200})
	s.drainOf(Record{Kind: KindFork, PID: fakePID, TID: tid, PPID: fakePID, PTID: fakePID, Time: 100})
	if th := s.threads.byTID[tid]; th != nil {
		t.Errorf("thread %d exited before its fork was read, and stays: %+v", tid, th)
	}
	s.drainOf(Record{Kind: KindFork, PID: fakePID, TID: tid, PPID: fakePID, PTID: fakePID, Time: 300})
	if th := s.threads.byTID[tid]; th == nil {
		t.Errorf("a new thread %d with the TID has no row", tid)
	}
}
