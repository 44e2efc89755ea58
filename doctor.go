package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// check is one line of the doctor's report.
type check struct {
	name   string
	ok     bool
	detail string
	fix    string // what to do when !ok; empty when nothing can be done
}

func cmdDoctor(args []string, w io.Writer) error {
	if len(args) > 0 {
		return usageError("doctor takes no arguments")
	}
	checks := doctorChecks()
	for _, c := range checks {
		status := "ok"
		if !c.ok {
			status = "NO"
		}
		fmt.Fprintf(w, "%-20s %-3s %s\n", c.name, status, c.detail)
		if !c.ok && c.fix != "" {
			fmt.Fprintf(w, "%-20s     fix: %s\n", "", c.fix)
		}
	}
	if !checks[2].ok {
		return &exitError{code: 1, msg: "sampling does not work here: see the fix above"}
	}
	return nil
}

func doctorChecks() []check {
	var cs []check
	var uts unix.Utsname
	unix.Uname(&uts)
	cs = append(cs, check{name: "kernel", ok: true, detail: unix.ByteSliceToString(uts.Release[:]) + " " + unix.ByteSliceToString(uts.Machine[:])})

	par := readTrim("/proc/sys/kernel/perf_event_paranoid")
	root := os.Geteuid() == 0
	who := fmt.Sprintf("uid %d", os.Geteuid())
	if root {
		who = "root"
	}
	cs = append(cs, check{name: "perf_event_paranoid", ok: true,
		detail: fmt.Sprintf("%s (%s; %s)", par, paranoidMeaning(par), who)})

	clock, _ := sampler.ParseEvent("cpu-clock")
	userErr := sampler.ProbeEvent(clock, true)
	cs = append(cs, check{name: "cpu-clock sampling", ok: userErr == nil,
		detail: errDetail(userErr, "user space of own processes"),
		fix:    "run as root, grant CAP_PERFMON (setcap cap_perfmon+ep cctop), or sysctl kernel.perf_event_paranoid=2"})

	kernErr := sampler.ProbeEvent(clock, false)
	cs = append(cs, check{name: "kernel frames", ok: kernErr == nil,
		detail: errDetail(kernErr, "kernel call chains included"),
		fix:    "run as root, grant CAP_PERFMON, or sysctl kernel.perf_event_paranoid=1 (until then cctop samples user space only)"})

	cycles, _ := sampler.ParseEvent("cycles")
	hwErr := sampler.ProbeEvent(cycles, true)
	hw := check{name: "hardware PMU", ok: hwErr == nil, detail: "cycles and call counters available"}
	if hwErr != nil {
		hw.detail = "absent: cycles: " + errText(hwErr) + "; sampling uses cpu-clock, call counts need the uprobe fallback"
		if errors.Is(hwErr, unix.EACCES) || errors.Is(hwErr, unix.EPERM) {
			hw.fix = "run as root or grant CAP_PERFMON"
		} else {
			hw.fix = "none in software: a VM needs PMU passthrough (e.g. KVM -cpu host with vPMU enabled)"
		}
	}
	cs = append(cs, hw)

	up := uprobeCheck()
	cs = append(cs, up)
	cs = append(cs, callCounterCheck(up.ok))

	cs = append(cs, unwindCheck())
	cs = append(cs, kallsymsCheck())
	cs = append(cs, ptraceCheck())
	return cs
}

// callCounterCheck says which call counter density correction will use
// here (--calls auto): the hardware event for this CPU, or the uprobe
// fallback and what a hit costs.
func callCounterCheck(uprobes bool) check {
	c := check{name: "call counter"}
	cpu := hpm.DetectCPU()
	src, err := hpm.Choose(hpm.Mode{Kind: "auto"}, cpu, hpm.ProbeHW(cpu))
	switch {
	case err != nil:
		c.detail = err.Error()
	case src.Kind == "hw":
		c.ok = true
		c.detail = hpm.Describe(src, 0)
	case src.Kind == "uprobe" && uprobes:
		cost, _ := hpm.MeasureUprobeCostAfterStackCheck(2000)
		c.ok = true
		c.detail = "hardware counters absent; fallback in use: " + hpm.Describe(src, cost)
	default:
		c.detail = "no hardware call counter and no uprobes: density correction is unavailable (record with --calls none)"
		c.fix = "run as root or grant CAP_PERFMON for the uprobe fallback"
	}
	return c
}

