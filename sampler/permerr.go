package sampler

// PermissionError is a refusal (EACCES, EPERM) with what to do about it,
// printed as one line. perms.go makes them.
type PermissionError struct {
	What string // what was refused: "cannot sample process 12 (sleep, owned by uid 0 (root))"
	Fix  string // the fix, in words that name the command
	Err  error  // the errno
}

func (e *PermissionError) Error() string { return e.What + ": permission denied; " + e.Fix }
func (e *PermissionError) Unwrap() error { return e.Err }
