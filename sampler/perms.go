//go:build linux

package sampler

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Permissions: every EACCES and EPERM cctop can meet, what the kernel
// checked, and the fix, in one place. A refusal cctop cannot work around
// ends as a PermissionError, printed as one line: what was refused, then
// the fix. Where cctop carries on without (kernel frames, bigger rings,
// counting uprobes under --calls auto), a note names the fix the same way.
// The doctor prints the same fixes.
//
// What Linux (6.x) checks:
//
//   - perf_event_open: kernel.perf_event_paranoid. At 2 a user may sample
//     the user space of their own processes, at 1 with kernel frames;
//     CAP_PERFMON (or CAP_SYS_ADMIN) lifts the limit. Debian and Ubuntu
//     kernels add 3 (and 4), which refuse unprivileged users altogether;
//     upstream kernels treat those as 2. A seccomp filter (a container's)
//     or a security module may refuse it at any level.
//   - -p PID: a read-mode ptrace check (PTRACE_MODE_READ_REALCREDS): the
//     caller's uid and gid equal the target's real, effective and saved
//     ones and the target is dumpable, or the caller has CAP_SYS_PTRACE.
//     Yama's ptrace_scope restricts attach-mode checks only: not -p.
//     /proc/PID/maps and /proc/PID/root are checked the same way;
//     /proc/PID/mem needs attach mode (Yama applies), and cctop reads the
//     vdso from its own memory when it is refused.
//   - launching: PTRACE_TRACEME in the child, refused by Yama's
//     ptrace_scope 3, by a seccomp filter, or when the child is already
//     traced (cctop under strace -f).
//   - uprobe events: CAP_SYS_ADMIN, whatever the paranoid level (kernels
//     from 5.8 took CAP_PERFMON until the fix for CVE-2025-38466, July
//     2025, backported to stable kernels; 6.18 refuses CAP_PERFMON alone).
//     cctop opens them as perf events, so tracefs (root-only) is not
//     needed.
//   - the ring mmap: pages beyond kernel.perf_event_mlock_kb x online CPUs
//     per user (all of that user's rings together) count against
//     RLIMIT_MEMLOCK; CAP_IPC_LOCK, or perf_event_paranoid -1, lifts both.
//   - /proc/kallsyms: addresses show with kptr_restrict 0 and
//     perf_event_paranoid <= 1, or with CAP_SYSLOG and kptr_restrict <= 1.
//   - CPU-wide events (pid -1, Config.AllProcesses): perf_event_paranoid
//     <= 0, or CAP_PERFMON (or CAP_SYS_ADMIN).

