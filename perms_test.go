package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
)

// The permission tests run cctop as nobody (uid 65534), the way a user
// without privileges would, through this test binary as a launcher: run as
// root with CCTOP_PERM_HELPER=1 it lowers RLIMIT_MEMLOCK
// (CCTOP_PERM_MEMLOCK), becomes nobody, installs a seccomp filter that
// refuses the system calls in CCTOP_PERM_DENY (perf_event_open with
// EACCES, ptrace with EPERM, as a container's filter would), and execs its
// arguments.
func init() {
	if os.Getenv("CCTOP_PERM_HELPER") != "1" {
		return
	}
	if err := permHelper(); err != nil {
		fmt.Fprintf(os.Stderr, "perm helper: %v\n", err)
		os.Exit(97)
	}
}

const nobody = 65534

func permHelper() error {
	runtime.LockOSThread()
	if v := os.Getenv("CCTOP_PERM_MEMLOCK"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return err
		}
		if err := unix.Setrlimit(unix.RLIMIT_MEMLOCK, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("setrlimit: %w", err)
		}
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(nobody, nobody, nobody); err != nil {
		return fmt.Errorf("setresgid: %w", err)
	}
	if err := syscall.Setresuid(nobody, nobody, nobody); err != nil {
		return fmt.Errorf("setresuid: %w", err)
	}
	if deny := os.Getenv("CCTOP_PERM_DENY"); deny != "" {
		if err := denySyscalls(strings.Split(deny, ",")); err != nil {
			return err
		}
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "CCTOP_PERM_") {
			env = append(env, e)
		}
	}
	return syscall.Exec(os.Args[1], os.Args[1:], env)
}

// denySyscalls installs a seccomp filter on this thread (which then execs)
// that fails the named system calls.
func denySyscalls(names []string) error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return fmt.Errorf("no seccomp arch for %s", runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ld, K: 0}, // seccomp_data.nr
	}
	for _, n := range names {
		var nr, errno uint32
		switch n {
		case "perf_event_open":
			nr, errno = unix.SYS_PERF_EVENT_OPEN, uint32(unix.EACCES)
		case "ptrace":
			nr, errno = unix.SYS_PTRACE, uint32(unix.EPERM)
		default:
			return fmt.Errorf("cannot deny %q", n)
		}
		prog = append(prog, unix.SockFilter{Code: jeq, K: nr, Jf: 1}, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | errno})
	}
	prog = append(prog, unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW})
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}

// nobodyEnv is a run of cctop as nobody.
type nobodyEnv struct {
	deny    string // CCTOP_PERM_DENY
	memlock string // CCTOP_PERM_MEMLOCK
}

// nobodyDir is a directory nobody may write, for outputs.
func nobodyDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	// t.TempDir's parent is private to root.
	dir, err := os.MkdirTemp("", "cctop-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	os.Chmod(filepath.Dir(cctopBin), 0o755)
	return dir
}

// runNobody runs cctop args as nobody in dir: stdout, stderr, exit code.
func runNobody(t *testing.T, dir string, e nobodyEnv, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{cctopBin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CCTOP_PERM_HELPER=1", "CCTOP_PERM_DENY="+e.deny, "CCTOP_PERM_MEMLOCK="+e.memlock)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 97 {
		t.Skipf("cannot set up the unprivileged run: %s", errb.String())
	}
	return out.String(), errb.String(), code
}

// wantOneLine checks a fatal error: exit 1, exactly one line on stderr that
// starts with "cctop: " and contains each of wants, no stack trace.
func wantOneLine(t *testing.T, what, stderr string, code int, wants ...string) {
	t.Helper()
	t.Logf("%s: exit %d: %s", what, code, strings.TrimSpace(stderr))
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
		t.Fatalf("%s: stack trace:\n%s", what, stderr)
	}
	s := strings.TrimRight(stderr, "\n")
	if code != 1 || strings.Contains(s, "\n") || !strings.HasPrefix(s, "cctop: ") {
		t.Errorf("%s: exit %d, want 1 and one line starting with \"cctop: \":\n%s", what, code, stderr)
	}
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s: %q does not say %q", what, s, w)
		}
	}
}

