//go:build linux

package sampler

// The thread table: every thread of the target a profile names (those alive
// and those with samples), which of them are alive, in which process, and
// when an ended process is forgotten. One rule forgets a process: its last
// live thread has exited, and the drain after that one has passed (its last
// records, written on other CPUs, are read by then). Its events' IDs and
// its place among the target's processes go then, and a KindGone record
// tells the consumer to drop what it keeps of it (mappings).

import (
	"cmp"
	"maps"
	"os"
	"slices"
	"strconv"
)

// threadTable is owned by the goroutine that calls Next. Which tasks are
// alive is kept as records are decoded, in ring order (a task's events
// follow it); the rows of the table as batches are handed on, in time order,
// so that a thread's name, samples and exit come in the order they happened.
type threadTable struct {
	byTID map[uint32]*Thread
	alive map[int]int // the target's tasks that have not exited, and their process
	// liveIn counts each process's live threads: it has ended when they
	// are none.
	liveIn map[int]int
	seen   int    // rows ever made, a thread that came back twice
	now    uint64 // the latest record time, for the KindGone records
	// exitFirst are the threads whose exit was handed on with no row for
	// them, and when: their fork, read later from another CPU's ring,
	// makes none.
	exitFirst map[uint32]uint64
	// forgetExited (AllProcesses): only live threads have rows, which go
	// at their exit even with samples, so that the table keeps up with
	// the host's threads and no more. A thread that ended within the
	// batch that named or sampled it gets none.
	forgetExited bool
}

// maxExitFirst bounds threadTable.exitFirst.
const maxExitFirst = 4096

func newThreadTable() threadTable {
	return threadTable{byTID: map[uint32]*Thread{}, alive: map[int]int{}, liveIn: map[int]int{}, exitFirst: map[uint32]uint64{}}
}

// entry is tid's row, made when missing.
func (t *threadTable) entry(pid, tid uint32) *Thread {
	th := t.byTID[tid]
	if th == nil {
		th = &Thread{TID: tid, PID: pid}
		t.byTID[tid] = th
		t.seen++
	}
	return th
}

// add keeps the rows for one record handed on: a thread gets a row when it
// starts, is named or sampled, and loses it when it exits without samples
// to label.
func (t *threadTable) add(r *Record) {
	if t.forgetExited && t.byTID[r.TID] == nil {
		if _, ok := t.alive[int(r.TID)]; !ok {
			return
		}
	}
	switch r.Kind {
	case KindSample:
		if r.OffCPU {
			t.entry(r.PID, r.TID).OffCPU++
		} else {
			t.entry(r.PID, r.TID).Samples++
		}
	case KindComm:
		t.entry(r.PID, r.TID).Name = r.Comm
	case KindFork:
		if at, ok := t.exitFirst[r.TID]; ok {
			delete(t.exitFirst, r.TID)
			if at >= r.Time {
				// Its exit came first, from another CPU's ring in an
				// earlier batch: a row made now would never go.
				break
			}
		}
		if _, ok := t.byTID[r.TID]; !ok {
			name := ""
			if parent := t.byTID[r.PTID]; parent != nil {
				name = parent.Name
			}
			t.entry(r.PID, r.TID).Name = name
		}
	case KindExit:
		th := t.byTID[r.TID]
		if th != nil && (t.forgetExited || th.Samples == 0 && th.OffCPU == 0) {
			delete(t.byTID, r.TID)
		}
		if th == nil {
			// No row: its fork may not be handed on yet.
			if len(t.exitFirst) >= maxExitFirst {
				clear(t.exitFirst) // threads that were there before the target was attached
			}
			t.exitFirst[r.TID] = r.Time
		}
	}
}

// sweep drops the rows of threads not alive: with forgetExited, those of
// threads ended without an EXIT record (reconcile).
func (t *threadTable) sweep() {
	for tid := range t.byTID {
		if _, ok := t.alive[int(tid)]; !ok {
			delete(t.byTID, tid)
		}
	}
}

// born marks tid, a thread of process pid, alive, and reports whether it
// was not already.
func (s *Session) born(pid, tid int) bool {
	t := &s.threads
	if _, ok := t.alive[tid]; ok {
		return false
	}
	t.alive[tid] = pid
	t.liveIn[pid]++
	s.stats.threads.Add(1)
	return true
}

// died marks tid exited; a child process it was the last thread of ends.
func (s *Session) died(tid int) {
	t := &s.threads
	pid, ok := t.alive[tid]
	if !ok {
		return
	}
	delete(t.alive, tid)
	delete(s.stackFor, tid)
	s.stats.threads.Add(-1)
	if t.liveIn[pid]--; t.liveIn[pid] <= 0 {
		delete(t.liveIn, pid)
		if pid != s.pid && s.procs[pid] {
			s.procsRetired = append(s.procsRetired, pid)
		}
	}
}

// execed takes an exec in one of the target's processes: it ends every
// other thread of the process (each with an EXIT record), and the thread
// that ran it takes the leader's TID without one, so its old TID would
// stay alive for ever.
func (s *Session) execed(pid int) {
	t := &s.threads
	if _, ok := t.alive[pid]; ok && t.liveIn[pid] == 1 {
		return // the leader ran it, alone
	}
	for tid, p := range t.alive {
		if p == pid && tid != pid && !taskExists(pid, tid) {
			s.died(tid)
		}
	}
	s.born(pid, pid)
}

// forgetEnded forgets the processes that ended before the previous drain,
// unless a new process has taken the PID since, and queues their KindGone
// records.
func (s *Session) forgetEnded() {
	for _, pid := range s.procsRetiring {
		if s.threads.liveIn[pid] > 0 {
			continue // a new process of the same PID
		}
		delete(s.procs, pid)
		s.pending = append(s.pending, Record{Kind: KindGone, PID: uint32(pid), TID: uint32(pid), Time: s.threads.now})
	}
	s.procsRetiring, s.procsRetired = s.procsRetired, s.procsRetiring[:0]
}

// Threads is the target's threads a profile names: those alive and those
// with samples. Call it from the goroutine that calls Next.
func (s *Session) Threads() []Thread {
	out := make([]Thread, 0, len(s.threads.byTID))
	for _, th := range s.threads.byTID {
		out = append(out, *th)
	}
	slices.SortFunc(out, func(x, y Thread) int { return cmp.Compare(x.TID, y.TID) })
	return out
}

// BusiestThreads is up to n live threads with the most samples, busiest
// first: those a trial of counting probes learns most from. Call it from
// the goroutine that calls Next.
func (s *Session) BusiestThreads(n int) []int {
	t := &s.threads
	tids := slices.Collect(maps.Keys(t.alive))
	samples := func(tid int) uint64 {
		if th := t.byTID[uint32(tid)]; th != nil {
			return th.Samples
		}
		return 0
	}
	slices.SortFunc(tids, func(x, y int) int {
		return cmp.Or(cmp.Compare(samples(y), samples(x)), cmp.Compare(x, y))
	})
	tids = slices.DeleteFunc(tids, func(tid int) bool { return samples(tid) == 0 })
	return tids[:min(n, len(tids))]
}

// ThreadsSeen is how many threads the table has held, a thread counted again
// when it came back after it was dropped. Call it from the goroutine that
// calls Next.
func (s *Session) ThreadsSeen() int { return s.threads.seen }

func taskExists(pid, tid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid))
	return err == nil
}