// IsPermission reports whether err is a refusal (EACCES or EPERM).
func IsPermission(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// Capable reports whether capability c is in this process's effective set.
func Capable(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.Geteuid() == 0
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// PerfmonCapable is the kernel's perfmon_capable(): what uprobe events,
// kernel frames at any paranoid level and CPU-wide sampling need.
func PerfmonCapable() bool { return Capable(unix.CAP_PERFMON) || Capable(unix.CAP_SYS_ADMIN) }

// Setcap is the command that grants the executable caps ("cap_perfmon").
func Setcap(caps string) string {
	exe, err := os.Executable()
	if err != nil {
		exe = "cctop"
	}
	return "setcap " + caps + "+ep " + exe
}

// FixPerfEvent is the fix when perf_event_open is refused on one's own
// process.
func FixPerfEvent() string {
	_, fix := perfRefusal(paranoidLevel(), seccompFiltered())
	return fix
}

// perfRefusal says who refused perf_event_open on one's own process, and
// the fix.
func perfRefusal(level int, seccomp bool) (who, fix string) {
	switch {
	case level >= 3:
		return fmt.Sprintf("kernel.perf_event_paranoid=%d", level),
			fmt.Sprintf("`sysctl kernel.perf_event_paranoid=2` lets users profile their own processes; or run as root, or grant CAP_PERFMON (%s)", Setcap("cap_perfmon"))
	case seccomp:
		return fmt.Sprintf("by a seccomp filter; kernel.perf_event_paranoid=%d would allow it", level),
			"allow perf_event_open in the seccomp profile (in a container: docker run --cap-add PERFMON, or a profile that permits it), or run cctop outside the container"
	}
	return fmt.Sprintf("although kernel.perf_event_paranoid=%d allows it: a security module (SELinux, AppArmor)?", level),
		fmt.Sprintf("run as root or grant CAP_PERFMON (%s)", Setcap("cap_perfmon"))
}

// perfDenied: perf_event_open refused on a process of one's own.
func perfDenied(err error) error {
	who, fix := perfRefusal(paranoidLevel(), seccompFiltered())
	return &PermissionError{What: "perf_event_open refused (" + who + ")", Fix: fix, Err: err}
}

// FixKernelFrames: how to get kernel frames where only user space may be
// sampled.
func FixKernelFrames() string {
	return fmt.Sprintf("`sysctl kernel.perf_event_paranoid=1`, or run as root, or grant CAP_PERFMON (%s)", Setcap("cap_perfmon"))
}

// FixUprobes: uprobe events need CAP_SYS_ADMIN.
func FixUprobes() string {
	return fmt.Sprintf("run as root, or grant CAP_SYS_ADMIN (%s)", Setcap("cap_sys_admin"))
}

// UprobesDenied is the error for uprobe events without the capability
// they need.
func UprobesDenied(err error) error {
	if err == nil {
		err = unix.EACCES
	}
	what := fmt.Sprintf("uprobe events need CAP_SYS_ADMIN, which uid %d lacks", os.Geteuid())
	if Capable(unix.CAP_PERFMON) {
		what += " (CAP_PERFMON is not enough on this kernel)"
	}
	return &PermissionError{What: what, Fix: FixUprobes(), Err: err}
}

// UprobesPermitted says whether this process may open uprobe events: nil,
// or UprobesDenied. Only with CAP_PERFMON and not CAP_SYS_ADMIN does it
// ask the kernel (a refused open is cheap; an accepted one is closed at
// once), since kernels differ there.
func UprobesPermitted() error {
	switch {
	case Capable(unix.CAP_SYS_ADMIN):
		return nil
	case !Capable(unix.CAP_PERFMON):
		return UprobesDenied(nil)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	// Offset 0 is the ELF header, in no executable mapping: the probe is
	// never installed.
	c, err := OpenUprobeCounter(exe, 0, 0)
	if err == nil {
		c.Close()
		return nil
	}
	if IsPermission(err) {
		return UprobesDenied(err)
	}
	return nil
}

// FixAttach is the fix for sampling a process that is not one's own:
// owner is its uid, or -1 when unknown.
func FixAttach(owner int) string {
	who := "run as root or as the process's owner"
	switch {
	case owner == 0:
		who = "run as root"
	case owner > 0:
		who = "run as root or as " + uidName(owner)
	}
	return fmt.Sprintf("%s, or grant CAP_SYS_PTRACE and CAP_PERFMON (%s)", who, Setcap("cap_perfmon,cap_sys_ptrace"))
}

// AttachDenied is the error for a refused -p PID, saying whose process it
// is (or that it is a kernel thread, or not dumpable) and the fix. It
// returns a no-such-process error when pid is gone.
func AttachDenied(pid int, err error) error {
	st, ok := readStatus(pid)
	if !ok {
		return &noProcessError{pid}
	}
	name := st.name
	if name == "" {
		name = "?"
	}
	if kernelThread(pid) {
		return &PermissionError{What: fmt.Sprintf("cannot sample process %d (%s, a kernel thread)", pid, name),
			Fix: "a kernel thread has no user space; as root cctop samples its kernel stacks", Err: err}
	}
	if st.uid[1] != os.Getuid() {
		return &PermissionError{What: fmt.Sprintf("cannot sample process %d (%s, owned by %s)", pid, name, uidName(st.uid[1])),
			Fix: FixAttach(st.uid[1]), Err: err}
	}
	if !st.sameIDs(os.Getuid(), os.Getgid()) || !dumpable(pid, st) {
		return &PermissionError{What: fmt.Sprintf("cannot sample process %d (%s: setuid, setgid or not dumpable)", pid, name),
			Fix: fmt.Sprintf("run as root, or grant CAP_SYS_PTRACE (%s)", Setcap("cap_perfmon,cap_sys_ptrace")), Err: err}
	}
	return perfDenied(err)
}

// othersProcess reports whether a refusal to open events on pid is the
// ptrace check's (the process is not this user's to sample) rather than
// perf_event_open's own.
func othersProcess(pid int) bool {
	if Capable(unix.CAP_SYS_PTRACE) {
		return false
	}
	st, ok := readStatus(pid)
	if !ok {
		return false
	}
	return kernelThread(pid) || !st.sameIDs(os.Getuid(), os.Getgid()) || !dumpable(pid, st)
}

// MapsDenied is the note for a /proc/PID/maps cctop may not read: the
// samples still come, their frames stay unnamed.
func MapsDenied(pid int) string {
	owner := -1
	if st, ok := readStatus(pid); ok {
		owner = st.uid[1]
	}
	return fmt.Sprintf("cannot read /proc/%d/maps: permission denied; frames stay unnamed: %s", pid, FixAttach(owner))
}

// FixMlock is the fix for perf rings over the locked-memory allowance.
func FixMlock() string {
	return "raise the locked-memory limit (`ulimit -l`, or LimitMEMLOCK= in a systemd unit) or `sysctl kernel.perf_event_mlock_kb=2048`, or run as root (CAP_IPC_LOCK)"
}

// MlockAllowance describes how many bytes of perf rings this user may
// lock, in words.
func MlockAllowance() string {
	if Capable(unix.CAP_IPC_LOCK) || paranoidLevel() < 0 {
		return "unlimited (CAP_IPC_LOCK)"
	}
	ncpu := 1
	if cpus, err := onlineCPUs(); err == nil {
		ncpu = len(cpus)
	}
	kb := strings.TrimSpace(readFile("/proc/sys/kernel/perf_event_mlock_kb"))
	lim := "unlimited"
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
		lim = fmt.Sprintf("%d KiB", rl.Cur/1024)
	}
	return fmt.Sprintf("kernel.perf_event_mlock_kb=%s x %d CPUs for all of this user's rings, then RLIMIT_MEMLOCK %s", kb, ncpu, lim)
}

// MayLockMemory reports whether cctop may lock more memory for its rings
// than kernel.perf_event_mlock_kb allows a user: it has CAP_IPC_LOCK.
func MayLockMemory() bool { return effectiveCaps()&(1<<unix.CAP_IPC_LOCK) != 0 }

// effectiveCaps is this process's effective capability set, from
// /proc/self/status (CapEff); none when unreadable.
func effectiveCaps() uint64 {
	caps, _ := strconv.ParseUint(statusField("self", "CapEff"), 16, 64)
	return caps
}

// SystemWideAllowed says whether this process may open CPU-wide events
// (pid -1), which Config.AllProcesses needs, and why, from
// kernel.perf_event_paranoid and the effective capabilities as
// perf_event_open checks them. A seccomp filter or a security module may
// refuse them all the same.
func SystemWideAllowed() (bool, string) { return systemWide(paranoidLevel(), effectiveCaps()) }

// systemWideCapable is SystemWideAllowed's answer alone.
func systemWideCapable() bool {
	ok, _ := SystemWideAllowed()
	return ok
}

// systemWide is SystemWideAllowed for a paranoid level and an effective
// capability set.
func systemWide(level int, caps uint64) (bool, string) {
	has := func(c int) bool { return caps&(1<<c) != 0 }
	switch {
	case has(unix.CAP_PERFMON):
		return true, fmt.Sprintf("CAP_PERFMON allows CPU-wide events at any kernel.perf_event_paranoid (%d here)", level)
	case has(unix.CAP_SYS_ADMIN):
		return true, fmt.Sprintf("CAP_SYS_ADMIN allows CPU-wide events at any kernel.perf_event_paranoid (%d here)", level)
	case level <= 0:
		return true, fmt.Sprintf("kernel.perf_event_paranoid=%d allows every user CPU-wide events", level)
	}
	return false, fmt.Sprintf("kernel.perf_event_paranoid is %d, needs <= 0, or CAP_PERFMON or root", level)
}

// FixSystemWide is the fix when CPU-wide events are refused.
func FixSystemWide() string {
	return fmt.Sprintf("`sysctl kernel.perf_event_paranoid=0`, or run as root, or grant CAP_PERFMON (%s)", Setcap("cap_perfmon"))
}

// systemWideDenied: the kernel refused CPU-wide events.
func systemWideDenied(err error) error {
	what, fix := systemWideRefusal(paranoidLevel(), effectiveCaps(), seccompFiltered())
	return &PermissionError{What: what, Fix: fix, Err: err}
}

// systemWideRefusal says who refused CPU-wide events, for a paranoid level,
// an effective capability set and a seccomp filter or none, and the fix.
func systemWideRefusal(level int, caps uint64, seccomp bool) (what, fix string) {
	ok, why := systemWide(level, caps)
	switch {
	case !ok:
		return "system-wide sampling refused: " + why, FixSystemWide()
	case seccomp:
		_, fix := perfRefusal(level, true)
		return "system-wide sampling refused by a seccomp filter", fix
	}
	return "system-wide sampling refused although " + why + ": a security module (SELinux, AppArmor)?",
		"run as root outside the module's confinement"
}

// ringDenied: even the smallest ring is over the allowance.
func ringDenied(pages int, err error) error {
	return &PermissionError{
		What: fmt.Sprintf("cannot map a %d KiB perf ring per CPU (allowance: %s)", ringKiB(pages), MlockAllowance()),
		Fix:  FixMlock(), Err: err}
}

// ringNote: the rings were made smaller to fit. It starts with
// ringNotePrefix, so that a later, smaller ring replaces the note.
func ringNote(pages int) string {
	return fmt.Sprintf(ringNotePrefix+"%d KiB per CPU by the locked-memory allowance (%s), so records are lost sooner: %s",
		ringKiB(pages), MlockAllowance(), FixMlock())
}

const ringNotePrefix = "rings limited to "

func ringKiB(pages int) int { return (pages + 1) * os.Getpagesize() / 1024 }

// launchErr explains a launch that failed to start: PTRACE_TRACEME (EPERM)
// or exec (EACCES) refused.
func launchErr(name string, err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return &PermissionError{What: fmt.Sprintf("cannot launch %s: the kernel refused PTRACE_TRACEME (%s)", name, tracemeCause()),
			Fix: FixLaunch(), Err: err}
	case errors.Is(err, unix.EACCES):
		return &PermissionError{What: "cannot run " + name,
			Fix: "make it executable (chmod +x) and keep it off noexec mounts", Err: err}
	}
	return fmt.Errorf("start %s: %w", name, err)
}

// FixLaunch is the fix when launched commands cannot be traced.
func FixLaunch() string {
	fix := "start the command yourself and attach with -p PID"
	switch {
	case readFileTrim("/proc/sys/kernel/yama/ptrace_scope") == "3":
		fix += " (kernel.yama.ptrace_scope=3 can only be lowered by a reboot)"
	case statusField("self", "TracerPid") != "0" && statusField("self", "TracerPid") != "":
		fix += ", or run cctop without a tracer that follows its children (strace -f, gdb)"
	case seccompFiltered():
		fix += ", or allow ptrace in the container's seccomp profile (docker run --cap-add SYS_PTRACE)"
	}
	return fix
}

// tracemeCause guesses why PTRACE_TRACEME was refused.
func tracemeCause() string {
	switch {
	case readFileTrim("/proc/sys/kernel/yama/ptrace_scope") == "3":
		return "kernel.yama.ptrace_scope=3"
	case statusField("self", "TracerPid") != "0" && statusField("self", "TracerPid") != "":
		return "cctop is itself traced, by pid " + statusField("self", "TracerPid")
	case seccompFiltered():
		return "a seccomp filter"
	}
	return "a security module?"
}

// KallsymsNote says why kernel frames will stay unnamed, or "" when
// /proc/kallsyms shows addresses to this user.
func KallsymsNote() string {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return "kernel frames stay unnamed: cannot read /proc/kallsyms: " + err.Error()
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString(' ')
	if strings.Trim(line, "0 ") != "" {
		return ""
	}
	return "kernel frames stay unnamed: /proc/kallsyms hides addresses from this user; " + FixKallsyms()
}

// FixKallsyms is the fix for hidden kernel symbol addresses.
func FixKallsyms() string {
	switch readFileTrim("/proc/sys/kernel/kptr_restrict") {
	case "0":
		return "`sysctl kernel.perf_event_paranoid=1`, or run as root"
	case "1":
		return "run as root (CAP_SYSLOG), or `sysctl kernel.kptr_restrict=0` and kernel.perf_event_paranoid=1"
	}
	return "`sysctl kernel.kptr_restrict=1` and run as root"
}

func paranoid() string {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// paranoidLevel is kernel.perf_event_paranoid, 2 when unreadable.
func paranoidLevel() int {
	n, err := strconv.Atoi(paranoid())
	if err != nil {
		return 2
	}
	return n
}

// seccompFiltered reports whether this process runs under a seccomp filter.
func seccompFiltered() bool { return statusField("self", "Seccomp") == "2" }

type procStatus struct {
	name     string
	uid, gid [3]int // real, effective, saved
}

func (st procStatus) sameIDs(uid, gid int) bool {
	for i := range 3 {
		if st.uid[i] != uid || st.gid[i] != gid {
			return false
		}
	}
	return true
}

func readStatus(pid int) (procStatus, bool) {
	var st procStatus
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, false
	}
	ids := func(s string) (v [3]int) {
		for i, f := range strings.Fields(s) {
			if i < 3 {
				v[i], _ = strconv.Atoi(f)
			}
		}
		return v
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch k {
		case "Name":
			st.name = strings.TrimSpace(v)
		case "Uid":
			st.uid = ids(v)
		case "Gid":
			st.gid = ids(v)
		}
	}
	return st, true
}

// dumpable: the kernel makes a non-dumpable process's /proc files root's.
func dumpable(pid int, st procStatus) bool {
	var s unix.Stat_t
	if unix.Stat(fmt.Sprintf("/proc/%d", pid), &s) != nil {
		return true
	}
	return int(s.Uid) == st.uid[1]
}

// kernelThread reports whether pid is a kernel thread (PF_KTHREAD).
func kernelThread(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 7 {
		return false
	}
	flags, _ := strconv.ParseUint(f[6], 10, 64)
	return flags&0x00200000 != 0
}

func statusField(pid, key string) string {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func uidName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return string(b)
}

func readFileTrim(path string) string { return strings.TrimSpace(readFile(path)) }
