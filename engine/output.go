package engine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Output files (profiles, exports, eval's JSON) are written to a temporary
// file in the destination's directory, created exclusively (O_EXCL, never
// through a link someone put there), and renamed into place: an interrupted
// or failed write leaves the old file, or none, never half a file. Renaming
// replaces a symlink the user named, not the file it points to: cctop never
// writes through a link into a place the user did not name. A symlinked
// directory in the path is the user's to name and is followed.

// WriteFileAtomic writes data to path that way.
func WriteFileAtomic(path string, data []byte) error {
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomic writes path with write, through a temporary file beside it
// that is renamed into place once write succeeded and everything is on
// disk, and removed otherwise.
func writeAtomic(path string, write func(io.Writer) error) (err error) {
	if err := checkTarget(path); err != nil {
		return err
	}
	mode := outputMode(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cctop-*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, pathErr(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("cannot write %s: %v", path, pathErr(err))
		}
	}()
	w := bufio.NewWriter(tmp)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// CheckWritable fails early, before sampling, if the output can't be
// written.
func CheckWritable(path string) error {
	if err := checkTarget(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cctop-*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, pathErr(err))
	}
	tmp.Close()
	os.Remove(tmp.Name())
	return nil
}

// checkTarget refuses an output path that a new file must not replace: a
// directory, or a device, pipe or socket (such as /dev/stdout), also when a
// symlink names it. A symlink to a regular file or to nothing is fine: the
// new file replaces the link.
func checkTarget(path string) error {
	if path == "" {
		return errors.New("cannot write a file without a name")
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		// Missing, or a dangling link: the new file takes its place. The
		// other errors come back, more precisely, when the file is made.
		return nil
	case fi.IsDir():
		return fmt.Errorf("cannot write %s: is a directory", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("cannot write %s: not a regular file", path)
	}
	return nil
}

// outputMode is the permission of a new output at path: the file's it
// replaces, else what the umask leaves of 0666, as for any new file.
func outputMode(path string) fs.FileMode {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		return fi.Mode().Perm()
	}
	return 0o666 &^ umask()
}

// umask is the process's file mode creation mask, read from
// /proc/self/status: setting it to read it back would race with files that
// other goroutines create.
func umask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m) & fs.ModePerm
				}
			}
		}
	}
	return 0o022
}

// pathErr is err without the path of the file it was about, for messages
// that name the output instead of its temporary file.
func pathErr(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}
