package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/jvmagent"
)

// inlJava has a small hot method, mix, that C2 inlines into its caller's
// loop (PrintInlining says "Inl::mix (22 bytes) inline (hot)"): the JVM's
// perf map names only run, the compiled method; cctop's JVMTI agent tells
// that most of run's code is mix's.
const inlJava = `public class Inl {
    static long mix(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 29;
        return x;
    }
    static long run(long n) {
        long s = 0;
        for (long i = 0; i < n; i++) { s += mix(s + i); }
        return s;
    }
    public static void main(String[] a) {
        System.out.println("pid " + ProcessHandle.current().pid());
        long t = 0;
        for (int k = 0; k < 1500; k++) t += run(1000000);
        System.out.println(t != 0 ? "done" : "zero");
    }
}
`

// TestRecordJavaInlined is the acceptance check for inlined Java frames
// from the JVM itself: recording a launched JVM, cctop loads its JVMTI
// agent through JAVA_TOOL_OPTIONS, and a good share of the samples have
// mix as an inlined frame under run (a pprof Location of several Lines,
// mix first); the agent's jitdump is removed at the end. With --keep-env
// no agent is loaded, and no sample has mix inlined.
func TestRecordJavaInlined(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	java, dir := compileJava(t, "Inl", inlJava)
	if _, err := jvmagent.Build(java); err != nil {
		t.Skipf("no JVMTI agent: %v", err)
	}
	record := func(out string, extra ...string) (pid int, stderr string) {
		args := append([]string{"record", "-d", "60s", "-o", out}, extra...)
		args = append(args, "--", java, "-XX:+PreserveFramePointer", "-cp", dir, "Inl")
		stdout, stderr, code := testutil.Run(t, cctopBin, dir, args...)
		if code != 0 || !strings.Contains(stdout, "done") {
			t.Fatalf("record exit %d, java said %q:\n%s", code, stdout, stderr)
		}
		if _, err := fmt.Sscanf(stdout, "pid %d", &pid); err != nil {
			t.Fatalf("no pid in %q", stdout)
		}
		return pid, stderr
	}
	// share is the percentage of cpu samples whose stack has a location
	// with mix inlined into run, and of those whose leaf is one.
	share := func(path string) (inlined, leaf float64) {
		p := testutil.ReadProfile(t, filepath.Join(dir, path))
		col := testutil.ValueIndex(t, p, "cpu")
		var total, in, lf int64
		for _, s := range p.Sample {
			v := s.Value[col]
			total += v
			for i, loc := range s.Location {
				if len(loc.Line) >= 2 && strings.Contains(loc.Line[0].Function.Name, "Inl.mix(long)") &&
					strings.Contains(loc.Line[len(loc.Line)-1].Function.Name, "Inl.run(long)") {
					in += v
					if i == 0 {
						lf += v
					}
					break
				}
			}
		}
		return 100 * float64(in) / float64(max(total, 1)), 100 * float64(lf) / float64(max(total, 1))
	}

	pid, stderr := record("a.pb.gz")
	if !strings.Contains(stderr, "java: cctop's JVMTI agent loaded") {
		t.Errorf("the summary does not say the agent was loaded:\n%s", stderr)
	}
	if _, err := os.Lstat(jvmagent.DumpPath(pid)); err == nil {
		os.Remove(jvmagent.DumpPath(pid))
		t.Errorf("%s is left behind", jvmagent.DumpPath(pid))
	}
	in, leaf := share("a.pb.gz")
	t.Logf("with the agent: %.1f%% of samples have mix inlined into run (%.1f%% as the leaf)", in, leaf)
	if in < 20 {
		t.Errorf("%.1f%% of samples have mix inlined into run, want >= 20%%", in)
	}

	pid, stderr = record("k.pb.gz", "--keep-env")
	os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid))
	if strings.Contains(stderr, jvmagent.LibName) {
		t.Errorf("--keep-env: the agent was loaded:\n%s", stderr)
	}
	if in, _ := share("k.pb.gz"); in != 0 {
		t.Errorf("--keep-env: %.1f%% of samples have mix inlined", in)
	}
}
