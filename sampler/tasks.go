//go:build linux

package sampler

// Task accounting: which processes are the target's, whose events sample
// each task when events are inherited, whether a sample belongs to the
// target, and what is forgotten one drain later (IDs of closed events,
// ended processes) because records of it may still be in the rings. The
// thread table (threads.go) keeps which tasks are alive.

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// account keeps totals and thread bookkeeping for one record, and says
// whether the record is the target's.
func (s *Session) account(r *Record) bool {
	s.threads.now = max(s.threads.now, r.Time)
	if s.cfg.AllProcesses && !s.hostRecord(r) {
		return false
	}
	switch r.Kind {
	case KindSample:
		if !s.fromTarget(r) {
			return false
		}
		if r.OffCPU {
			s.stats.switchSamples.Add(1)
		} else {
			s.stats.samples.Add(1)
		}
	case KindSwitch:
		if !s.fromTarget(r) {
			return false
		}
		if r.SwitchOut() {
			s.stats.switches.Add(1)
		}
	case KindLost:
		s.stats.lost.Add(r.Lost)
	case KindThrottle:
		s.stats.throttled.Add(1)
	case KindFork:
		if s.early[int(r.TID)] || s.earlier[int(r.TID)] {
			// Its EXIT came first: it is gone already, and a process
			// it was alone in with it, once this FORK is handed on.
			delete(s.early, int(r.TID))
			delete(s.earlier, int(r.TID))
			s.stats.threadsNew.Add(1)
			if r.PID == r.TID && r.PID != r.PPID && s.threads.liveIn[int(r.PID)] == 0 {
				s.procsRetired = append(s.procsRetired, int(r.PID))
			}
			return true
		}
		if r.PID != r.PPID && s.procs[int(r.PPID)] && !s.procs[int(r.PID)] {
			s.procs[int(r.PID)] = true
			s.stats.processes.Add(1)
		}
		if s.born(int(r.PID), int(r.TID)) {
			s.stats.threadsNew.Add(1)
		}
		s.forked(int(r.TID), int(r.PTID), int(r.PID))
	case KindExit:
		if _, alive := s.threads.alive[int(r.TID)]; !alive && !s.rooted(int(r.TID)) {
			s.early[int(r.TID)] = true
		}
		s.endTask(int(r.TID))
	case KindComm:
		if r.Exec() && s.procs[int(r.PID)] {
			s.stats.execs.Add(1)
			s.mu.Lock()
			s.state.exec = r.Comm
			s.mu.Unlock()
			s.execed(int(r.PID))
		}
	}
	return true
}

// fromTarget reports whether a sample (or switch) of an AllTasks group
// belongs to the target: its process or one the target forked. The other
// events follow the target's tasks only.
func (s *Session) fromTarget(r *Record) bool {
	ref, ok := s.ids[r.ID]
	if !ok || !s.groups[ref.Group].allTasks {
		return true
	}
	return s.procs[int(r.PID)]
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
			s.endTask(tid)
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
		s.releaseEvents(tid)
	}
	s.root[tid] = r
	s.heirs[r]++
}

// endTask takes the exit of one of the target's tasks: it no longer counts
// as alive (a child process whose last thread it was ends), and the events
// that sample it are closed (followed threads) or released (inherited
// events).
func (s *Session) endTask(tid int) {
	s.died(tid)
	if s.cfg.Follow {
		s.closeThread(tid)
		return
	}
	if _, ok := s.root[tid]; ok && !s.rootEnded[tid] {
		s.releaseEvents(tid)
		// A FORK by this task may be read after its EXIT (written on
		// another CPU, whose ring was read later): until the drain after
		// next, the child still finds whose events it inherited.
		s.rootEnded[tid] = true
		s.rootsRetired = append(s.rootsRetired, tid)
	}
}

// releaseEvents ends tid's use of the events it is sampled by. When no
// other live task uses them they are closed, at the drain after next: a
// task they sample may have been created before this exit, with its FORK
// record still unread, and closing them now would end its sampling.
func (s *Session) releaseEvents(tid int) {
	r := s.root[tid]
	if s.heirs[r]--; s.heirs[r] <= 0 {
		s.unheired = append(s.unheired, r)
	}
}

// closeUnheired closes the events released before the previous drain that
// no task has inherited since, and forgets the tasks that ended then.
func (s *Session) closeUnheired() {
	for _, r := range s.unheiring {
		if s.heirs[r] <= 0 {
			delete(s.heirs, r)
			s.closeThread(r)
		}
	}
	s.unheiring, s.unheired = s.unheired, s.unheiring[:0]
	for _, tid := range s.rootsRetiring {
		if s.rootEnded[tid] {
			delete(s.root, tid)
			delete(s.rootEnded, tid)
		}
	}
	s.rootsRetiring, s.rootsRetired = s.rootsRetired, s.rootsRetiring[:0]
}

// useOwnEvents records that tid is sampled by events opened on it directly
// (not inherited): it is their root, and one of their users.
func (s *Session) useOwnEvents(tid int) {
	if s.cfg.Follow {
		return
	}
	if _, ok := s.root[tid]; !ok || s.rootEnded[tid] {
		// A new task under the number of one that ended.
		delete(s.rootEnded, tid)
		s.root[tid] = tid
		s.heirs[tid]++
	}
}

// rooted reports whether tid, a live task, is sampled by inherited events.
func (s *Session) rooted(tid int) bool {
	_, ok := s.root[tid]
	return ok && !s.rootEnded[tid]
}

// forgetRetired forgets the IDs of events closed before the previous drain:
// every record they wrote has been read since.
func (s *Session) forgetRetired() {
	for _, id := range s.retiring {
		delete(s.ids, id)
		s.decoder.forget(id)
	}
	s.retiring, s.retired = s.retired, s.retiring[:0]
	s.closeUnheired()
	s.forgetEnded()
	clear(s.earlier)
	s.earlier, s.early = s.early, s.earlier
}

// watch mends, when records were lost since the last look, the thread
// bookkeeping that lost EXIT records leave behind.
func (s *Session) watch() {
	if lost := s.stats.lost.Load(); lost != s.lastLost {
		s.lastLost = lost
		s.reconcile()
	}
}

// reconcile ends the threads that are gone although no EXIT record said so
// (it was lost with a full ring): their events are closed and they no
// longer count as alive.
func (s *Session) reconcile() {
	gone := func(tid int) bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(tid))
		return err != nil
	}
	for tid := range s.threads.alive {
		if gone(tid) {
			s.endTask(tid)
		}
	}
	for tid := range s.root {
		if gone(tid) && !s.rootEnded[tid] {
			s.endTask(tid)
		}
	}
	if s.cfg.Follow {
		for tid := range s.tidFDs {
			if gone(tid) {
				s.closeThread(tid)
			}
		}
	}
}
