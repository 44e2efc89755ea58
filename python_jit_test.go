package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
)

// pyenvPython is pyenv's python of version v (e.g. "3.12"), "" if missing.
func pyenvPython(v string) string {
	m, _ := filepath.Glob("/root/.pyenv/versions/" + v + ".*/bin/python" + v)
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// TestPythonTrampolines (issue 30): a CPython 3.12+ launched by cctop,
// with no flags, runs with its perf trampolines (cctop sets
// PYTHONPERFSUPPORT=1), and the stacks go through them: pyenv's builds keep
// no frame pointers, and the trampolines, anonymous code with no CFI, are
// unwound from their own machine code. Python functions show as "name
// (file)", with shares within 3 points of the script's own clock.
func TestPythonTrampolines(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	for _, c := range []struct {
		name, version string
		flags         []string
		wantSet       bool
	}{
		{"3.12 no flags", "3.12", nil, true},
		{"3.12 -X perf", "3.12", []string{"-X", "perf"}, false},
		{"3.13 no flags", "3.13", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			py := pyenvPython(c.version)
			if py == "" {
				t.Skipf("python%s not installed", c.version)
			}
			dir := t.TempDir()
			args := append([]string{"record", "-d", "60s", "-o", "p.pb.gz", "--", py}, c.flags...)
			wd, _ := os.Getwd()
			args = append(args, filepath.Join(wd, "testdata", "pyshares.py"), "4")
			stdout, stderr, code := testutil.Run(t, cctopBin, dir, args...)
			if code != 0 {
				t.Fatalf("record exit %d:\n%s", code, stderr)
			}
			var wantA, wantB, cpu float64
			var pid int
			if _, err := fmt.Sscanf(stdout, "shares %f %f cpu %f pid %d", &wantA, &wantB, &cpu, &pid); err != nil {
				t.Fatalf("script said %q", stdout)
			}
			if set := strings.Contains(stderr, "cctop set PYTHONPERFSUPPORT=1"); set != c.wantSet {
				t.Errorf("summary says cctop set the variable: %v, want %v:\n%s", set, c.wantSet, stderr)
			}
			p := testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz"))
			var total, complete, a, b int64
			for _, s := range p.Sample {
				v := s.Value[0]
				total += v
				names := testutil.StackNames(s)
				trunc, inA, inB := false, false, false
				for _, n := range names {
					trunc = trunc || n == "[truncated]"
					inA = inA || n == "spin_a (pyshares.py)"
					inB = inB || n == "spin_b (pyshares.py)"
				}
				if !trunc {
					complete += v
				}
				if inA {
					a += v
				}
				if inB {
					b += v
				}
			}
			share := func(n int64) float64 { return float64(n) / float64(max(total, 1)) }
			t.Logf("%d samples, %.1f%% complete; spin_a %.1f%% (script %.1f%%), spin_b %.1f%% (script %.1f%%)",
				total, 100*share(complete), 100*share(a), 100*wantA, 100*share(b), 100*wantB)
			if share(complete) < 0.95 {
				t.Errorf("%.1f%% of stacks complete, want >= 95%%:\n%s", 100*share(complete), stderr)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"spin_a", share(a), wantA}, {"spin_b", share(b), wantB}} {
				if d := 100 * (f.got - f.want); d > 3 || d < -3 {
					t.Errorf("%s: %.1f%% of samples, the script measured %.1f%%", f.name, 100*f.got, 100*f.want)
				}
			}
			// cctop removes the perf map of trampolines it turned on, and
			// leaves one the user asked for.
			m := fmt.Sprintf("/tmp/perf-%d.map", pid)
			_, err := os.Stat(m)
			if left := err == nil; left == c.wantSet {
				t.Errorf("%s left behind: %v, want %v", m, left, !c.wantSet)
			}
			os.Remove(m)
		})
	}
}
