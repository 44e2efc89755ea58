package engine

import (
	"os"
	"strconv"
	"syscall"

	"github.com/cctop/cctop/jvmagent"
	"github.com/cctop/cctop/lang"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// planRuntime lets the target's runtime tell what it runs: a launched
// CPython 3.12+ gets its perf trampolines (PYTHONPERFSUPPORT=1) unless the
// user set them either way or asked for the environment as it is; an
// attached one is looked at, and the header says how to get them.
func planRuntime(cfg *sampler.Config, plan *Plan, keepEnv bool) {
	switch {
	case len(cfg.Argv) > 0:
		path, err := sampler.LookPath(cfg.Argv[0])
		if err != nil {
			return // the launch says what is wrong
		}
		env := cfg.Env
		if env == nil {
			env = os.Environ()
		}
		plan.launch = lang.ForLaunch(path, cfg.Argv, env, keepEnv)
		if lang.Runtime(path) == "java" {
			// A JVM: cctop's JVMTI agent names its compiled methods and
			// their inlining (jvmagent).
			var agent string
			var err error
			if !keepEnv {
				agent, err = jvmagent.Build(path)
			}
			plan.launch = lang.ForJava(env, agent, err, keepEnv)
		}
		if plan.launch.Env != nil {
			cfg.Env = plan.launch.Env
		}
		plan.runtime = plan.launch.Note
	case cfg.PID > 0 && plan.noPython:
		// Without Python frames read from the interpreter, its perf
		// trampolines are what names Python functions.
		plan.runtime = lang.ForAttach(cfg.PID)
	}
}

// removePerfMaps removes the perf maps of the processes whose runtime
// wrote one because cctop asked it to (PYTHONPERFSUPPORT=1, which the user
// did not set), once their names are read: a person who ran cctop did not
// ask for files in /tmp, and each run of a Python program would leave one
// per process. A map the user asked for stays.
func removePerfMaps(plan *Plan, res *symbol.Resolver) {
	if plan != nil && plan.launch.JITDump {
		removeJITDumps(res)
	}
	if plan == nil || !plan.launch.PerfMap {
		return
	}
	for _, pid := range res.PerfMapPIDs() {
		p := "/tmp/perf-" + strconv.Itoa(pid) + ".map"
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && ownedByUs(fi) {
			os.Remove(p)
		}
	}
}

// removeJITDumps removes the jitdumps that cctop's JVMTI agent wrote in
// the JVMs cctop launched it into, once their names are read: as for the
// perf maps, files in /tmp that the user did not ask for. Only the files
// of processes that cctop read a jitdump of, by the path the process
// named, if it is ours and a regular file.
func removeJITDumps(res *symbol.Resolver) {
	for _, p := range res.JITDumpPaths() {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && ownedByUs(fi) {
			os.Remove(p)
		}
	}
}

// ownedByUs reports whether the file belongs to the user cctop runs as,
// who launched the process that wrote it (root may remove anyone's, and
// must not remove another user's map that happens to have the pid).
func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
