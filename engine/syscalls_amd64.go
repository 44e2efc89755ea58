//go:build linux && amd64

package engine

// syscallNames names the system calls a thread commonly blocks in, by
// number (arch/x86/entry/syscalls/syscall_64.tbl), for the reason of an
// off-CPU stack read from /proc.
var syscallNames = map[int32]string{
	0: "read", 1: "write", 7: "poll", 17: "pread64", 18: "pwrite64", 19: "readv", 20: "writev",
	23: "select", 24: "sched_yield", 34: "pause", 35: "nanosleep", 43: "accept", 42: "connect",
	44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 61: "wait4", 64: "semget",
	65: "semop", 70: "msgrcv", 72: "fcntl", 73: "flock", 74: "fsync", 75: "fdatasync",
	130: "rt_sigsuspend", 128: "rt_sigtimedwait", 202: "futex", 208: "io_getevents",
	220: "semtimedop", 230: "clock_nanosleep", 232: "epoll_wait", 247: "waitid", 257: "openat",
	270: "pselect6", 271: "ppoll", 275: "splice", 281: "epoll_pwait", 288: "accept4",
	318: "getrandom", 426: "io_uring_enter", 441: "epoll_pwait2",
}