// doctorLine finds the doctor's line for check name and its fix line.
func doctorLine(t *testing.T, out, name string) (line, fix string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, name+" ") {
			if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "fix: ") {
				fix = strings.TrimSpace(lines[i+1])
			}
			return l, fix
		}
	}
	t.Fatalf("no %q line in:\n%s", name, out)
	return "", ""
}

// wantNO checks that the doctor says NO for name, with a fix saying wants.
func wantNO(t *testing.T, out, name string, wants ...string) {
	t.Helper()
	line, fix := doctorLine(t, out, name)
	t.Logf("doctor: %s\n%s", line, fix)
	if !strings.Contains(line, " NO ") {
		t.Errorf("doctor: want NO for %s: %q", name, line)
	}
	if fix == "" {
		t.Errorf("doctor: no fix for %s:\n%s", name, out)
	}
	for _, w := range wants {
		if !strings.Contains(fix, w) {
			t.Errorf("doctor: fix for %s does not say %q: %q", name, w, fix)
		}
	}
}

func skipUnlessParanoid2(t *testing.T) {
	t.Helper()
	if p := testutil.ReadTrim("/proc/sys/kernel/perf_event_paranoid"); p != "2" {
		t.Skipf("perf_event_paranoid is %s, this test is about 2", p)
	}
}

// setSysctl sets a sysctl for the test and puts the old value back after.
func setSysctl(t *testing.T, name, value string) {
	t.Helper()
	path := "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		t.Skipf("cannot set %s=%s: %v", name, value, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Errorf("restoring %s to %s: %v", name, old, err)
		}
	})
}

// TestPermAttachOtherUser: nobody may not sample root's processes, nor a
// kernel thread: one line that says whose process it is and the fix.
func TestPermAttachOtherUser(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	pid := strconv.Itoa(sleep.Process.Pid)
	for _, args := range [][]string{
		{"record", "-d", "1", "-o", "x.pb.gz", "-p", pid},                    // --calls auto
		{"record", "-d", "1", "-o", "x.pb.gz", "--calls", "none", "-p", pid}, // straight to perf_event_open
		{"top", "-p", pid},
	} {
		_, stderr, code := runNobody(t, dir, nobodyEnv{}, args...)
		wantOneLine(t, strings.Join(args, " "), stderr, code,
			"cannot sample process "+pid+" (sleep, owned by uid 0", "run as root", "setcap cap_perfmon,cap_sys_ptrace+ep")
	}
	if comm := testutil.ReadTrim("/proc/2/comm"); comm == "kthreadd" {
		_, stderr, code := runNobody(t, dir, nobodyEnv{}, "record", "-d", "1", "-o", "x.pb.gz", "--calls", "none", "-p", "2")
		wantOneLine(t, "record -p 2", stderr, code, "cannot sample process 2 (kthreadd, a kernel thread)", "as root")
	}
}

