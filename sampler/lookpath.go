package sampler

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
)

// LookPath finds the program a command runs, as exec.LookPath does, with a
// one-line error: "command not found: NAME", or "cannot run NAME: REASON"
// when NAME is there but no program (not executable, a directory).
func LookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) && !errors.Is(ee.Err, exec.ErrNotFound) && !errors.Is(ee.Err, fs.ErrNotExist) {
			return "", fmt.Errorf("cannot run %s: %v", name, ee.Err)
		}
		return "", fmt.Errorf("command not found: %s", name)
	}
	return path, nil
}
