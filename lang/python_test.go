package lang

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPythonOfInstalled reads the version of every CPython this machine
// has: pyenv's builds (a static binary or one linking libpython) and
// Debian's stripped /usr/bin/python3.
func TestPythonOfInstalled(t *testing.T) {
	want := map[string]Version{}
	for _, v := range []string{"3.9", "3.10", "3.11", "3.12", "3.13"} {
		m, _ := filepath.Glob("/root/.pyenv/versions/" + v + ".*/bin/python" + v)
		for _, p := range m {
			want[p] = parseVersion(v[:1], v[2:])
		}
	}
	if p, err := filepath.EvalSymlinks("/usr/bin/python3"); err == nil {
		if m := pythonName.FindStringSubmatch(filepath.Base(p)); m != nil {
			want["/usr/bin/python3"] = parseVersion(m[1], m[2])
		}
	}
	if len(want) == 0 {
		t.Skip("no CPython installed")
	}
	for p, w := range want {
		got, ok := PythonOf(p)
		if !ok || got != w {
			t.Errorf("PythonOf(%s) = %v, %v; want %v", p, got, ok, w)
		}
	}
	if _, ok := PythonOf("/bin/sh"); ok {
		t.Error("/bin/sh taken for a python")
	}
}

// TestPythonOfScript follows a script's #! line to its interpreter.
func TestPythonOfScript(t *testing.T) {
	py, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skip("no /usr/bin/python3")
	}
	wantV, ok := PythonOf(py)
	if !ok || wantV.Major == 0 {
		t.Skipf("%s: version unknown", py)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "app")
	if err := os.WriteFile(script, []byte("#!"+py+" -u\nprint(1)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, ok := PythonOf(script); !ok || v != wantV {
		t.Errorf("script: %v %v, want %v", v, ok, wantV)
	}
	shell := filepath.Join(dir, "tool")
	os.WriteFile(shell, []byte("#!/bin/sh\necho\n"), 0o755)
	if _, ok := PythonOf(shell); ok {
		t.Error("a shell script taken for a python")
	}
}

func TestForLaunch(t *testing.T) {
	dir := t.TempDir()
	// Scripts named as pythons stand for interpreters of those versions
	// (a pyenv shim is such a script).
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
		return p
	}
	py312, py311, shim := mk("python3.12"), mk("python3.11"), mk("python3")
	base := []string{"PATH=/usr/bin"}
	for _, c := range []struct {
		name    string
		path    string
		argv    []string
		env     []string
		keep    bool
		wantSet bool
		python  bool
	}{
		{"3.12 launched", py312, []string{"python3.12", "app.py"}, base, false, true, true},
		{"3.12 with -X perf", py312, []string{"python3.12", "-X", "perf", "app.py"}, base, false, false, true},
		{"3.12 with -Xperf_jit", py312, []string{"python3.12", "-Xperf_jit", "app.py"}, base, false, false, true},
		{"-X perf is the script's", py312, []string{"python3.12", "app.py", "-X", "perf"}, base, false, true, true},
		{"user set it to 0", py312, []string{"python3.12", "app.py"}, append(base, "PYTHONPERFSUPPORT=0"), false, false, true},
		{"keep-env", py312, []string{"python3.12", "app.py"}, base, true, false, true},
		{"3.11", py311, []string{"python3.11", "app.py"}, base, false, false, true},
		{"a shim, version unknown", shim, []string{"python3", "app.py"}, base, false, true, true},
		{"not python", "/bin/sh", []string{"sh", "-c", "true"}, base, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := ForLaunch(c.path, c.argv, c.env, c.keep)
			set := l.Env != nil
			if set != c.wantSet || l.PerfMap != set || l.Python != c.python {
				t.Fatalf("env set %v (PerfMap %v, python %v), want %v, python %v: %q", set, l.PerfMap, l.Python, c.wantSet, c.python, l.Note)
			}
			if want := c.python && c.name != "3.11"; want != (l.Note != "") {
				t.Errorf("note %q", l.Note)
			}
			if set && (!slices.Contains(l.Env, "PYTHONPERFSUPPORT=1") || !slices.Contains(l.Env, "PATH=/usr/bin") || len(c.env) != 1) {
				t.Errorf("env %q (the caller's %q)", l.Env, c.env)
			}
		})
	}
}

func TestRuntime(t *testing.T) {
	for exe, want := range map[string]string{
		"/usr/bin/node": "node", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java": "java",
		"/root/.pyenv/versions/3.12.1/bin/python3.12": "python", "/usr/bin/postgres": "", "javac": "",
	} {
		if got := Runtime(exe); got != want {
			t.Errorf("Runtime(%s) = %q, want %q", exe, got, want)
		}
		if a := JITAdvice(Runtime(exe)); a == "" {
			t.Errorf("no advice for %s", exe)
		}
	}
}
