//go:build linux

package sampler

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// ProbeTrial is what a short count of calls found: the hits of each probe
// in the threads watched, and the CPU time those threads ran meanwhile.
type ProbeTrial struct {
	Hits []uint64
	CPU  time.Duration
	// The trial's events: the watched threads' clocks, and each probe's
	// counters with the probe ids they hold, by spec.
	leaders []int
	fds     [][]int
	ids     [][]uint64
	release func([]uint64)
}

// Close closes the trial's events and releases its probes.
func (t *ProbeTrial) Close() {
	if t == nil {
		return
	}
	closeAll(t.leaders)
	t.leaders = nil
	for i := range t.fds {
		t.closeSpec(i)
	}
}

// closeSpec closes spec i's events and releases its probe: its int3 leaves
// the target's code with the last event on it.
func (t *ProbeTrial) closeSpec(i int) {
	closeAll(t.fds[i])
	t.fds[i] = nil
	if t.release != nil && len(t.ids[i]) > 0 {
		t.release(t.ids[i])
	}
	t.ids[i] = nil
}

// Split hands back, as a trial of their own, the events of the specs keep
// says to keep, and the others, whose probes are declined, as another, so
// that the caller closes the declined ones at once and the kept ones only
// once their probes have events of their own (their uprobes then stay
// registered instead of being torn down and set up again).
func (t *ProbeTrial) Split(keep []bool) (kept, declined *ProbeTrial) {
	kept = &ProbeTrial{leaders: t.leaders, release: t.release}
	declined = &ProbeTrial{release: t.release}
	for i := range t.fds {
		to := declined
		if i < len(keep) && keep[i] {
			to = kept
		}
		to.fds = append(to.fds, t.fds[i])
		to.ids = append(to.ids, t.ids[i])
	}
	t.leaders, t.fds, t.ids = nil, nil, nil
	return kept, declined
}

// TrialProbes counts the calls to each of specs' functions made by threads
// tids for window, with counting events on those threads only (one group
// per thread, on any CPU: no rings, no samples), and the threads' CPU time
// (task-clock): the hit rate that placing the probes in every thread would
// cost, measured before it is paid. Every thread of the target traps on the
// probes during the window (a uprobe is placed in the process's code), so
// the window is short.
func (s *Session) TrialProbes(specs []EventSpec, tids []int, window time.Duration) (*ProbeTrial, error) {
	t := &ProbeTrial{Hits: make([]uint64, len(specs)), fds: make([][]int, len(specs)), ids: make([][]uint64, len(specs)),
		release: s.probes.release}
	leaders, err := s.trialGroups(t, tids, len(specs), func(i, tid, leader int) (int, error) {
		sp := specs[i]
		ma := unix.PerfEventAttr{Size: uint32(unsafeSizeofAttr), Read_format: readGroup, Bits: unix.PerfBitExcludeHv}
		var ga groupAttrs
		if s.probes.usable() {
			id, err := s.probes.acquire(sp.UprobePath, sp.UprobeOffset)
			if err != nil {
				return -1, fatalTrial{err}
			}
			t.ids[i] = append(t.ids[i], id)
			ma.Type, ma.Config = unix.PERF_TYPE_TRACEPOINT, id
		} else if err := s.setEventPMU(&ma, sp, &ga); err != nil {
			return -1, fatalTrial{err}
		}
		fd, err := s.k.perfOpen(&ma, tid, -1, leader, unix.PERF_FLAG_FD_CLOEXEC)
		runtime.KeepAlive(&ga) // the uprobe PMU's path, which config1 points at
		return fd, err
	})
	var fatal fatalTrial
	if errors.As(err, &fatal) {
		t.Close()
		return nil, fatal.error
	}
	if len(leaders) == 0 {
		return t, fmt.Errorf("no thread to count calls on")
	}
	readTrial(t, leaders, len(specs), window, 0, nil)
	return t, nil
}

// fatalTrial is a member's error that ends the whole trial, not only its
// thread's group.
type fatalTrial struct{ error }

// trialGroups opens on each thread of tids a task-clock leader, disabled,
// and n members made by member, filed in t.fds by index; member's error
// ends that thread's group, a fatalTrial the whole. Every leader goes into
// t.leaders, for Close; it returns those whose groups are whole, and the
// first error.
func (s *Session) trialGroups(t *ProbeTrial, tids []int, n int, member func(i, tid, leader int) (int, error)) ([]int, error) {
	var whole []int
	var first error
	for _, tid := range tids {
		la := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Size: uint32(unsafeSizeofAttr), Read_format: readGroup, Bits: unix.PerfBitDisabled | unix.PerfBitExcludeHv}
		lfd, err := s.k.perfOpen(&la, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			continue // the thread is gone
		}
		t.leaders = append(t.leaders, lfd)
		ok := true
		for i := range n {
			fd, err := member(i, tid, lfd)
			if err != nil {
				if _, fatal := err.(fatalTrial); fatal {
					return whole, err
				}
				first = cmp.Or(first, err)
				ok = false
				break
			}
			t.fds[i] = append(t.fds[i], fd)
		}
		if ok {
			whole = append(whole, lfd)
		}
	}
	return whole, first
}
