package sampler

// The line of /proc/PID/task/TID/syscall, which the wait probes read:
// portable, so that it can be fuzzed anywhere.

import "strconv"

// syscallState is what /proc/PID/task/TID/syscall says of a thread: that it
// is running, or the system call it is blocked in (nr, -1 when it is off
// the CPU outside of one) and its user stack pointer and pc.
type syscallState struct {
	running bool
	nr      int32
	sp, pc  uint64
}

// parseSyscallLine parses the file's one line: "running", "-1 SP PC" (off
// the CPU, not in a system call), or "NR A1 A2 A3 A4 A5 A6 SP PC", NR in
// decimal, the rest 0x-prefixed hex (proc_pid_syscall). It does not
// allocate: the probes read it twice per look.
func parseSyscallLine(b []byte) (syscallState, bool) {
	for len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	if string(b) == "running" {
		return syscallState{running: true}, true
	}
	var f [9][]byte
	n := 0
	for len(b) > 0 {
		if n == len(f) {
			return syscallState{}, false
		}
		i := 0
		for i < len(b) && b[i] != ' ' {
			i++
		}
		if i == 0 {
			return syscallState{}, false // two spaces, or a leading one
		}
		f[n], n = b[:i], n+1
		b = b[i:]
		if len(b) > 0 {
			b = b[1:]
			if len(b) == 0 {
				return syscallState{}, false // a trailing space
			}
		}
	}
	if n == 0 {
		return syscallState{}, false
	}
	nr, err := strconv.ParseInt(string(f[0]), 10, 32)
	if err != nil || nr < -1 {
		return syscallState{}, false
	}
	if (nr == -1) != (n == 3) || (nr >= 0 && n != 9) {
		return syscallState{}, false
	}
	for _, h := range f[1:n] {
		if _, ok := parseHex(h); !ok {
			return syscallState{}, false
		}
	}
	sp, _ := parseHex(f[n-2])
	pc, _ := parseHex(f[n-1])
	return syscallState{nr: int32(nr), sp: sp, pc: pc}, true
}

// parseHex parses "0x" and up to 16 hex digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) < 3 || len(b) > 18 || b[0] != '0' || b[1] != 'x' {
		return 0, false
	}
	var v uint64
	for _, c := range b[2:] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}
