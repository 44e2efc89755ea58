package lang

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestForAttach: a running CPython 3.12 without its trampolines gets the
// advice to turn them on; with -X perf it is said to have them; a program
// that is no python gets nothing.
func TestForAttach(t *testing.T) {
	m, _ := filepath.Glob("/root/.pyenv/versions/3.12.*/bin/python3.12")
	if len(m) == 0 {
		t.Skip("no python3.12")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "import time; time.sleep(1); time.sleep(30)"}, "without perf trampolines"},
		{[]string{"-X", "perf", "-c", "import time; time.sleep(1); time.sleep(30)"}, "perf trampolines on"},
	} {
		cmd := exec.Command(m[0], c.args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		// The perf map is written as the first function runs.
		deadline := time.Now().Add(5 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			if got = ForAttach(pid); strings.Contains(got, c.want) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		os.Remove("/tmp/perf-" + strconv.Itoa(pid) + ".map")
		if !strings.Contains(got, c.want) || !strings.HasPrefix(got, "python 3.12") {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
	if got := ForAttach(os.Getpid()); got != "" {
		t.Errorf("a Go test binary: %q", got)
	}
}
