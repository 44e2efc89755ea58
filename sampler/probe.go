//go:build linux

package sampler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ProbeEvent opens spec as a sampling event on the calling thread and closes
// it: the cheapest true answer to "can I sample with this here?".
func ProbeEvent(spec EventSpec, userOnly bool) error {
	a := unix.PerfEventAttr{
		Type: spec.Type, Config: spec.Config, Size: uint32(unsafeSizeofAttr),
		Sample: 1000, Sample_type: sampleIP | sampleCallchain,
		Bits: unix.PerfBitDisabled | unix.PerfBitFreq | unix.PerfBitExcludeHv,
	}
	if userOnly {
		a.Bits |= unix.PerfBitExcludeKernel
	}
	fd, err := unix.PerfEventOpen(&a, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// ProbeStackCopy checks that samples may carry a copy of the user stack
// and registers (PERF_SAMPLE_STACK_USER, PERF_SAMPLE_REGS_USER), which
// DWARF unwinding needs.
func ProbeStackCopy() error {
	if unwindRegsMask == 0 {
		return errors.New("cctop does not know this architecture's registers")
	}
	a := unix.PerfEventAttr{
		Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Size: uint32(unsafeSizeofAttr),
		Sample: 1000, Sample_type: sampleIP | sampleRegsUser | sampleStackUser,
		Sample_regs_user: unwindRegsMask, Sample_stack_user: 8192,
		Bits: unix.PerfBitDisabled | unix.PerfBitFreq | unix.PerfBitExcludeHv | unix.PerfBitExcludeKernel,
	}
	fd, err := unix.PerfEventOpen(&a, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// ProbeBranchStack opens, and closes, a cycles event on the calling thread
// that samples the user-space taken branches: nil when this machine's PMU
// records branch stacks (Intel LBR, Arm BRBE, AMD LbrExtV2) and cctop may
// read them, else why not.
func ProbeBranchStack() error {
	a := unix.PerfEventAttr{
		Type: unix.PERF_TYPE_HARDWARE, Config: unix.PERF_COUNT_HW_CPU_CYCLES, Size: uint32(unsafeSizeofAttr),
		Sample: 100003, Sample_type: sampleIP | sampleBranch,
		Branch_sample_type: BranchAny | BranchUser,
		Bits:               unix.PerfBitDisabled | unix.PerfBitExcludeHv | unix.PerfBitExcludeKernel,
	}
	fd, err := unix.PerfEventOpen(&a, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	switch {
	case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV):
		return fmt.Errorf("no hardware PMU here (cycles: %v), so no branch records", err)
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL):
		return fmt.Errorf("the PMU records no branch stacks (LBR, BRBE): %v", err)
	case err != nil:
		return err
	}
	return unix.Close(fd)
}

// UprobeType is the dynamic PMU type of uprobe events, or an error saying
// why there is none.
func UprobeType() (uint32, error) {
	b, err := os.ReadFile("/sys/bus/event_source/devices/uprobe/type")
	if err != nil {
		return 0, fmt.Errorf("no uprobe PMU (/sys/bus/event_source/devices/uprobe): kernel built without CONFIG_UPROBE_EVENTS?")
	}
	t, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("uprobe PMU type %q: %v", b, err)
	}
	return uint32(t), nil
}

// Counter is a counting (non-sampling) event.
type Counter struct{ fd int }

// OpenUprobeCounter counts entries to the instruction at file offset off of
// the ELF file path, in thread tid (0 = the caller) on any CPU. The uprobe
// lives as long as the descriptor: nothing is left behind in tracefs.
func OpenUprobeCounter(path string, off uint64, tid int) (*Counter, error) {
	typ, err := UprobeType()
	if err != nil {
		return nil, err
	}
	cpath := append([]byte(path), 0)
	a := unix.PerfEventAttr{Size: uint32(unsafeSizeofAttr), Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	uprobeAttr(&a, typ, cpath, off)
	fd, err := unix.PerfEventOpen(&a, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	runtime.KeepAlive(cpath)
	if err != nil {
		return nil, err
	}
	return &Counter{fd: fd}, nil
}

// Read returns the count so far.
func (c *Counter) Read() (uint64, error) {
	var buf [8]byte
	if _, err := unix.Read(c.fd, buf[:]); err != nil {
		return 0, err
	}
	return binary.NativeEndian.Uint64(buf[:]), nil
}

// Close closes the counter, and with it its uprobe.
func (c *Counter) Close() error { return unix.Close(c.fd) }

// ProbeAttach opens a user-space clock event on process pid and closes it:
// nil means -p pid would work. A refusal comes back explained (AttachDenied).
func ProbeAttach(pid int) error {
	a := unix.PerfEventAttr{
		Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Size: uint32(unsafeSizeofAttr),
		Sample: 1000, Sample_type: sampleIP,
		Bits: unix.PerfBitDisabled | unix.PerfBitFreq | unix.PerfBitExcludeHv | unix.PerfBitExcludeKernel,
	}
	fd, err := unix.PerfEventOpen(&a, pid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		if IsPermission(err) {
			return AttachDenied(pid, err)
		}
		return err
	}
	return unix.Close(fd)
}

// ProbeRings maps one ring of pages data pages per online CPU, as a
// session does, and unmaps them: nil means rings of that size fit this
// user's locked-memory allowance now (other sessions of the same user
// share it). A refusal comes back explained.
func ProbeRings(pages int) error {
	cpus, err := onlineCPUs()
	if err != nil {
		return err
	}
	var fds []int
	var rings []*ring
	defer func() {
		for _, r := range rings {
			r.close()
		}
		closeAll(fds)
	}()
	for _, cpu := range cpus {
		a := unix.PerfEventAttr{
			Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Size: uint32(unsafeSizeofAttr),
			Sample: 1000, Sample_type: sampleIP,
			Bits: unix.PerfBitDisabled | unix.PerfBitFreq | unix.PerfBitExcludeHv | unix.PerfBitExcludeKernel,
		}
		fd, err := unix.PerfEventOpen(&a, 0, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			return err
		}
		fds = append(fds, fd)
		r, err := mmapRing(fd, pages)
		if err != nil {
			if errors.Is(err, unix.EPERM) {
				return ringDenied(pages, err)
			}
			return err
		}
		rings = append(rings, r)
	}
	return nil
}

// DefaultRingPages and MinRingPages are the ring sizes a session starts
// with and falls back to (data pages per CPU).
const (
	DefaultRingPages = 64
	MinRingPages     = minRingPages
)
