package lang

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestForJava: the agent and frame pointers for compiled code go into
// JAVA_TOOL_OPTIONS after the user's own
// options (the last of duplicates, which a launch keeps), unless the user
// chose about frame pointers, and the files
// are to be removed; --keep-env, a build that failed or a path the
// variable cannot carry leave the environment alone with a one-line note.
func TestForJava(t *testing.T) {
	const lib = "/c/libcctopjvmti.so"
	l := ForJava([]string{"A=1"}, lib, nil, false)
	if !slices.Equal(l.Env, []string{"A=1", "JAVA_TOOL_OPTIONS=-XX:+PreserveFramePointer -agentpath:" + lib}) || !l.JITDump || !strings.Contains(l.Note, "agent loaded") {
		t.Errorf("fresh: %+v", l)
	}
	env := []string{"JAVA_TOOL_OPTIONS=-Xold", "B=2", "JAVA_TOOL_OPTIONS=-Xmx1g"}
	l = ForJava(env, lib, nil, false)
	if want := []string{"JAVA_TOOL_OPTIONS=-Xold", "B=2", "JAVA_TOOL_OPTIONS=-Xmx1g -XX:+PreserveFramePointer -agentpath:" + lib}; !slices.Equal(l.Env, want) {
		t.Errorf("appended: %q, want %q", l.Env, want)
	}
	// The user's own choice of frame pointers stands.
	l = ForJava([]string{"JAVA_TOOL_OPTIONS=-XX:-PreserveFramePointer"}, lib, nil, false)
	if want := []string{"JAVA_TOOL_OPTIONS=-XX:-PreserveFramePointer -agentpath:" + lib}; !slices.Equal(l.Env, want) || strings.Contains(l.Note, "PreserveFramePointer") {
		t.Errorf("the user's -XX:-PreserveFramePointer: %q, note %q", l.Env, l.Note)
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
