package lang

import (
	"fmt"
	"strings"
)

// The environment variables by which CPython 3.12+ turns its perf
// trampolines on: every Python function then runs through a small copy of
// a trampoline, named "py::qualname:file" in /tmp/perf-PID.map (3.12+) or
// in a jitdump file with unwinding information (3.13+'s perf_jit).
//
// cctop sets the perf map's on 3.13 too. CPython writes its jitdump
// through a 2 MiB stdio buffer, so a live profiler sees its names only
// when the buffer fills or the program exits: 3.13 with perf_jit gave 0.6%
// of stacks complete and its Python functions unnamed, with the perf map
// 99.8% and every function named. The trampolines' own code unwinds
// without the jitdump's CFI (symbol/prologue.go).
const (
	envPerf    = "PYTHONPERFSUPPORT"
	envPerfJIT = "PYTHON_PERF_JIT_SUPPORT"
)

// Launch is what cctop does to the environment of a program it launches
// so that its runtime tells a profiler what it runs.
type Launch struct {
	// Env is the environment to launch with; nil leaves the program
	// cctop's own.
	Env []string
	// Python: the program is CPython (Version zero when unknown).
	Python  bool
	Version Version
	// PerfMap: cctop turned the trampolines on, and the program's
	// processes will write /tmp/perf-PID.map files that cctop should
	// remove when it is done with them.
	PerfMap bool
	// JITDump: cctop loaded its JVMTI agent into the program's JVMs
	// (ForJava), which write /tmp/jit-PID.dump files that cctop should
	// remove when it is done with them.
	JITDump bool
	// Note says what was done, or why not, in a line for the header and
	// the summary; "" when there is nothing to say (not a runtime cctop
	// knows).
	Note string
}

// ForLaunch decides the environment of argv (its program resolved to
// path), launched with env (os.Environ()). keep: the user asked for the
// environment to be left alone (--keep-env).
func ForLaunch(path string, argv, env []string, keep bool) Launch {
	v, ok := PythonOf(path)
	if !ok {
		return Launch{}
	}
	l := Launch{Python: true, Version: v}
	name := "python"
	if v.Major > 0 {
		name += " " + v.String()
	}
	if v.Major > 0 && !v.AtLeast(3, 12) {
		return l // no trampolines before 3.12
	}
	if asked := trampolinesAsked(argv, env); asked != "" {
		l.Note = name + ": perf trampolines on; " + asked
		return l
	}
	if keep {
		l.Note = name + ": perf trampolines off (--keep-env); run it with -X perf to name Python functions"
		return l
	}
	l.Env = append(append([]string(nil), env...), envPerf+"=1")
	l.PerfMap = true
	l.Note = fmt.Sprintf("%s: perf trampolines on; cctop set %s=1 (--keep-env leaves the environment alone)", name, envPerf)
	if v.Major == 0 {
		l.Note = "python: perf trampolines on if 3.12+; cctop set " + envPerf + "=1 (--keep-env leaves the environment alone)"
	}
	return l
}

// trampolinesAsked says how the command already asks for trampolines, ""
// if it does not: -X perf or -X perf_jit among the interpreter's options,
// or either variable in the environment (even set to 0: the user chose).
func trampolinesAsked(argv, env []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" || a == "-c" || a == "-m" || !strings.HasPrefix(a, "-") {
			break // the program's own arguments begin
		}
		x := ""
		switch {
		case a == "-X" && i+1 < len(argv):
			x = argv[i+1]
			i++
		case strings.HasPrefix(a, "-X"):
			x = a[2:]
		}
		if x == "perf" || x == "perf_jit" {
			return "-X " + x
		}
	}
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if k == envPerf || k == envPerfJIT {
			return e + " in the environment"
		}
	}
	return ""
}
