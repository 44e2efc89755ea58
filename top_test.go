package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInternalErrorFile: the stack of an internal error goes to a new file
// that only its user can read, named in the one-line error.
func TestInternalErrorFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	err := internalError("boom", []byte("goroutine 1 [running]:\nmain.f()\n"))
	m, _ := filepath.Glob(filepath.Join(tmp, "cctop-panic-*.txt"))
	if len(m) != 1 {
		t.Fatalf("stack files %v", m)
	}
	if want := "internal error: boom (stack trace in " + m[0] + ")"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	fi, _ := os.Stat(m[0])
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("stack file mode %v, want 0600", fi.Mode())
	}
	if b, _ := os.ReadFile(m[0]); !strings.Contains(string(b), "cctop internal error: boom") || !strings.Contains(string(b), "main.f()") {
		t.Errorf("stack file holds %q", b)
	}
}
