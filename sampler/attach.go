//go:build linux

package sampler

import (
	"errors"
	"fmt"
	"os"
	"slices"
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
//
// The events are opened disabled and enabled together at the end, as perf
// does: opening hundreds of threads' events takes a while on a busy
// machine, and events that sampled meanwhile would fill the rings before
// anything reads them (records lost), and start each thread's profile at a
// different time.
func (s *Session) openAllThreads() error {
	if s.generation > 0 {
		s.adoptChildren()
	}
	s.opening = true
	defer func() { s.opening = false }()
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
	if err := s.openAllTasks(); err != nil {
		return err
	}
	if err := s.Resume(); err != nil {
		s.note("enabling the events: " + err.Error())
	}
	s.opening = false
	// Disabled events report no forks. Inherited events reach what was
	// started meanwhile all the same; followed threads of the target are
	// found by the next scan, and child processes here.
	if s.cfg.Follow && s.adoptChildren() > 0 {
		if _, err := s.scanThreads(); err != nil && !errors.Is(err, ErrNoProcess) {
			s.note("children started while cctop attached: " + err.Error())
		}
	}
	return nil
}

// scanThreads opens events for threads of the target not yet covered: the
// threads of its process and of the child processes it started.
func (s *Session) scanThreads() (added int, err error) {
	s.lastScan = time.Now()
	type task struct{ pid, tid int }
	var fresh []task
	listed := map[int]bool{}
	complete := true
	for _, pid := range s.processes() {
		tids, err := listThreads(pid)
		if err != nil {
			if pid == s.pid && len(s.tidFDs) == 0 {
				return 0, &noProcessError{s.pid}
			}
			complete = false
			continue // exiting
		}
		for _, tid := range tids {
			listed[tid] = true
			if _, ok := s.tidFDs[tid]; !ok {
				fresh = append(fresh, task{pid, tid})
			}
		}
	}
	if complete && s.cfg.Follow {
		// A thread that ended without events of its own left no EXIT
		// record: end it here.
		for tid := range s.threads.alive {
			if !listed[tid] {
				s.endTask(tid)
			}
		}
	}
	if len(fresh) == 0 {
		return 0, nil
	}
	if err := s.ensureFiles(len(fresh)); err != nil {
		return 0, err
	}
	for _, t := range fresh {
		pid, tid := t.pid, t.tid
		if err := s.openWithFallbacks(tid); err != nil {
			var gone *noProcessError
			if errors.As(err, &gone) {
				continue // exited while we looked
			}
			return added, err
		}
		added++
		s.useOwnEvents(tid)
		s.born(pid, tid)
		if s.generation == 0 {
			s.pending = append(s.pending, Record{Kind: KindComm, PID: uint32(pid), TID: uint32(tid), Comm: readComm(pid, tid)})
		}
	}
	return added, nil
}

// adoptChildren adds to the target's processes those it started while no
// events were open to report it (during Reconfigure), found through
// /proc/PID/task/TID/children, and theirs: processes started since cctop
// began (older children were not the target's to follow when it attached).
func (s *Session) adoptChildren() (adopted int) {
	queue := s.processes()
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		tids, _ := listThreads(pid)
		for _, tid := range tids {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, tid))
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				child, err := strconv.Atoi(f)
				if err != nil || s.procs[child] || startTicks(child) < s.startTicks {
					continue
				}
				s.procs[child] = true
				s.stats.processes.Add(1)
				s.synthesize(child)
				queue = append(queue, child)
				adopted++
			}
		}
	}
	return adopted
}

// synthesize queues the records that would have come with a process had
// its FORK been seen: its threads' names and its executable mappings, from
// /proc, as perf synthesizes them for the processes it attaches to. Without
// them nothing of the process's code could be named.
func (s *Session) synthesize(pid int) {
	tids, _ := listThreads(pid)
	for _, tid := range tids {
		s.pending = append(s.pending, Record{Kind: KindComm, PID: uint32(pid), TID: uint32(tid), Comm: readComm(pid, tid)})
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if r, ok := mapsRecord(pid, line); ok {
			s.pending = append(s.pending, r)
		}
	}
}

// mapsRecord is the MMAP2 record of one executable mapping of a
// /proc/PID/maps line: "start-end perms offset major:minor inode path".
func mapsRecord(pid int, line string) (Record, bool) {
	var f [5]string
	rest := line
	for i := range f {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			if i < 4 {
				return Record{}, false
			}
			j = len(rest)
		}
		f[i], rest = rest[:j], rest[j:]
	}
	lo, hi, ok1 := strings.Cut(f[0], "-")
	maj, min, ok2 := strings.Cut(f[3], ":")
	if !ok1 || !ok2 || len(f[1]) != 4 || f[1][2] != 'x' {
		return Record{}, false
	}
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	off, err3 := strconv.ParseUint(f[2], 16, 64)
	major, err4 := strconv.ParseUint(maj, 16, 32)
	minor, err5 := strconv.ParseUint(min, 16, 32)
	inode, err6 := strconv.ParseUint(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil || err6 != nil || end <= start {
		return Record{}, false
	}
	path := strings.TrimSpace(rest)
	if path == "" {
		path = "//anon"
	}
	return Record{Kind: KindMmap, PID: uint32(pid), TID: uint32(pid), Addr: start, Len: end - start, PgOff: off,
		Major: uint32(major), Minor: uint32(minor), Inode: inode, Filename: path}, true
}

// startTicks is when process pid started, in clock ticks (USER_HZ, 100 a
// second) since boot; 0 if unknown.
func startTicks(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	// After ") ": state is field 3; starttime is field 22.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// uptimeTicks is the time since boot in clock ticks, as startTicks counts.
func uptimeTicks() uint64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	sec, _ := strconv.ParseFloat(f[0], 64)
	return uint64(sec * 100)
}

// processes are the target's process, then the child processes it started
// that have not exited, in order.
func (s *Session) processes() []int {
	pids := make([]int, 0, len(s.procs))
	for pid := range s.procs {
		if pid != s.pid {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return append([]int{s.pid}, pids...)
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
