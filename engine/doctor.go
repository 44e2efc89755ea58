package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
	"golang.org/x/sys/unix"
)

// Check is one line of the doctor's report.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string // what to do when !OK; empty when nothing can be done
	Fatal  bool   // !OK means cctop cannot sample at all
}

// DoctorProcess samples process pid for about 2 s with default unwinding
// (no call counting: nothing is probed) and writes to w how completely its
// stacks unwind, and where the others stop, by module.
func DoctorProcess(pid int, w io.Writer) error { return doctorProcess(pid, w) }

// doctorWindow is how long doctor -p samples its process.
const doctorWindow = 2 * time.Second

// doctorProcess samples pid for doctorWindow with default unwinding (no
// call counting: nothing is probed) and reports how completely its stacks
// unwind, and where the others stop, by module.
func doctorProcess(pid int, w io.Writer) error {
	cfg := sampler.Config{PID: pid, Leader: mustEvent("cpu-clock"), Freq: 999}
	o := DefaultOptions()
	o.Calls = "none"
	plan, err := Prepare(&cfg, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), doctorWindow)
	defer cancel()
	rec, err := recordTarget(ctx, cfg, plan, w)
	if err != nil {
		return err
	}
	defer closeSession(rec.sess, w)
	b := rec.b
	name := fmt.Sprintf("pid %d", pid)
	if comm := readTrim("/proc/" + strconv.Itoa(pid) + "/comm"); comm != "unknown" {
		name += " (" + comm + ")"
	}
	const label = "stacks"
	if b.unwound.percent() < 0 {
		fmt.Fprintf(w, "%-20s %-3s %s: no samples in %.1fs (idle?)\n", label, "NO", name, rec.elapsed.Seconds())
		return nil
	}
	status := "ok"
	if b.unwound.percent() < 95 {
		status = "NO"
	}
	fmt.Fprintf(w, "%-20s %-3s %s: %d samples in %.1fs, %s\n", label, status, name, b.samples, rec.elapsed.Seconds(), &b.unwound)
	fmt.Fprintf(w, "%-20s     %s\n", "", plan.unwind)
	fmt.Fprintf(w, "%-20s     memory: %s\n", "", b.memoryLine())
	if c := plan.unwind.copied(b.stackBytes, b.samples); c != "" {
		fmt.Fprintf(w, "%-20s     %s\n", "", c)
	}
	for _, st := range b.unwound.topStops(5) {
		fmt.Fprintf(w, "%-20s     stop short in %s\n", "", st)
	}
	if plan.runtime != "" {
		fmt.Fprintf(w, "%-20s     %s\n", "", plan.runtime)
	}
	for _, l := range b.jitRegionLines(threadNames(rec.sess), 3) {
		fmt.Fprintf(w, "%-20s     %s\n", "", l)
	}
	return nil
}

// Doctor checks what works on this machine, and says how to fix what
// does not.
func Doctor() []Check {
	var cs []Check
	var uts unix.Utsname
	unix.Uname(&uts)
	cs = append(cs, Check{Name: "kernel", OK: true, Detail: unix.ByteSliceToString(uts.Release[:]) + " " + unix.ByteSliceToString(uts.Machine[:])})

	clock, _ := sampler.ParseEvent("cpu-clock")
	userErr := sampler.ProbeEvent(clock, true)
	cs = append(cs, paranoidCheck(userErr))
	cs = append(cs, capsCheck())
	cs = append(cs, Check{Name: "cpu-clock sampling", OK: userErr == nil, Fatal: true,
		Detail: errDetail(userErr, "user space of own processes"),
		Fix:    sampler.FixPerfEvent()})

	kernErr := sampler.ProbeEvent(clock, false)
	cs = append(cs, Check{Name: "kernel frames", OK: kernErr == nil,
		Detail: errDetail(kernErr, "kernel call chains included"),
		Fix:    sampler.FixKernelFrames() + " (until then cctop samples user space only)"})
	cs = append(cs, systemWideCheck())
	if userErr == nil {
		cs = append(cs, attachCheck(), ringCheck())
	}
	cs = append(cs, ptraceCheck())

	cycles, _ := sampler.ParseEvent("cycles")
	hwErr := sampler.ProbeEvent(cycles, true)
	hw := Check{Name: "hardware PMU", OK: hwErr == nil, Detail: "cycles and call counters available"}
	if hwErr != nil {
		hw.Detail = "absent: cycles: " + errText(hwErr) + "; sampling uses cpu-clock, call counts need the uprobe fallback"
		if sampler.IsPermission(hwErr) {
			hw.Fix = sampler.FixPerfEvent()
		} else {
			hw.Fix = "none in software: a VM needs PMU passthrough (e.g. KVM -cpu host with vPMU enabled)"
		}
	}
	cs = append(cs, hw)

	up := uprobeCheck()
	cs = append(cs, up)
	cs = append(cs, callCounterCheck(up.OK))

	cs = append(cs, offCPUCheck(userErr == nil, kernErr == nil))
	cs = append(cs, branchCheck(hwErr == nil))
	cs = append(cs, unwindCheck())
	cs = append(cs, kallsymsCheck())
	return cs
}

