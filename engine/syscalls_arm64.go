//go:build linux && arm64

package engine

// syscallNames names the system calls a thread commonly blocks in, by
// number (include/uapi/asm-generic/unistd.h), for the reason of an
// off-CPU stack read from /proc.
var syscallNames = map[int32]string{
	22: "epoll_pwait", 25: "fcntl", 32: "flock", 63: "read", 64: "write", 65: "readv", 66: "writev",
	67: "pread64", 68: "pwrite64", 72: "pselect6", 73: "ppoll", 76: "splice", 82: "fsync",
	83: "fdatasync", 95: "waitid", 98: "futex", 101: "nanosleep", 115: "clock_nanosleep",
	124: "sched_yield", 133: "rt_sigsuspend", 137: "rt_sigtimedwait", 188: "msgrcv",
	192: "semtimedop", 193: "semop", 202: "accept", 203: "connect", 206: "sendto",
	207: "recvfrom", 211: "sendmsg", 212: "recvmsg", 242: "accept4", 260: "wait4",
	278: "getrandom", 426: "io_uring_enter", 441: "epoll_pwait2", 4: "io_getevents", 56: "openat",
}
