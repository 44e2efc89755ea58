//go:build !linux || (!amd64 && !arm64)

package engine

// syscallNames is empty where cctop does not know the system call table:
// an off-CPU stack read from /proc is then named by number.
var syscallNames = map[int32]string{}
