//go:build linux

package sampler

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// attach opens events on every thread of a running process. Threads created
// later inherit the events from their creator; a thread created while the
// list was being walked is caught by walking it again until it is stable.
func (s *Session) attach() error {
	pid := s.cfg.PID
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		return &noProcessError{pid}
	}
	s.pid = pid
	s.procs[pid] = true
	if err := s.watchExit(pid); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return &noProcessError{pid}
		}
		return err
	}
	return s.openAllThreads()
}

// openAllThreads opens events on every thread of the target, walking the
// thread list again until no thread appeared meanwhile, then the AllTasks
// groups.
func (s *Session) openAllThreads() error {
	for round := 0; round < 10; round++ {
		added, err := s.scanThreads()
		if err != nil {
			return err
		}
		if added == 0 {
			break
		}
	}
	if len(s.tidFDs) == 0 {
		return &noProcessError{s.pid}
	}
	return s.openAllTasks()
}

// scanThreads opens events for threads of the target not yet covered.
func (s *Session) scanThreads() (added int, err error) {
	s.lastScan = time.Now()
	tids, err := listThreads(s.pid)
	if err != nil {
		if len(s.tidFDs) > 0 {
			return 0, nil // the process is exiting
		}
		return 0, &noProcessError{s.pid}
	}
	for _, tid := range tids {
		if _, ok := s.tidFDs[tid]; ok {
			continue
		}
		if err := s.openWithFallbacks(tid); err != nil {
			var gone *noProcessError
			if errors.As(err, &gone) {
				continue // exited while we looked
			}
			return added, err
		}
		added++
		if !s.alive[tid] {
			s.alive[tid] = true
			s.stats.threads.Add(1)
		}
		if s.generation == 0 {
			s.pending = append(s.pending, Record{Kind: KindComm, PID: uint32(s.pid), TID: uint32(tid), Comm: readComm(s.pid, tid)})
		}
	}
	return added, nil
}

func listThreads(pid int) ([]int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

func readComm(pid, tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", pid, tid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