// doctorProbeTarget is where the doctor puts a uprobe to see it fire.
//
//go:noinline
func doctorProbeTarget(x int) int { return x*31 + 7 }

var doctorSink int

func uprobeCheck() check {
	c := check{name: "uprobes", fix: "run as root or grant CAP_PERFMON (uprobe events need it); the kernel needs CONFIG_UPROBE_EVENTS"}
	exe, err := os.Executable()
	if err != nil {
		c.detail = "cannot find own executable: " + err.Error()
		return c
	}
	off, err := symbol.FuncOffset(exe, "main.doctorProbeTarget")
	if err != nil {
		c.detail = "cannot place a test probe: " + err.Error()
		c.fix = ""
		return c
	}
	// The counter follows this thread only: keep the goroutine on it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctr, err := sampler.OpenUprobeCounter(exe, off, 0)
	if err != nil {
		c.detail = errText(err)
		return c
	}
	defer ctr.Close()
	const hits = 1000
	for i := 0; i < hits; i++ {
		doctorSink += doctorProbeTarget(i)
	}
	n, err := ctr.Read()
	switch {
	case err != nil:
		c.detail = "probe placed but unreadable: " + err.Error()
	case n < hits:
		c.detail = fmt.Sprintf("probe placed but counted %d of %d calls", n, hits)
	default:
		c.ok = true
		c.detail = fmt.Sprintf("counted %d of %d calls to a probed function (fd-scoped, nothing left in tracefs)", n, hits)
	}
	return c
}

// unwindCheck says how user stacks will be unwound: whether samples may
// carry stack copies for DWARF unwinding, and what --unwind auto makes of
// the C library every C program runs on.
func unwindCheck() check {
	c := check{name: "stack unwinding"}
	err := sampler.ProbeStackCopy()
	if err != nil {
		c.detail = "frame pointers only (--unwind fp): user stack copies: " + errText(err)
		c.fix = "code without frame pointers loses frames; run as root or grant CAP_PERFMON"
		return c
	}
	c.ok = true
	c.detail = fmt.Sprintf("frame pointers and DWARF CFI (%d-byte user stack copies); --unwind auto picks per binary", defaultStackSize)
	for _, libc := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"} {
		if _, err := os.Stat(libc); err == nil {
			_, why := symbol.FramePointers(libc)
			c.detail += "; " + why
			break
		}
	}
	return c
}

func kallsymsCheck() check {
	c := check{name: "kernel symbols", fix: "run as root, or sysctl kernel.kptr_restrict=0"}
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		c.detail = "cannot read /proc/kallsyms: " + err.Error()
		return c
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if strings.HasPrefix(line, "0000000000000000") {
		c.detail = "/proc/kallsyms addresses are hidden (kptr_restrict): kernel frames stay unnamed"
		return c
	}
	c.ok = true
	c.detail = "/proc/kallsyms readable"
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
			return "permission denied (" + errno.Error() + ")"
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

// ptraceCheck: launching a command relies on PTRACE_TRACEME, which only
// Yama's scope 3 forbids.
func ptraceCheck() check {
	c := check{name: "launch (ptrace)", ok: true}
	scope := readTrim("/proc/sys/kernel/yama/ptrace_scope")
	switch scope {
	case "unknown":
		c.detail = "no Yama LSM: launched commands start with sampling enabled"
	case "3":
		c.ok = false
		c.detail = "kernel.yama.ptrace_scope=3 forbids PTRACE_TRACEME: start the command yourself and use -p PID"
		c.fix = "sysctl kernel.yama.ptrace_scope=1 (3 can only be lowered by a reboot)"
	default:
		c.detail = "kernel.yama.ptrace_scope=" + scope + ": launched commands start with sampling enabled"
	}
	return c
}
