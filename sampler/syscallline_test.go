package sampler

import (
	"fmt"
	"testing"
)

// formatSyscallLine writes st as proc_pid_syscall does (arguments 0).
func formatSyscallLine(st syscallState) string {
	switch {
	case st.running:
		return "running\n"
	case st.nr < 0:
		return fmt.Sprintf("%d 0x%x 0x%x\n", st.nr, st.sp, st.pc)
	}
	return fmt.Sprintf("%d 0x0 0x0 0x7ffc3250f130 0x7ffc3250f130 0x0 0x64 0x%x 0x%x\n", st.nr, st.sp, st.pc)
}

func TestParseSyscallLine(t *testing.T) {
	for in, want := range map[string]syscallState{
		"running\n": {running: true},
		"running":   {running: true},
		// clock_nanosleep, as read here from a sleeping thread.
		"230 0x0 0x0 0x7ffc3250f130 0x7ffc3250f130 0x0 0x64 0x7ffc3250f108 0x7f3f83953503\n": {nr: 230, sp: 0x7ffc3250f108, pc: 0x7f3f83953503},
		"0 0x3 0x7f0000000000 0x1000 0x0 0x0 0x0 0x7ffe00000000 0x401000":                    {nr: 0, sp: 0x7ffe00000000, pc: 0x401000},
		// Off the CPU outside a system call (stopped in user space).
		"-1 0x7ffd1234 0x401136\n":                        {nr: -1, sp: 0x7ffd1234, pc: 0x401136},
		"-1 0xffffffffffffffff 0xffffffffffffffff\n":      {nr: -1, sp: ^uint64(0), pc: ^uint64(0)},
		"202 0x1 0x2 0x3 0x4 0x5 0x6 0xabcdef0 0x1234567": {nr: 202, sp: 0xabcdef0, pc: 0x1234567},
	} {
		got, ok := parseSyscallLine([]byte(in))
		if !ok || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "\n", "runnin", "running now", "230", "-1 0x1",
		"-1 0x1 0x2 0x3",                  // not in a system call, yet arguments
		"230 0x1 0x2",                     // in one, without them
		"230 0x0 0x0 0x0 0x0 0x0 0x0 0x1", // one short
		"230 0x0 0x0 0x0 0x0 0x0 0x0 0x1 0x2 0x3",
		"-2 0x1 0x2", "x 0x1 0x2", "-1 1 2", "-1 0x 0x2", "-1 0xg 0x2", "-1 0X1 0x2",
		"-1 0x10000000000000000 0x2", // 17 digits
		"-1  0x1 0x2", " -1 0x1 0x2", "-1 0x1 0x2 ", "-1\t0x1\t0x2",
		"99999999999 0x0 0x0 0x0 0x0 0x0 0x0 0x1 0x2",
	} {
		if st, ok := parseSyscallLine([]byte(in)); ok {
			t.Errorf("%q: parsed as %+v", in, st)
		}
	}
	line := []byte("230 0x0 0x0 0x7ffc3250f130 0x7ffc3250f130 0x0 0x64 0x7ffc3250f108 0x7f3f83953503\n")
	if n := testing.AllocsPerRun(100, func() { parseSyscallLine(line) }); n != 0 {
		t.Errorf("%v allocations a parse", n)
	}
}

// FuzzSyscallLine: any line parses or not without panicking, and a parsed
// one written again as the kernel writes it parses to the same state.
func FuzzSyscallLine(f *testing.F) {
	f.Add([]byte("running\n"))
	f.Add([]byte("-1 0x7ffd1234 0x401136\n"))
	f.Add([]byte("230 0x0 0x0 0x7ffc3250f130 0x7ffc3250f130 0x0 0x64 0x7ffc3250f108 0x7f3f83953503\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		st, ok := parseSyscallLine(line)
		if !ok {
			return
		}
		if st.nr < -1 || (st.running && (st.nr != 0 || st.sp != 0 || st.pc != 0)) {
			t.Fatalf("%q: %+v", line, st)
		}
		again, ok := parseSyscallLine([]byte(formatSyscallLine(st)))
		if !ok || again != st {
			t.Fatalf("%q: %+v, written again and parsed %+v %v", line, st, again, ok)
		}
	})
}
