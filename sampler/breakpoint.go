//go:build linux

package sampler

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Hardware execution breakpoints (the CPU's debug registers, through
// perf's breakpoint PMU) count the calls of a function in one thread
// without writing into the process's code. That is what a trial wants: a
// uprobe's int3 traps in every thread of the process, and it leaves the code
// only late in the close of its last event, after the kernel's grace
// periods: a trial on a function called 3,000 times a ms kept the target
// trapping for 100-300 ms after the trial ended (BENCHMARKS.md, "What a
// trial costs"). A breakpoint counts in the threads it is opened on, and is
// gone when its event is closed. There are four debug registers a thread.

// maxBreakpoints is how many execution breakpoints a thread can hold.
const maxBreakpoints = 4

// bpLen is the length perf wants for an execution breakpoint: a long.
const bpLen = 8 >> (^uintptr(0)>>63 ^ 1) // 8 on 64-bit, 4 on 32-bit

// hwBreakpointX is HW_BREAKPOINT_X: break on execution.
const hwBreakpointX = 4

func breakpointAttr(addr uint64) unix.PerfEventAttr {
	return unix.PerfEventAttr{Type: unix.PERF_TYPE_BREAKPOINT, Size: uint32(unsafeSizeofAttr),
		Read_format: readGroup, Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
		Bp_type: hwBreakpointX, Ext1: addr, Ext2: uint64(bpLen)}
}

// OpenBreakpointCounter counts executions of the instruction at addr in
// thread tid (0: the caller), on any CPU.
func OpenBreakpointCounter(addr uint64, tid int) (*Counter, error) {
	a := breakpointAttr(addr)
	a.Read_format = 0
	fd, err := unix.PerfEventOpen(&a, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &Counter{fd: fd}, nil
}

// maxMapsBytes bounds what is read of a target's /proc/PID/maps: the
// target's data, and a process with a million mappings is not one to walk
// for a trial.
const maxMapsBytes = 8 << 20

// fileAddr is where the byte at file offset off of the file path (device
// and inode as stat gives them) is mapped executable in process pid.
func fileAddr(pid int, path string, off uint64) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMapsBytes))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		r, ok := mapsRecord(pid, line)
		if !ok || r.Inode != st.Ino || uint64(unix.Mkdev(r.Major, r.Minor)) != uint64(st.Dev) {
			continue
		}
		if off >= r.PgOff && off-r.PgOff < r.Len {
			return r.Addr + off - r.PgOff, nil
		}
	}
	return 0, fmt.Errorf("%s+%#x is not mapped executable in process %d", path, off, pid)
}

// TrialBreakpoints is TrialProbes with hardware breakpoints in place of
// uprobes: only the watched threads pay, for the window only, or only for
// early where enough says the counts by then tell. specs are
// uprobe specs (file and offset), at most four; it fails where the
// breakpoint PMU or a debug register is not to be had (a VM without them,
// a debugger holding them), and the caller may try uprobes.
func (s *Session) TrialBreakpoints(specs []EventSpec, tids []int, window, early time.Duration, enough func([]uint64, time.Duration) bool) (*ProbeTrial, error) {
	if len(specs) > maxBreakpoints {
		return nil, fmt.Errorf("%d functions to count, %d debug registers", len(specs), maxBreakpoints)
	}
	t := &ProbeTrial{Hits: make([]uint64, len(specs)), fds: make([][]int, len(specs)), ids: make([][]uint64, len(specs))}
	addrs := map[int][]uint64{} // by process; nil: not all mapped
	var firstErr error
	leaders, err := s.trialGroups(t, tids, len(specs), func(i, tid, leader int) (int, error) {
		pid := tgidOf(tid)
		as, ok := addrs[pid]
		if !ok {
			for _, sp := range specs {
				a, err := fileAddr(pid, sp.UprobePath, sp.UprobeOffset)
				if err != nil {
					as, firstErr = nil, cmp.Or(firstErr, err)
					break
				}
				as = append(as, a)
			}
			addrs[pid] = as
		}
		if as == nil {
			return -1, errNotMapped
		}
		ma := breakpointAttr(as[i])
		return s.k.perfOpen(&ma, tid, -1, leader, unix.PERF_FLAG_FD_CLOEXEC)
	})
	if len(leaders) == 0 {
		t.Close()
		err = cmp.Or(firstErr, err, error(fmt.Errorf("no thread to count calls on")))
		return nil, fmt.Errorf("hardware breakpoints: %w", err)
	}
	readTrial(t, leaders, len(specs), window, early, enough)
	// Gone at once: no int3 to wait for.
	t.Close()
	return t, nil
}

// readTrial enables the trial's groups for window and adds up what their
// leaders read: {nr, task-clock ns, each member's count}. With enough, it
// looks after early, and stops there if enough says the counts so far
// tell (a function so hot that more of the window would only cost).
func readTrial(t *ProbeTrial, leaders []int, n int, window, early time.Duration, enough func([]uint64, time.Duration) bool) {
	for _, fd := range leaders {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_ENABLE, unix.PERF_IOC_FLAG_GROUP)
	}
	buf := make([]byte, 8*(1+1+n))
	sum := func() {
		clear(t.Hits)
		t.CPU = 0
		for _, fd := range leaders {
			got, err := unix.Read(fd, buf)
			if err != nil || got < len(buf) || binary.NativeEndian.Uint64(buf) != uint64(1+n) {
				continue
			}
			t.CPU += time.Duration(binary.NativeEndian.Uint64(buf[8:]))
			for i := range n {
				t.Hits[i] += binary.NativeEndian.Uint64(buf[16+8*i:])
			}
		}
	}
	if enough != nil && early > 0 && early < window {
		time.Sleep(early)
		sum()
		if !enough(t.Hits, t.CPU) {
			time.Sleep(window - early)
		}
	} else {
		time.Sleep(window)
	}
	for _, fd := range leaders {
		unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_DISABLE, unix.PERF_IOC_FLAG_GROUP)
	}
	sum()
}

// tgidOf is the process thread tid belongs to (tid itself when /proc does
// not say).
func tgidOf(tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return tid
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			var pid int
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &pid); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return tid
}

// errNotMapped: a thread of a process that does not map every function.
var errNotMapped = errors.New("not mapped")