// systemWideCheck says whether `agent --all` may sample every process on
// the host: CPU-wide events, which need perf_event_paranoid <= 0 or
// CAP_PERFMON.
func systemWideCheck() Check {
	ok, why := sampler.SystemWideAllowed()
	c := Check{Name: "system-wide (--all)", OK: ok, Detail: why}
	if !ok {
		c.Fix = sampler.FixSystemWide()
	}
	return c
}

// offCPUCheck says how --mode offcpu and wall take the stacks of threads
// off the CPU, and what is missing where kernel samples are not allowed.
func offCPUCheck(user, kernel bool) Check {
	c := Check{Name: "off-CPU (wall)", OK: user}
	switch {
	case !user:
		c.Detail = "no sampling at all (see above)"
	case kernel:
		c.Detail = "switch samples: every switch out of the CPU is sampled with kernel and user stacks, and its time off the CPU measured by switch records (PERF_RECORD_SWITCH); the kernel stack names the wait (futex, epoll, nanosleep, page fault)"
	default:
		c.Detail = fmt.Sprintf("wait probes: switch records time every interval off the CPU, and blocked threads' user stacks are read from /proc (syscall, process_vm_readv) at %d Hz, %d threads a look. Missing without kernel samples: the kernel's stack of a wait (the reason is the system call instead), and a stack of its own for each wait shorter than a look (a wait no probe saw goes to the thread's last stack seen off the CPU)",
			sampler.DefaultProbeHz, sampler.MaxProbeThreads)
		c.Fix = sampler.FixKernelFrames() + " (for switch samples: the kernel drops context-switch samples of user-only events)"
	}
	return c
}

// branchCheck says whether samples may carry branch stacks (LBR, BRBE): the
// basic-block profile that weighs call sites by how often their blocks ran.
func branchCheck(pmu bool) Check {
	c := Check{Name: "branch stacks"}
	if err := sampler.ProbeBranchStack(); err != nil {
		c.Detail = "unavailable: " + errText(err) + " (they give flow correction basic-block frequencies; without them it uses FDOM alone)"
		if pmu {
			c.Fix = "a CPU with LBR (Intel), BRBE (Arm v9.2) or LbrExtV2 (AMD Zen 4), passed through to a VM if any"
		}
		return c
	}
	c.OK = true
	c.Detail = "the PMU records taken branches: with -e cycles, flow correction weighs call sites by their blocks' frequencies in each sample's branch stack"
	return c
}