// TestPermUprobesUnprivileged: uprobes need CAP_SYS_ADMIN. Asked for, they
// fail in one line that says so; under --calls auto the run goes on
// without counting and says why.
func TestPermUprobesUnprivileged(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	if _, err := sampler.UprobeType(); err != nil {
		t.Skip(err)
	}
	const leaf = "github.com/cctop/cctop/workload.spinLeaf"
	spin := []string{"--", cctopBin, "workload", "spin", "-duration", "1s"}
	for _, args := range [][]string{
		{"record", "-o", "x.pb.gz", "--calls", "uprobe:" + leaf},
		{"record", "-o", "x.pb.gz", "--trigger", "calls", "--calls", "uprobe:" + leaf},
		{"record", "-o", "x.pb.gz", "--trigger", "exact", "--calls", "uprobe:" + leaf},
	} {
		_, stderr, code := runNobody(t, dir, nobodyEnv{}, append(args, spin...)...)
		wantOneLine(t, strings.Join(args, " "), stderr, code,
			"uprobe events need CAP_SYS_ADMIN", "run as root", "setcap cap_sys_admin+ep")
	}
	_, stderr, code := runNobody(t, dir, nobodyEnv{}, append([]string{"record", "-o", "x.folded", "--format", "folded"}, spin...)...)
	if code != 0 || strings.Contains(stderr, "goroutine ") {
		t.Fatalf("record --calls auto as nobody: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "call counter: none") || !strings.Contains(stderr, "uprobe events need CAP_SYS_ADMIN") || !strings.Contains(stderr, "setcap cap_sys_admin+ep") {
		t.Errorf("--calls auto without uprobes must say that it counts nothing, why, and the fix:\n%s", stderr)
	}
}

// TestDoctorUnprivileged: as nobody the doctor says NO, with a fix, to
// everything that needs a privilege.
func TestDoctorUnprivileged(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	out, stderr, code := runNobody(t, dir, nobodyEnv{}, "doctor")
	if code != 0 || strings.Contains(stderr+out, "goroutine ") {
		t.Fatalf("doctor as nobody: exit %d\n%s%s", code, out, stderr)
	}
	wantNO(t, out, "capabilities", "run as root", "setcap cap_perfmon,cap_sys_admin,cap_sys_ptrace,cap_ipc_lock+ep")
	wantNO(t, out, "kernel frames", "kernel.perf_event_paranoid=1", "CAP_PERFMON")
	wantNO(t, out, "attach (-p)", "run as root", "cap_sys_ptrace")
	if line, _ := doctorLine(t, out, "attach (-p)"); !strings.Contains(line, "ptrace_scope does not restrict -p") {
		t.Errorf("attach line says nothing of ptrace_scope: %q", line)
	}
	if _, err := sampler.UprobeType(); err == nil {
		wantNO(t, out, "uprobes", "CAP_SYS_ADMIN", "setcap cap_sys_admin+ep")
	}
	for _, ok := range []string{"perf_event_paranoid", "cpu-clock sampling", "launch (ptrace)"} {
		if line, _ := doctorLine(t, out, ok); !strings.Contains(line, " ok ") {
			t.Errorf("as nobody at paranoid 2 want ok: %q", line)
		}
	}
	// The ring allowance is shared with nobody's other perf users (other
	// tests): it may be short right now, but it has its line and fix.
	if line, fix := doctorLine(t, out, "ring buffers"); strings.Contains(line, " NO ") && !strings.Contains(fix, "ulimit -l") {
		t.Errorf("ring buffers: %q %q", line, fix)
	}
}

// TestPermParanoid3: Debian and Ubuntu kernels refuse unprivileged users
// at perf_event_paranoid 3; upstream kernels treat 3 as 2. Either way
// cctop and the doctor say what is true and the fix.
func TestPermParanoid3(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	setSysctl(t, "kernel.perf_event_paranoid", "3")
	_, stderr, code := runNobody(t, dir, nobodyEnv{}, "record", "-o", "x.pb.gz", "--calls", "none", "--", "true")
	out, derr, dcode := runNobody(t, dir, nobodyEnv{}, "doctor")
	line, _ := doctorLine(t, out, "perf_event_paranoid")
	if code == 0 {
		t.Logf("this kernel treats perf_event_paranoid 3 as 2")
		if dcode != 0 || !strings.Contains(line, " ok ") || !strings.Contains(line, "treats it as 2") {
			t.Errorf("doctor at paranoid 3 on a kernel that allows it: exit %d, %q", dcode, line)
		}
		return
	}
	wantOneLine(t, "record at paranoid 3", stderr, code, "sysctl kernel.perf_event_paranoid=2")
	wantNO(t, out, "perf_event_paranoid", "sysctl kernel.perf_event_paranoid=2")
	wantOneLine(t, "doctor at paranoid 3", derr, dcode, "sampling does not work here")
}

// TestPermSeccomp: a seccomp filter (a container's) that refuses
// perf_event_open, or ptrace, which launching needs.
func TestPermSeccomp(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	deny := nobodyEnv{deny: "perf_event_open"}
	_, stderr, code := runNobody(t, dir, deny, "record", "-o", "x.pb.gz", "--calls", "none", "--", "true")
	wantOneLine(t, "record without perf_event_open", stderr, code, "perf_event_open refused (by a seccomp filter", "allow perf_event_open")
	out, derr, dcode := runNobody(t, dir, deny, "doctor")
	wantOneLine(t, "doctor without perf_event_open", derr, dcode, "sampling does not work here")
	wantNO(t, out, "cpu-clock sampling", "seccomp", "perf_event_open")

	deny = nobodyEnv{deny: "ptrace"}
	_, stderr, code = runNobody(t, dir, deny, "record", "-o", "x.pb.gz", "--calls", "none", "--", "true")
	wantOneLine(t, "record without ptrace", stderr, code, "cannot launch true", "PTRACE_TRACEME", "seccomp", "attach with -p PID")
	out, derr, dcode = runNobody(t, dir, deny, "doctor")
	if dcode != 0 || strings.Contains(derr, "goroutine ") {
		t.Errorf("doctor without ptrace: exit %d\n%s", dcode, derr)
	}
	wantNO(t, out, "launch (ptrace)", "attach with -p PID")
}

// TestPermMlock: perf rings are locked memory. Past kernel.perf_event_mlock_kb
// they count against RLIMIT_MEMLOCK; cctop steps down to smaller rings
// with a note, and fails in one line when even the smallest does not fit.
func TestPermMlock(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	noLock := nobodyEnv{memlock: "0"}

	setSysctl(t, "kernel.perf_event_mlock_kb", "0")
	_, stderr, code := runNobody(t, dir, noLock, "record", "-o", "x.pb.gz", "--calls", "none", "--", "true")
	wantOneLine(t, "record with no locked memory", stderr, code, "cannot map a", "ulimit -l", "kernel.perf_event_mlock_kb")
	out, derr, dcode := runNobody(t, dir, noLock, "doctor")
	wantNO(t, out, "ring buffers", "ulimit -l", "kernel.perf_event_mlock_kb")
	wantOneLine(t, "doctor with no locked memory", derr, dcode, "sampling does not work here")

	// Room for 16-page rings (68 KiB per CPU), not the 64 pages cctop
	// starts with. Other processes of nobody's (other tests) share the
	// allowance, so the smallest ring may not fit either: then the one
	// line, else the note.
	setSysctl(t, "kernel.perf_event_mlock_kb", "100")
	_, stderr, code = runNobody(t, dir, noLock, "record", "-o", "x.pb.gz", "--calls", "none", "--", "true")
	if code != 0 {
		wantOneLine(t, "record with little locked memory", stderr, code, "cannot map a", "ulimit -l")
		return
	}
	t.Logf("record with little locked memory:\n%s", stderr)
	if strings.Count(stderr, "cctop: note: rings limited to") != 1 || !strings.Contains(stderr, "ulimit -l") {
		t.Errorf("smaller rings want one note naming the fix:\n%s", stderr)
	}
	out, _, _ = runNobody(t, dir, noLock, "doctor")
	if line, fix := doctorLine(t, out, "ring buffers"); !strings.Contains(line, " NO ") || !strings.Contains(fix, "ulimit -l") {
		t.Errorf("doctor with little locked memory: %q %q", line, fix)
	}
}

// TestPermKallsymsHidden: at perf_event_paranoid 1 nobody samples kernel
// frames, but kptr_restrict 1 hides their names from all but CAP_SYSLOG:
// the record says so in a note with the fix, and so does the doctor.
func TestPermKallsymsHidden(t *testing.T) {
	dir := nobodyDir(t)
	skipUnlessParanoid2(t)
	setSysctl(t, "kernel.kptr_restrict", "1")
	setSysctl(t, "kernel.perf_event_paranoid", "1")
	_, stderr, code := runNobody(t, dir, nobodyEnv{}, "record", "-o", "x.pb.gz", "--calls", "none", "--", "true")
	out, _, _ := runNobody(t, dir, nobodyEnv{}, "doctor")
	// Back to 2 as soon as possible (the cleanup does it again): other
	// users of the machine expect it.
	os.WriteFile("/proc/sys/kernel/perf_event_paranoid", []byte("2"), 0o644)
	if code != 0 || strings.Contains(stderr, "goroutine ") {
		t.Fatalf("record at paranoid 1: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "cctop: note: kernel frames stay unnamed: /proc/kallsyms hides addresses from this user") || !strings.Contains(stderr, "run as root (CAP_SYSLOG)") {
		t.Errorf("no note naming the fix for hidden kernel symbols:\n%s", stderr)
	}
	wantNO(t, out, "kernel symbols", "run as root (CAP_SYSLOG)", "kernel.kptr_restrict=0")
	if line, _ := doctorLine(t, out, "kernel frames"); !strings.Contains(line, " ok ") {
		t.Errorf("at paranoid 1 nobody gets kernel frames: %q", line)
	}
}
