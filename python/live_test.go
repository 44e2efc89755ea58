package python

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// interpreters are the CPythons of this machine that the tests read: pyenv's
// builds (a libpython each) and Debian's stripped python3 (one static
// executable); the image file of each.
func interpreters() []struct{ name, path string } {
	var out []struct{ name, path string }
	for _, v := range []string{"3.9", "3.10", "3.11", "3.12", "3.13"} {
		m, _ := filepath.Glob("/root/.pyenv/versions/" + v + ".*/bin/python" + v)
		if len(m) > 0 {
			out = append(out, struct{ name, path string }{"pyenv-" + v, m[0]})
		}
	}
	if _, err := os.Stat("/usr/bin/python3.11"); err == nil {
		out = append(out, struct{ name, path string }{"debian-3.11", "/usr/bin/python3.11"})
	}
	return out
}

// startSleeper runs testdata/sleeper.py under python and waits until both
// of its threads sleep.
func startSleeper(t *testing.T, python string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(python, "testdata/sleeper.py")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("sleeper said %q: %v", line, err)
	}
	return cmd
}

// TestReadLive reads the stacks of a running sleeper.py with every CPython
// of the machine: the main thread's frames, innermost first, are leaf,
// middle, Outer.method and <module>, each with the line it waits on, and
// the thread "worker-1" sleeps in worker; no ptrace, the threads running.
// With CCTOP_UPDATE_IMAGES=1 it records the memory it read into
// testdata/images, which TestReadImages replays where these Pythons are
// not installed.
func TestReadLive(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reading another process's memory needs root or ptrace rights here")
	}
	found := false
	for _, py := range interpreters() {
		t.Run(py.name, func(t *testing.T) {
			found = true
			cmd := startSleeper(t, py.path)
			pid := cmd.Process.Pid
			rec := &recorder{mem: ProcessMemory(pid), pages: imageMemory{}}
			in, err := Find(pid, rec)
			if err != nil {
				t.Fatalf("Find: %v", err)
			}
			states, err := in.threadStates(rec, nil)
			if err != nil {
				t.Fatalf("thread states: %v", err)
			}
			rd := newReader(in, rec)
			var stacks map[int][]string
			// "ready" comes just before the sleep: read until the main
			// thread is past the print.
			for try := 0; ; try++ {
				stacks = map[int][]string{}
				for _, s := range states {
					frames, err := rd.stack(s.addr, 1, nil, nil)
					if err != nil {
						t.Fatalf("thread %d: %v", s.tid, err)
					}
					stacks[s.tid] = frameStrings(frames)
				}
				if m := stacks[pid]; try == 50 || len(m) > 0 && strings.HasSuffix(m[0], ":18") {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			checkSleeper(t, in, pid, stacks)
			if os.Getenv("CCTOP_UPDATE_IMAGES") != "" {
				im := &image{Version: in.Version.String(), Module: in.Module, Runtime: in.Runtime,
					Types: [3]uint64{in.CodeType, in.StrType, in.BytesType}, TidOff: in.tidOffset,
					Threads: stacks, mem: rec.pages}
				os.MkdirAll("testdata/images", 0o755)
				if err := writeImage("testdata/images/"+py.name+".json.gz", im); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if !found {
		t.Skip("no CPython 3.9-3.13 installed")
	}
}

// checkSleeper checks the stacks of sleeper.py, by tid.
func checkSleeper(t *testing.T, in *Interpreter, pid int, stacks map[int][]string) {
	t.Helper()
	if len(stacks) != 2 {
		t.Fatalf("%d threads read, want 2: %v", len(stacks), stacks)
	}
	main := stacks[pid]
	method := "Outer.method"
	if !in.Version.AtLeast(3, 11) {
		method = "method" // co_qualname is 3.11's
	}
	var names []string
	for _, f := range main {
		if f != "|" {
			names = append(names, strings.Fields(f)[0])
		}
	}
	want := []string{"leaf", "middle", method, "<module>"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("main thread %d: %v, want %v", pid, main, want)
	}
	if len(main) > 0 && !strings.HasSuffix(main[0], "sleeper.py:18") {
		t.Errorf("leaf frame %q: want sleeper.py:18, the line of its time.sleep", main[0])
	}
	// 3.9 and 3.10 evaluate each frame on its own; 3.11+ one evaluation
	// for the Python calls, from <module>.
	wantEvals := 1
	if !in.Version.AtLeast(3, 11) {
		wantEvals = 4
	}
	if n := strings.Count(strings.Join(main, "\n"), "|"); n != wantEvals {
		t.Errorf("main thread: %d evaluations, want %d: %v", n, wantEvals, main)
	}
	for tid, st := range stacks {
		if tid == pid {
			continue
		}
		if len(st) == 0 || !strings.HasPrefix(st[0], "worker ") {
			t.Errorf("thread %d: %v, want worker innermost", tid, st)
		}
	}
}

// TestReadImages replays the recorded images: the same stacks from the
// same memory, with no Python installed.
func TestReadImages(t *testing.T) {
	files, _ := filepath.Glob("testdata/images/*.json.gz")
	if len(files) == 0 {
		t.Skip("no images recorded")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			im, err := readImage(f)
			if err != nil {
				t.Fatal(err)
			}
			states, err := im.interp.threadStates(im.mem, nil)
			if err != nil {
				t.Fatalf("thread states: %v", err)
			}
			if len(states) != len(im.Threads) {
				t.Fatalf("%d thread states, recorded %d", len(states), len(im.Threads))
			}
			rd := newReader(im.interp, im.mem)
			stacks := map[int][]string{}
			for _, s := range states {
				frames, err := rd.stack(s.addr, 1, nil, nil)
				if err != nil {
					t.Fatalf("thread %d: %v", s.tid, err)
				}
				got := frameStrings(frames)
				if strings.Join(got, "\n") != strings.Join(im.Threads[s.tid], "\n") {
					t.Errorf("thread %d: read %v, recorded %v", s.tid, got, im.Threads[s.tid])
				}
				stacks[s.tid] = got
			}
			pid := 0
			for tid := range stacks {
				if pid == 0 || tid < pid {
					pid = tid // the main thread's tid is the pid, the lowest
				}
			}
			checkSleeper(t, im.interp, pid, stacks)
		})
	}
}
