package symbol

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// target is a running test program and the addresses it printed.
type target struct {
	pid   int
	addrs map[string]uint64
	cmd   *exec.Cmd
}

// startTarget runs path, which prints "name 0xaddr" lines then "ready" and
// waits for stdin to close. The process is killed when the test ends.
func startTarget(t *testing.T, path string, env ...string) *target {
	t.Helper()
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), env...)
	tg, _, sc := launch(t, cmd, nil)
	go func() {
		for sc.Scan() {
		}
	}()
	return tg
}

// launch starts cmd, which prints "name 0xaddr" lines then "ready", and
// reads those lines. It returns the target, its stdin, and its stdout
// positioned after "ready". The process's stderr goes to stderr, or to
// ours when nil; it is stopped when the test ends (stdin closed, then
// killed after 5 s).
func launch(t *testing.T, cmd *exec.Cmd, stderr *strings.Builder) (*target, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	tg := &target{pid: cmd.Process.Pid, addrs: map[string]uint64{}, cmd: cmd}
	path := cmd.Path
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ready") {
			return tg, stdin, sc
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("%s: bad line %q", path, line)
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(val, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("%s: bad address in %q", path, line)
		}
		tg.addrs[name] = a
	}
	msg := fmt.Sprint(sc.Err())
	if stderr != nil {
		cmd.Wait()
		msg = stderr.String()
	}
	t.Fatalf("%s exited before ready: %s", path, msg)
	return nil, nil, nil
}

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return p
}

// run runs a build command in dir and fails the test with its output.
func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// copySource copies testdata/src/name into dir.
func copySource(t *testing.T, dir, name, as string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "src", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, as), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// elfSymbol reads the value of the function symbol name from path's
// .symtab (or .dynsym) with debug/elf alone: the expected module-relative
// address, found independently of the package's translation.
func elfSymbol(t *testing.T, path, name string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Value
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return 0
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func lookup1(r *Resolver, pid int, pc uint64) Frame {
	fs := r.Lookup(pid, pc, nil)
	if len(fs) != 1 {
		panic("want one frame")
	}
	return fs[0]
}