// paranoidCheck reads kernel.perf_event_paranoid; userErr is whether this
// user could open a user-space clock event on itself.
func paranoidCheck(userErr error) Check {
	par := readTrim("/proc/sys/kernel/perf_event_paranoid")
	who := fmt.Sprintf("uid %d", os.Geteuid())
	if sampler.PerfmonCapable() {
		who += " with CAP_PERFMON: not restricted by it"
	}
	c := Check{Name: "perf_event_paranoid", OK: true, Detail: fmt.Sprintf("%s (%s; %s)", par, paranoidMeaning(par), who)}
	switch {
	case (par == "3" || par == "4") && userErr == nil && !sampler.PerfmonCapable():
		c.Detail = fmt.Sprintf("%s (Debian and Ubuntu kernels refuse unprivileged users at %s; this kernel treats it as 2; %s)", par, par, who)
	case userErr != nil && sampler.IsPermission(userErr):
		c.OK = false
		c.Fix = sampler.FixPerfEvent()
	}
	return c
}

// capsCheck lists the capabilities that lift cctop's limits and whether
// this process has them (effective set).
func capsCheck() Check {
	caps := []struct {
		c         int
		name, set string
		without   string
	}{
		{unix.CAP_PERFMON, "CAP_PERFMON", "cap_perfmon", "no kernel frames above perf_event_paranoid 1"},
		{unix.CAP_SYS_ADMIN, "CAP_SYS_ADMIN", "cap_sys_admin", "no uprobes"},
		{unix.CAP_SYS_PTRACE, "CAP_SYS_PTRACE", "cap_sys_ptrace", "no other users' processes"},
		{unix.CAP_IPC_LOCK, "CAP_IPC_LOCK", "cap_ipc_lock", "rings within perf_event_mlock_kb and ulimit -l"},
	}
	var have, lack, set, without []string
	for _, c := range caps {
		if sampler.Capable(c.c) {
			have = append(have, c.name)
			continue
		}
		lack = append(lack, c.name)
		if c.c == unix.CAP_PERFMON && sampler.Capable(unix.CAP_SYS_ADMIN) {
			continue // CAP_SYS_ADMIN does all CAP_PERFMON does
		}
		set = append(set, c.set)
		without = append(without, c.without)
	}
	c := Check{Name: "capabilities", OK: len(without) == 0, Detail: fmt.Sprintf("uid %d", os.Geteuid())}
	if len(have) > 0 {
		c.Detail += " has " + strings.Join(have, ", ")
	}
	if len(lack) > 0 {
		c.Detail += "; lacks " + strings.Join(lack, ", ")
	}
	if !c.OK {
		c.Detail += ": " + strings.Join(without, ", ")
		c.Fix = "run as root, or " + sampler.Setcap(strings.Join(set, ","))
	}
	return c
}

// attachCheck tries what -p does on a process of another user (pid 1,
// root's init, when this is not root).
func attachCheck() Check {
	c := Check{Name: "attach (-p)", OK: true}
	const yama = "Yama's ptrace_scope does not restrict -p (perf's check is read-mode ptrace)"
	err := sampler.ProbeAttach(1)
	switch {
	case err == nil && sampler.Capable(unix.CAP_SYS_PTRACE):
		c.Detail = "any process (CAP_SYS_PTRACE); " + yama
	case err == nil:
		c.Detail = "own processes, and pid 1; " + yama
	default:
		c.OK = false
		c.Detail = "own processes only (same uid and gid, not setuid, dumpable): pid 1: " + errText(err) + "; " + yama
		c.Fix = sampler.FixAttach(-1)
	}
	return c
}

// ringCheck maps rings of the size a session starts with, smaller ones
// when those are refused, the way the sampler steps down.
func ringCheck() Check {
	c := Check{Name: "ring buffers", OK: true}
	allow := sampler.MlockAllowance()
	kib := func(pages int) int { return (pages + 1) * os.Getpagesize() / 1024 }
	pages := sampler.DefaultRingPages
	err := sampler.ProbeRings(pages)
	for err != nil && sampler.IsPermission(err) && pages > sampler.MinRingPages {
		pages /= 2
		err = sampler.ProbeRings(pages)
	}
	switch {
	case err == nil && pages == sampler.DefaultRingPages:
		c.Detail = fmt.Sprintf("%d KiB per CPU fit; allowance: %s", kib(pages), allow)
	case err == nil:
		c.OK = false
		c.Detail = fmt.Sprintf("only %d KiB per CPU fit of the %d KiB cctop wants (records are lost sooner); allowance: %s", kib(pages), kib(sampler.DefaultRingPages), allow)
		c.Fix = sampler.FixMlock()
	case sampler.IsPermission(err):
		c.OK = false
		c.Fatal = true
		c.Detail = fmt.Sprintf("not even %d KiB per CPU fit: sampling fails; allowance: %s", kib(pages), allow)
		c.Fix = sampler.FixMlock()
	default:
		c.OK = false
		c.Detail = "cannot map a ring: " + errText(err)
	}
	return c
}

