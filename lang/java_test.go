package lang

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestForJava: the agent goes into JAVA_TOOL_OPTIONS after the user's own
// options (the last of duplicates, which a launch keeps), and the files
// are to be removed; --keep-env, a build that failed or a path the
// variable cannot carry leave the environment alone with a one-line note.
func TestForJava(t *testing.T) {
	const lib = "/c/libcctopjvmti.so"
	l := ForJava([]string{"A=1"}, lib, nil, false)
	if !slices.Equal(l.Env, []string{"A=1", "JAVA_TOOL_OPTIONS=-agentpath:" + lib}) || !l.JITDump || !strings.Contains(l.Note, "agent loaded") {
		t.Errorf("fresh: %+v", l)
	}
	env := []string{"JAVA_TOOL_OPTIONS=-Xold", "B=2", "JAVA_TOOL_OPTIONS=-Xmx1g"}
	l = ForJava(env, lib, nil, false)
	if want := []string{"JAVA_TOOL_OPTIONS=-Xold", "B=2", "JAVA_TOOL_OPTIONS=-Xmx1g -agentpath:" + lib}; !slices.Equal(l.Env, want) {
		t.Errorf("appended: %q, want %q", l.Env, want)
	}
	if env[2] != "JAVA_TOOL_OPTIONS=-Xmx1g" {
		t.Errorf("the caller's environment changed: %q", env)
	}
	for name, l := range map[string]Launch{
		"keep":   ForJava(env, lib, nil, true),
		"build":  ForJava(env, "", errors.New("no /jdk/include/jvmti.h\nmore"), false),
		"spaces": ForJava(env, "/my dir/lib.so", nil, false),
	} {
		if l.Env != nil || l.JITDump || l.Note == "" || strings.Contains(l.Note, "\n") {
			t.Errorf("%s: %+v", name, l)
		}
	}
}
