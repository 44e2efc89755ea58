package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
)

// TestRecordUnprivileged: at perf_event_paranoid 2 an ordinary user can
// profile their own processes: cctop must not demand root, and it says that
// it left kernel frames out.
func TestRecordUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	if p := testutil.ReadTrim("/proc/sys/kernel/perf_event_paranoid"); p != "2" {
		t.Skipf("perf_event_paranoid is %s, this test is about 2", p)
	}
	dir := nobodyDir(t)
	cmd := exec.Command(cctopBin, "record", "-o", "u.folded", "--format", "folded", "--", cctopBin, "workload", "spin", "-duration", "1s")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("record as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kernel frames excluded") {
		t.Errorf("no note about kernel frames:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "u.folded"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "workload.spinCaller;github.com/cctop/cctop/workload.spinLeaf") {
		t.Errorf("no spinCaller;spinLeaf stacks in:\n%.400s", b)
	}
	fi, _ := os.Stat(filepath.Join(dir, "u.folded"))
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65534 {
		t.Errorf("output owned by uid %d", st.Uid)
	}
}
