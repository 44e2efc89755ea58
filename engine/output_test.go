package engine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// leftovers lists the temporary files of writeAtomic left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".cctop-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWriteAtomicSymlinks: an output named by a symlink replaces the link
// and never writes into what it points to; a link to a directory or a
// device is refused in one line, before anything is written; a symlinked
// directory in the path is followed, since the user named it.
func TestWriteAtomicSymlinks(t *testing.T) {
	dir := t.TempDir()
	// elsewhere stands for a place the user did not name, such as /etc.
	elsewhere := t.TempDir()
	passwd := filepath.Join(elsewhere, "passwd")
	if err := os.WriteFile(passwd, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(elsewhere, "sub")
	os.Mkdir(sub, 0o755)
	for _, c := range []struct {
		name, target string
		wantErr      string // "" when the link is replaced
	}{
		{"to-file", passwd, ""},
		{"dangling", filepath.Join(elsewhere, "missing"), ""},
		{"to-dir", sub, "is a directory"},
		{"to-device", "/dev/null", "not a regular file"},
		{"loop", "loop", ""},
	} {
		link := filepath.Join(dir, c.name)
		if err := os.Symlink(c.target, link); err != nil {
			t.Fatal(err)
		}
		checkErr := CheckWritable(link)
		err := WriteFileAtomic(link, []byte("profile\n"))
		if c.wantErr != "" {
			for _, e := range []error{checkErr, err} {
				if e == nil || e.Error() != "cannot write "+link+": "+c.wantErr {
					t.Errorf("%s: error %v, want %q", c.name, e, c.wantErr)
				}
			}
			if got, _ := os.Readlink(link); got != c.target {
				t.Errorf("%s: the refused link now points to %q", c.name, got)
			}
			continue
		}
		if checkErr != nil || err != nil {
			t.Errorf("%s: CheckWritable: %v; WriteFileAtomic: %v", c.name, checkErr, err)
			continue
		}
		if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: the output is not a regular file in place of the link: %v %v", c.name, fi.Mode(), err)
		} else if got := readString(t, link); got != "profile\n" {
			t.Errorf("%s: output holds %q", c.name, got)
		}
	}
	if got := readString(t, passwd); got != "root:x:0:0\n" {
		t.Errorf("the file a link pointed to was written: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dangling link's target was created: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(sub, "*")); len(m) > 0 {
		t.Errorf("files written into a linked directory: %v", m)
	}

	// A directory the user named through a symlink is followed.
	real := t.TempDir()
	viaLink := filepath.Join(dir, "outdir")
	if err := os.Symlink(real, viaLink); err != nil {
		t.Fatal(err)
	}
	if err := CheckWritable(filepath.Join(viaLink, "p.pb.gz")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(viaLink, "p.pb.gz"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(real, "p.pb.gz")); got != "x" {
		t.Errorf("through a symlinked directory: %q", got)
	}
	for _, d := range []string{dir, elsewhere, real} {
		if l := leftovers(t, d); len(l) > 0 {
			t.Errorf("temporary files left: %v", l)
		}
	}
}

// TestWriteAtomicFailure: a write that fails leaves neither a temporary
// file nor a truncated output, and an existing output keeps its content;
// the error is one line naming the output, not the temporary file.
func TestWriteAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	failing := func(w io.Writer) error {
		// More than a buffer's worth, so part of it reaches the file.
		w.Write([]byte(strings.Repeat("partial profile\n", 4096)))
		return syscall.ENOSPC
	}
	existing := filepath.Join(dir, "old.pb.gz")
	os.WriteFile(existing, []byte("the old profile\n"), 0o600)
	for _, path := range []string{existing, filepath.Join(dir, "new.pb.gz")} {
		err := writeAtomic(path, failing)
		if err == nil || err.Error() != "cannot write "+path+": no space left on device" {
			t.Errorf("error %v", err)
		}
	}
	if got := readString(t, existing); got != "the old profile\n" {
		t.Errorf("the existing output changed to %.40q...", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.pb.gz")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed write left an output: %v", err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}

	// A directory that is gone by the time of writing.
	gone := filepath.Join(dir, "gone")
	os.Mkdir(gone, 0o755)
	if err := CheckWritable(filepath.Join(gone, "p")); err != nil {
		t.Fatal(err)
	}
	os.Remove(gone)
	err := WriteFileAtomic(filepath.Join(gone, "p"), []byte("x"))
	if err == nil || err.Error() != "cannot write "+filepath.Join(gone, "p")+": no such file or directory" {
		t.Errorf("error %v", err)
	}
}

// TestWriteAtomicMode: a new output gets 0666 less the umask, as any new
// file; a replaced one keeps its permissions.
func TestWriteAtomicMode(t *testing.T) {
	old := syscall.Umask(0o027)
	syscall.Umask(old)
	if got := umask(); got != fs.FileMode(old) {
		t.Errorf("umask() = %o, want %o", got, old)
	}
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new")
	if err := WriteFileAtomic(fresh, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o666&^fs.FileMode(old) {
		t.Errorf("new output has mode %v with umask %o", fi.Mode(), old)
	}
	private := filepath.Join(dir, "private")
	os.WriteFile(private, nil, 0o600)
	os.Chmod(private, 0o600)
	if err := WriteFileAtomic(private, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(private); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced output has mode %v, was 0600", fi.Mode())
	}
}
