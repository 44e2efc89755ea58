package engine

import "testing"

func TestPyFunc(t *testing.T) {
	for _, c := range []struct {
		in, name, file string
		ok             bool
	}{
		{"py::leaf:/tmp/j/hot.py", "leaf (hot.py)", "/tmp/j/hot.py", true},
		{"py::Outer.run.<locals>.f:/srv/app/x.py", "Outer.run.<locals>.f (x.py)", "/srv/app/x.py", true},
		{"py::<module>:<string>", "<module> (<string>)", "<string>", true},
		{"py::noFile", "", "", false},
		{"JS:*hotLoopFib /tmp/j/hot.js:1:20", "", "", false},
	} {
		f, ok := pyFunc(c.in, "[jit]")
		if ok != c.ok || ok && (f.Name != c.name || f.File != c.file || f.System != c.in || f.Module != "[jit]") {
			t.Errorf("pyFunc(%q) = %+v, %v; want %q in %q", c.in, f, ok, c.name, c.file)
		}
	}
}
