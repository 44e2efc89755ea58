package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/cctop/cctop/cct"
)

// fakeProc writes a /proc of processes: pid → comm and NUL-separated
// command line.
func fakeProc(t *testing.T, procs map[int][2]string) string {
	dir := t.TempDir()
	for pid, p := range procs {
		d := filepath.Join(dir, strconv.Itoa(pid))
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "comm"), []byte(p[0]+"\n"), 0o644)
		os.WriteFile(filepath.Join(d, "cmdline"), []byte(p[1]), 0o644)
	}
	return dir
}

// TestProcessLevel: a target's profile has no process level until a second
// process is sampled; then what came before moves under the target's
// process, titled by its command line, and each process has its own. A
// process gone from /proc is named by its COMM record; an exec titles the
// process anew.
func TestProcessLevel(t *testing.T) {
	b := newBuilder(nil)
	b.proc.procDir = fakeProc(t, map[int][2]string{100: {"app", "app\x00--serve\x00"}, 200: {"worker", "app: worker 1\x00"}})
	b.enableProcesses(false, 100)
	work := b.tree.Intern(cct.Func{Name: "work", Module: "/bin/app"})
	add := func(pid uint32) cct.NodeID {
		b.proc.pid = pid
		st := []cct.Frame{{Func: work, Addr: 0x10}}
		if f, ok := b.processFrame(); ok {
			st = append(st, f)
		}
		return b.tree.Add(st, pid, cct.Metrics{Samples: 1})
	}
	add(100)
	add(100)
	if k := b.tree.Children(0); len(k) != 1 || b.tree.Node(k[0]).Func != work {
		t.Fatalf("one process: roots %v, want work alone", k)
	}
	add(200)
	roots := map[string]int64{}
	for _, k := range b.tree.Children(0) {
		f := b.tree.Func(b.tree.Node(k).Func)
		if !f.IsProcess() {
			t.Fatalf("a root of two processes is %q", f.Name)
		}
		roots[f.Name+"|"+f.Short] = b.tree.Node(k).Total.Samples
	}
	want := map[string]int64{"app --serve [pid 100]|app [pid 100]": 2, "app: worker 1 [pid 200]|worker [pid 200]": 1}
	if len(roots) != len(want) || roots["app --serve [pid 100]|app [pid 100]"] != 2 || roots["app: worker 1 [pid 200]|worker [pid 200]"] != 1 {
		t.Errorf("roots %v, want %v", roots, want)
	}
	// Gone from /proc: its COMM record names it.
	b.noteComm(300, 300, "short-lived")
	b.noteComm(300, 301, "a-thread")
	add(300)
	b.proc.pid = 300
	f, _ := b.processFrame()
	if fn := b.tree.Func(f.Func); fn.Short != "short-lived [pid 300]" {
		t.Errorf("a process gone from /proc: %q", fn.Short)
	}
	// An exec: the next sample's process is titled again.
	os.WriteFile(filepath.Join(b.proc.procDir, "200", "cmdline"), []byte("python3\x00job.py\x00"), 0o644)
	os.WriteFile(filepath.Join(b.proc.procDir, "200", "comm"), []byte("python3\n"), 0o644)
	b.forgetProcess(200)
	b.proc.pid = 200
	if f, _ := b.processFrame(); b.tree.Func(f.Func).Name != "python3 job.py [pid 200]" {
		t.Errorf("after exec: %q", b.tree.Func(f.Func).Name)
	}
}

// TestProcessLevelHost: over the host every sample has its process from
// the first.
func TestProcessLevelHost(t *testing.T) {
	b := newBuilder(nil)
	b.proc.procDir = fakeProc(t, map[int][2]string{100: {"app", "app\x00"}})
	b.enableProcesses(true, 0)
	b.proc.pid = 100
	if f, ok := b.processFrame(); !ok || b.tree.Func(f.Func).Name != "app [pid 100]" {
		t.Errorf("first sample over the host: %v %v", f, ok)
	}
	var off builder
	off.tree = cct.New()
	off.proc.pid = 100
	if _, ok := off.processFrame(); ok {
		t.Error("a builder without the level (the agent's) made a process frame")
	}
}
