package symbol

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// These tests run targets the way containers do: in their own mount (and
// PID) namespaces, from files that do not exist in ours, and from files
// that were deleted after they were started.

// needUnshare skips the test unless unshare can create the namespaces
// named by flags here.
func needUnshare(t *testing.T, flags ...string) string {
	t.Helper()
	bin := needTool(t, "unshare")
	args := append(flags, "--fork", "sh", "-c", "mount -t tmpfs cctop-probe /mnt")
	if _, err := os.Stat("/mnt"); err != nil {
		t.Skip("no /mnt to mount a private tmpfs on")
	}
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Skipf("cannot create namespaces (unshare %s): %v: %s", strings.Join(flags, " "), err, out)
	}
	return bin
}

// nsChild is the pid of the only child of pid: the process unshare --fork
// runs in the new namespaces.
func nsChild(t *testing.T, pid int) int {
	t.Helper()
	s := strconv.Itoa(pid)
	data, err := os.ReadFile("/proc/" + s + "/task/" + s + "/children")
	if err != nil {
		t.Skipf("cannot find unshare's child: %v", err)
	}
	f := strings.Fields(string(data))
	if len(f) != 1 {
		t.Fatalf("unshare has children %q, want one", f)
	}
	child, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return child
}

// writeScript writes an executable shell script: startTarget and
// startCommander run a program without arguments.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// mappedPath is the path pid maps its executable code at pc from.
func mappedPath(t *testing.T, r *Resolver, pid int, pc uint64) string {
	t.Helper()
	for _, m := range r.Mappings(pid) {
		if m.Start <= pc && pc < m.Limit {
			return m.Path
		}
	}
	t.Fatalf("pid %d: no mapping for %#x", pid, pc)
	return ""
}

// checkNames looks up the C test program's functions in pid and expects
// their names and link-time addresses from the binary at bin.
func checkNames(t *testing.T, r *Resolver, pid int, addrs map[string]uint64, bin, module string) {
	t.Helper()
	for _, name := range []string{"alpha", "beta", "gamma_local", "main"} {
		pc := addrs[name]
		want := elfSymbol(t, bin, name)
		f := lookup1(r, pid, pc+1)
		if f.Func != name || f.Module != module || f.Addr != want+1 {
			t.Errorf("Lookup(%s+1 = %#x) = %+v, want Func %s Module %s Addr %#x", name, pc+1, f, name, module, want+1)
		}
	}
}

// TestLookupOtherMountNamespace: a program run from a tmpfs mounted in its
// own mount namespace, at a path that is an empty directory in ours, is
// read through /proc/PID/root.
func TestLookupOtherMountNamespace(t *testing.T) {
	unshare := needUnshare(t, "--mount")
	prog, _ := buildC(t, cBuilds[1]) // pie
	dir := filepath.Join(t.TempDir(), "ns")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tg := startTarget(t, writeScript(t, "exec "+quoteArgs(unshare, "--mount", "--fork", "sh", "-c",
		`mount -t tmpfs cctop "$0" && cp "$1" "$0/prog" && exec "$0/prog"`, dir, prog)))
	pid := nsChild(t, tg.pid)
	r := NewResolver()
	if err := r.LoadProc(pid); err != nil {
		t.Fatal(err)
	}
	path := mappedPath(t, r, pid, tg.addrs["main"])
	if path != filepath.Join(dir, "prog") {
		t.Fatalf("program mapped from %q, want %q", path, filepath.Join(dir, "prog"))
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists in our mount namespace: the test proves nothing", path)
	}
	checkNames(t, r, pid, tg.addrs, prog, path)
}

// TestLookupDeletedBinary: a program whose file was deleted after it
// started is read through /proc/PID/map_files.
func TestLookupDeletedBinary(t *testing.T) {
	prog, _ := buildC(t, cBuilds[1]) // pie
	doomed := filepath.Join(t.TempDir(), "doomed")
	data, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doomed, data, 0o755); err != nil {
		t.Fatal(err)
	}
	tg := startTarget(t, doomed)
	if err := os.Remove(doomed); err != nil {
		t.Fatal(err)
	}
	r := NewResolver()
	if err := r.LoadProc(tg.pid); err != nil {
		t.Fatal(err)
	}
	path := mappedPath(t, r, tg.pid, tg.addrs["main"])
	if path != doomed+" (deleted)" {
		t.Fatalf("program mapped from %q, want %q", path, doomed+" (deleted)")
	}
	checkNames(t, r, tg.pid, tg.addrs, prog, path)
}

// TestPerfMapOtherNamespaces: a JIT in its own PID and mount namespaces,
// with a private /tmp, writes /tmp/perf-1.map there (it is pid 1 to
// itself). The resolver finds the file through /proc/PID/root under the
// namespace's pid, and follows it as the JIT appends.
func TestPerfMapOtherNamespaces(t *testing.T) {
	unshare := needUnshare(t, "--mount", "--pid", "--mount-proc")
	jit := buildJIT(t)
	// The binary goes to a private tmpfs on /mnt first: /tmp, where the
	// test built it, is then covered by the namespace's own tmpfs.
	c := startCommander(t, writeScript(t, "exec "+quoteArgs(unshare, "--mount", "--pid", "--mount-proc", "--fork", "sh", "-c",
		`mount -t tmpfs cctop /mnt && cp "$0" /mnt/jit && mount -t tmpfs cctop /tmp && exec /mnt/jit`, jit)))
	pid := nsChild(t, c.pid)
	if c.addrs["nspid"] != 1 {
		t.Fatalf("JIT is pid %d to itself, want 1", c.addrs["nspid"])
	}
	if got := nsPID(pid); got != 1 {
		t.Fatalf("nsPID(%d) = %d, want 1", pid, got)
	}
	if _, err := os.Stat("/tmp/perf-1.map"); err == nil {
		t.Skip("/tmp/perf-1.map exists in our namespace: cannot tell which file was read")
	}
	r := NewResolver()
	if err := r.LoadProc(pid); err != nil {
		t.Fatal(err)
	}
	checkJIT(t, r, pid, c)
	// The program itself is only in the namespace's /mnt.
	if f := lookup1(r, pid, c.addrs["main"]); f.Func != "main" || f.Module != "/mnt/jit" {
		t.Errorf("Lookup(main) = %+v, want main in /mnt/jit", f)
	}
}

// quoteArgs quotes args for sh.
func quoteArgs(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
