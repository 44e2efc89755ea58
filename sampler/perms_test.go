//go:build linux

package sampler

import (
	"strings"
	"testing"
)

// TestPerfRefusal: which fix a refused perf_event_open names, for levels
// this machine's kernel may not enforce (upstream treats 3 and 4 as 2).
func TestPerfRefusal(t *testing.T) {
	for _, c := range []struct {
		level   int
		seccomp bool
		who     string
		fix     string
	}{
		{3, false, "kernel.perf_event_paranoid=3", "`sysctl kernel.perf_event_paranoid=2`"},
		{4, true, "kernel.perf_event_paranoid=4", "`sysctl kernel.perf_event_paranoid=2`"},
		{2, true, "seccomp", "allow perf_event_open in the seccomp profile"},
		{2, false, "security module", "grant CAP_PERFMON (setcap cap_perfmon+ep "},
	} {
		who, fix := perfRefusal(c.level, c.seccomp)
		if !strings.Contains(who, c.who) || !strings.Contains(fix, c.fix) {
			t.Errorf("level %d seccomp %v: %q / %q, want %q / %q", c.level, c.seccomp, who, fix, c.who, c.fix)
		}
	}
}

// TestAttachDeniedSelf: a refusal on one's own process is not blamed on
// ownership; a missing process is no such process.
func TestAttachDeniedSelf(t *testing.T) {
	if othersProcess(0) {
		t.Errorf("pid 0 (none) counted as another user's")
	}
	if err := AttachDenied(1<<30, nil); !strings.Contains(err.Error(), "no such process") {
		t.Errorf("missing process: %v", err)
	}
}
