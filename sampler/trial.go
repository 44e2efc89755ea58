//go:build linux

package sampler

import (
	"encoding/binary"
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
	// close closes the trial's events and releases its probes; called
	// after the probes that are kept have events of their own, so that
	// their uprobes stay registered instead of being torn down and set up
	// again.
	close func()
}

// Close closes the trial's events and releases its probes.
func (t *ProbeTrial) Close() {
	if t != nil && t.close != nil {
		t.close()
		t.close = nil
	}
}

// TrialProbes counts the calls to each of specs' functions made by threads
// tids for window, with counting events on those threads only (one group
// per thread, on any CPU: no rings, no samples), and the threads' CPU time
// (task-clock): the hit rate that placing the probes in every thread would
// cost, measured before it is paid. Every thread of the target traps on the
// probes during the window (a uprobe is placed in the process's code), so
// the window is short.
func (s *Session) TrialProbes(specs []EventSpec, tids []int, window time.Duration) (*ProbeTrial, error) {
	var held []uint64
	var ints []int
	closeTrial := func() {
		closeAll(ints)
		s.probes.release(held)
	}
	t := &ProbeTrial{Hits: make([]uint64, len(specs))}
	var leaders []int
	for _, tid := range tids {
		la := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Size: uint32(unsafeSizeofAttr), Read_format: readGroup, Bits: unix.PerfBitDisabled | unix.PerfBitExcludeHv}
		lfd, err := s.k.perfOpen(&la, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			continue // the thread is gone
		}
		ints = append(ints, lfd)
		ok := true
		for _, sp := range specs {
			ma := unix.PerfEventAttr{Size: la.Size, Read_format: readGroup, Bits: unix.PerfBitExcludeHv}
			var ga groupAttrs
			if s.probes.usable() {
				id, err := s.probes.acquire(sp.UprobePath, sp.UprobeOffset)
				if err != nil {
					closeTrial()
					return nil, err
				}
				held = append(held, id)
				ma.Type, ma.Config = unix.PERF_TYPE_TRACEPOINT, id
			} else if err := s.setEventPMU(&ma, sp, &ga); err != nil {
				closeTrial()
				return nil, err
			}
			fd, err := s.k.perfOpen(&ma, tid, -1, lfd, unix.PERF_FLAG_FD_CLOEXEC)
			runtime.KeepAlive(&ga) // the uprobe PMU's path, which config1 points at
			if err != nil {
				ok = false
				break
			}
			ints = append(ints, fd)
		}
		if ok {
			leaders = append(leaders, lfd)
		}
	}
	t.close = closeTrial
	if len(leaders) == 0 {
		return t, fmt.Errorf("no thread to count calls on")
	}
	for _, fd := range leaders {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, unix.PERF_IOC_FLAG_GROUP)
	}
	time.Sleep(window)
	buf := make([]byte, 8*(1+1+len(specs)))
	for _, fd := range leaders {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, unix.PERF_IOC_FLAG_GROUP)
		n, err := unix.Read(fd, buf)
		if err != nil || n < len(buf) {
			continue
		}
		// {nr, task-clock ns, hits of each probe}
		if binary.NativeEndian.Uint64(buf) != uint64(1+len(specs)) {
			continue
		}
		t.CPU += time.Duration(binary.NativeEndian.Uint64(buf[8:]))
		for i := range specs {
			t.Hits[i] += binary.NativeEndian.Uint64(buf[16+8*i:])
		}
	}
	return t, nil
}
