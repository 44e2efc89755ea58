package lang

import (
	"strings"
)

// envJavaTool is the variable every JVM reads options from, before its
// command line's, and announces on stderr ("Picked up JAVA_TOOL_OPTIONS").
const envJavaTool = "JAVA_TOOL_OPTIONS"

// ForJava decides the environment of a JVM cctop launches with env:
// cctop's JVMTI agent (package jvmagent), built at agent or not for the
// reason buildErr, is loaded through JAVA_TOOL_OPTIONS, after the user's
// own options there. keep: the user asked for the environment to be left
// alone (--keep-env).
func ForJava(env []string, agent string, buildErr error, keep bool) Launch {
	switch {
	case keep:
		return Launch{Note: "java: cctop's JVMTI agent not loaded (--keep-env); compiled methods are named only by the JVM's perf map, without their inlining"}
	case buildErr != nil:
		return Launch{Note: "java: no JVMTI agent: " + firstLine(buildErr.Error())}
	case strings.ContainsAny(agent, " \t\n\"'"):
		return Launch{Note: "java: no JVMTI agent: its path " + agent + " has spaces or quotes, which JAVA_TOOL_OPTIONS cannot carry"}
	}
	agentOpt := "-agentpath:" + agent
	out := append([]string(nil), env...)
	// The last of duplicates is the one a launch keeps (os/exec).
	at := -1
	for i, e := range out {
		if strings.HasPrefix(e, envJavaTool+"=") {
			at = i
		}
	}
	v := ""
	if at >= 0 {
		v = strings.TrimSpace(strings.TrimPrefix(out[at], envJavaTool+"="))
	}
	// HotSpot's compiled code keeps no frame pointer unless told: sampled
	// through it, 97% of a launched JVM's stacks stopped at the first
	// compiled frame (bench/jit.sh's Hot without the flag). The user's
	// own choice, either way, stands.
	opt := agentOpt
	fp := !strings.Contains(v, "PreserveFramePointer")
	if fp {
		opt = "-XX:+PreserveFramePointer " + agentOpt
	}
	switch {
	case at < 0:
		out = append(out, envJavaTool+"="+opt)
	case v != "":
		out[at] = envJavaTool + "=" + v + " " + opt
	default:
		out[at] = envJavaTool + "=" + opt
	}
	note := "java: cctop's JVMTI agent loaded; compiled methods and their inlining named from its jitdump"
	if fp {
		note += ", and -XX:+PreserveFramePointer so that their stacks unwind"
	}
	return Launch{
		Env:     out,
		JITDump: true,
		Note:    note + " (--keep-env leaves the environment alone)",
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
