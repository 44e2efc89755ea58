package lang

import (
	"os"
	"strconv"

	"github.com/cctop/cctop/symbol"
)

// ForAttach says what a running process's runtime offers a profiler, for
// the header and summary, "" when there is nothing to say: a CPython 3.12+
// that writes no perf map runs without its trampolines, and Python
// functions show only as the interpreter's frames until it is restarted
// with them or turns them on itself.
func ForAttach(pid int) string {
	p := "/proc/" + strconv.Itoa(pid)
	v, ok := PythonOf(p + "/exe")
	if !ok {
		return ""
	}
	name := "python"
	if v.Major > 0 {
		name += " " + v.String()
	}
	if v.Major > 0 && !v.AtLeast(3, 12) {
		return ""
	}
	if _, err := os.Stat(symbol.PerfMapPath(pid)); err == nil {
		return name + ": perf trampolines on (its perf map names Python functions)"
	}
	return name + " without perf trampolines: Python functions show as the interpreter's frames; " +
		"restart it with -X perf (or PYTHONPERFSUPPORT=1), or have it call sys.activate_stack_trampoline(\"perf\")"
}
