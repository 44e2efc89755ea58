package engine

import "golang.org/x/sys/unix"

// closeInherited closes the n descriptors from 3 up: the events a release
// child was handed.
func closeInherited(n int) { unix.CloseRange(3, uint(3+n-1), 0) }
