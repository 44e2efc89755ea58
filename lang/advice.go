package lang

import (
	"path/filepath"
	"strings"
)

// Runtime names the kind of runtime a program is, from its executable's
// base name: "node", "java", "python" or "" for one cctop knows nothing of.
func Runtime(exe string) string {
	base := filepath.Base(exe)
	switch {
	case base == "node" || base == "nodejs" || base == "deno" || base == "bun":
		return "node"
	case base == "java" || strings.HasPrefix(base, "java") && strings.Contains(exe, "jvm"):
		return "java"
	case strings.HasPrefix(base, "python") || strings.HasPrefix(base, "pypy"):
		return "python"
	}
	return ""
}

// JITAdvice is how a runtime is made to name its JIT code for a profiler,
// and to keep the frame pointers its stacks need, in a clause for the
// summary; "" for a runtime cctop knows nothing of.
func JITAdvice(runtime string) string {
	switch runtime {
	case "node":
		return "run node with --perf-basic-prof (a perf map) or --perf-prof (a jitdump)"
	case "java":
		return "run the JVM with -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, " +
			"or write its map while it runs: jcmd PID Compiler.perfmap"
	case "python":
		return "run python 3.12+ with -X perf (cctop turns it on for the programs it launches)"
	}
	return "a JIT names its code in /tmp/perf-PID.map or a jitdump file when asked to (see its documentation)"
}