// callCounterCheck says which call counter density correction will use
// here (--calls auto): the hardware event for this CPU, or the uprobe
// fallback and what a hit costs.
func callCounterCheck(uprobes bool) Check {
	c := Check{Name: "call counter"}
	cpu := hpm.DetectCPU()
	src, err := hpm.Choose(hpm.Mode{Kind: "auto"}, cpu, hpm.ProbeHW(cpu))
	switch {
	case err != nil:
		c.Detail = err.Error()
	case src.Kind == "hw":
		c.OK = true
		c.Detail = hpm.Describe(src, 0)
	case src.Kind == "uprobe" && uprobes:
		cost, _ := hpm.MeasureUprobeCostAfterStackCheck(1000)
		stepped, _ := hpm.MeasureUprobeCost(200)
		c.OK = true
		c.Detail = "hardware counters absent; fallback in use: " + hpm.Describe(src, cost)
		if stepped > cost {
			c.Detail += fmt.Sprintf(" (%v where the probed instruction is single-stepped)", stepped.Round(10*time.Nanosecond))
		}
		// How automatic counting tries a function before it arms a probe.
		if bp, err := hpm.MeasureBreakpointCost(200); err == nil {
			c.Detail += fmt.Sprintf("; trials count calls with hardware breakpoints (%v a hit, in the watched threads only)", bp.Round(10*time.Nanosecond))
		} else {
			c.Detail += "; trials count calls with uprobes, which trap in every thread until closed (no hardware breakpoints: " + errText(err) + ")"
		}
	default:
		c.Detail = "no hardware call counter and no uprobes: density correction is unavailable (record with --calls none)"
		c.Fix = sampler.FixUprobes() + " for the uprobe fallback"
	}
	return c
}

// doctorProbeName is doctorProbeTarget's symbol.
const doctorProbeName = "github.com/cctop/cctop/engine.doctorProbeTarget"

// doctorProbeTarget is where the doctor puts a uprobe to see it fire.
//
//go:noinline
func doctorProbeTarget(x int) int { return x*31 + 7 }

func uprobeCheck() Check {
	c := Check{Name: "uprobes", Fix: sampler.FixUprobes() + "; the kernel needs CONFIG_UPROBE_EVENTS"}
	const without = ": --calls uprobe:F and --trigger calls|exact fail, --calls auto counts nothing (cctop needs no tracefs access)"
	var perm *sampler.PermissionError
	if _, err := sampler.UprobeType(); err == nil && errors.As(sampler.UprobesPermitted(), &perm) {
		c.Detail, c.Fix = perm.What+without, perm.Fix
		return c
	}
	exe, err := os.Executable()
	if err != nil {
		c.Detail = "cannot find own executable: " + err.Error()
		return c
	}
	off, err := symbol.FuncOffset(exe, doctorProbeName)
	if err != nil {
		c.Detail = "cannot place a test probe: " + err.Error()
		c.Fix = ""
		return c
	}
	// The counter follows this thread only: keep the goroutine on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctr, err := sampler.OpenUprobeCounter(exe, off, 0)
	if sampler.IsPermission(err) {
		perm = sampler.UprobesDenied(err).(*sampler.PermissionError)
		c.Detail, c.Fix = perm.What+without, perm.Fix
		return c
	}
	if err != nil {
		c.Detail = errText(err)
		return c
	}
	defer ctr.Close()
	const hits = 1000
	sum := 0
	for i := 0; i < hits; i++ {
		sum += doctorProbeTarget(i) // not inlined: every call enters it
	}
	runtime.KeepAlive(sum)
	n, err := ctr.Read()
	switch {
	case err != nil:
		c.Detail = "probe placed but unreadable: " + err.Error()
	case n < hits:
		c.Detail = fmt.Sprintf("probe placed but counted %d of %d calls", n, hits)
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("counted %d of %d calls to a probed function", n, hits)
		if ok, where := sampler.TracefsProbes(); ok {
			c.Detail += "; counting probes go through " + where + " (one uprobe per probe, inherited by new threads, removed at exit)"
		} else {
			c.Detail += "; tracefs probes unavailable (" + where + "): the uprobe PMU instead, whose events close slowly (0.1 s each) and are opened per thread"
		}
	}
	return c
}

// unwindCheck says how user stacks will be unwound: whether samples may
// carry stack copies for DWARF unwinding, and whether the C library every
// C program runs on keeps frame pointers.
func unwindCheck() Check {
	c := Check{Name: "stack unwinding"}
	err := sampler.ProbeStackCopy()
	if err != nil {
		c.Detail = "frame pointers only (--unwind fp): user stack copies: " + errText(err)
		c.Fix = "code without frame pointers loses frames; " + sampler.FixUprobes()
		return c
	}
	c.OK = true
	c.Detail = fmt.Sprintf("frame pointers and DWARF CFI (%d-byte user stack copies); --unwind auto picks per module and frame, and per thread the copy: %d bytes with the kernel's frame-pointer chain while its stacks keep frame pointers, %d unwound with CFI while they do not (doctor -p PID shows a process's result)", defaultStackSize, leafStackSize, defaultStackSize)
	for _, libc := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"} {
		if _, err := os.Stat(libc); err == nil {
			_, why := symbol.FramePointers(libc)
			c.Detail += "; " + why
			break
		}
	}
	return c
}

func kallsymsCheck() Check {
	c := Check{Name: "kernel symbols", Fix: sampler.FixKallsyms()}
	if n := sampler.KallsymsNote(); n != "" {
		c.Detail = strings.TrimPrefix(n, "kernel frames stay unnamed: ")
		c.Detail, _, _ = strings.Cut(c.Detail, "; ")
		c.Detail += ": kernel frames stay unnamed"
		return c
	}
	c.OK = true
	c.Detail = "/proc/kallsyms readable"
	return c
}

func paranoidMeaning(p string) string {
	switch p {
	case "-1":
		return "no restrictions"
	case "0":
		return "CPU-wide and kernel sampling allowed"
	case "1":
		return "kernel sampling of own processes allowed"
	case "2":
		return "unprivileged users may sample user space of their own processes"
	case "3", "4":
		return "unprivileged perf_event_open disabled"
	}
	return "unknown level"
}

func errDetail(err error, okText string) string {
	if err == nil {
		return okText
	}
	return errText(err)
}

func errText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		switch errno {
		case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV:
			return "not supported (" + errno.Error() + ")"
		case unix.EACCES, unix.EPERM:
			return "permission denied (" + unix.ErrnoName(errno) + ")"
		}
	}
	return err.Error()
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// ptraceCheck launches this executable the way cctop launches a command,
// under PTRACE_TRACEME, which Yama's ptrace_scope 3, a seccomp filter or a
// tracer following cctop's children refuse.
func ptraceCheck() Check {
	c := Check{Name: "launch (ptrace)", OK: true}
	scope := readTrim("/proc/sys/kernel/yama/ptrace_scope")
	yama := "kernel.yama.ptrace_scope=" + scope
	if scope == "unknown" {
		yama = "no Yama LSM"
	}
	exe, err := os.Executable()
	if err == nil {
		err = sampler.ProbeLaunch(exe, ReleaseCmd)
	}
	if err != nil {
		c.OK = false
		c.Detail = errText(err) + "; " + yama
		var perm *sampler.PermissionError
		if errors.As(err, &perm) {
			c.Detail, c.Fix = perm.What+"; "+yama, perm.Fix
		}
		return c
	}
	c.Detail = yama + ": PTRACE_TRACEME works, launched commands are sampled from their first instruction"
	return c
}
