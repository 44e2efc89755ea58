package main

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
)

// hotJava spends a few seconds of CPU in one method, which the JVM
// compiles into its code cache, anonymous memory. With
// -XX:+DumpPerfMapAtExit it names that code in /tmp/perf-PID.map only as it
// exits: after every sample. The work is fixed, not the time, so that the
// JVM's own start (class loading, compiling) weighs the same on a busy
// machine, where a loop for a fixed time would get less of the CPU.
const hotJava = `public class Hot {
    static long quasarKernel(long n) {
        long s = 0;
        for (long i = 0; i < n; i++) { s += (i * 2654435761L) ^ (s >>> 7); }
        return s;
    }
    public static void main(String[] a) {
        System.out.println("pid " + ProcessHandle.current().pid());
        long t = 0;
        for (int k = 0; k < 5000; k++) t += quasarKernel(1000000);
        System.out.println(t != 0 ? "done" : "zero");
    }
}
`

// javaArgs run the class with frame pointers in compiled code and the perf
// map written at exit (Java 17: a diagnostic option).
var javaArgs = []string{"-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit"}

// removeJavaMap removes the perf map the JVM that printed stdout left.
func removeJavaMap(t *testing.T, stdout string) int {
	var pid int
	if _, err := fmt.Sscanf(stdout, "pid %d", &pid); err != nil || pid <= 0 {
		t.Errorf("no pid in the program's output %q", stdout)
		return 0
	}
	t.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid)) })
	return pid
}

// TestRecordJavaPerfMapAtExit is the acceptance check for names that
// arrive late: recording a JVM that writes its perf map only as it exits
// names its compiled code all the same. At least 95% of self time is in
// named Java methods, the hot one first; no JIT placeholder reaches the
// profile; and Linux perf, reading the same map, puts the same method first.
func TestRecordJavaPerfMapAtExit(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	java, dir := compileJava(t, "Hot", hotJava)
	args := append(slices.Clone(javaArgs), "-cp", dir, "Hot")
	// --keep-env: the names come from the map written at exit, not from
	// cctop's JVMTI agent (java_inline_test.go).
	stdout, stderr, code := testutil.Run(t, cctopBin, dir, append([]string{"record", "--keep-env", "-d", "60s", "-o", "j.pb.gz", "--", java}, args...)...)
	pid := removeJavaMap(t, stdout)
	if code != 0 || !strings.Contains(stdout, "done") {
		t.Fatalf("record exit %d, java said %q:\n%s", code, stdout, stderr)
	}
	if want := fmt.Sprintf("named from /tmp/perf-%d.map after they were sampled (", pid); !strings.Contains(stderr, "cctop: JIT names: ") ||
		!strings.Contains(stderr, want) || !strings.Contains(stderr, "written at exit") {
		t.Errorf("the summary does not say the JIT code was named from the map written at exit (%q):\n%s", want, stderr)
	}

	// Self time by the leaf's function; and the share of Java methods by
	// the first frame in user space, where the kernel's frames above it
	// are its handling of an interrupt or preemption while Java ran (more
	// of them on a busy machine).
	p := testutil.ReadProfile(t, filepath.Join(dir, "j.pb.gz"))
	col := testutil.ValueIndex(t, p, "cpu")
	self := map[string]int64{}
	var total, javaMethods, javaLeaf int64
	for _, s := range p.Sample {
		v := s.Value[col]
		total += v
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			continue
		}
		self[s.Location[0].Line[0].Function.Name] += v
		for i, loc := range s.Location {
			if loc.Mapping != nil && loc.Mapping.File == "[kernel.kallsyms]" || len(loc.Line) == 0 {
				continue
			}
			// A method of the perf map: "long Hot.quasarKernel(long)".
			name := loc.Line[0].Function.Name
			if loc.Mapping != nil && loc.Mapping.File == "[jit]" && strings.Contains(name, ".") && strings.Contains(name, "(") {
				javaMethods += v
				if i == 0 {
					javaLeaf += v
				}
			}
			break
		}
	}
	type fn struct {
		name string
		self int64
	}
	var flat []fn
	for name, v := range self {
		flat = append(flat, fn{name, v})
	}
	slices.SortFunc(flat, func(a, b fn) int { return cmp.Compare(b.self, a.self) })
	share := func(v int64) float64 { return 100 * float64(v) / float64(max(total, 1)) }
	var top []string
	for i := range min(5, len(flat)) {
		top = append(top, fmt.Sprintf("%.2f%% %s", share(flat[i].self), flat[i].name))
	}
	t.Logf("cctop: %.2f%% of self time in named Java methods (%.2f%% with no kernel frame above); top: %s",
		share(javaMethods), share(javaLeaf), strings.Join(top, "; "))
	if share(javaMethods) < 95 {
		t.Errorf("%.2f%% of self time in named Java methods, want >= 95%%", share(javaMethods))
	}
	if len(flat) == 0 || !strings.Contains(flat[0].name, "Hot.quasarKernel") {
		t.Errorf("the hottest function is not Hot.quasarKernel: %v", top)
	}
	anon := 0
	for _, f := range p.Function {
		if f.Name == "[anon]" {
			anon++
		}
		if strings.HasPrefix(f.Filename, "[JIT pc ") {
			t.Errorf("a JIT placeholder in the profile: %+v", f)
			break
		}
	}
	if anon > 1 {
		t.Errorf("%d functions named [anon] in the profile, want at most the mapping's one", anon)
	}

	// perf on the same program: perf report reads the same map.
	if _, err := exec.LookPath("perf"); err != nil {
		t.Log("perf not installed: no comparison")
		return
	}
	data := filepath.Join(dir, "perf.data")
	cmd := exec.Command("perf", append([]string{"record", "-q", "-g", "-o", data, "--", java}, args...)...)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		removeJavaMap(t, out.String())
		t.Logf("perf record does not work here (%v): no comparison", err)
		return
	}
	removeJavaMap(t, out.String())
	rep, err := exec.Command("perf", "report", "-i", data, "--no-children", "--stdio", "--sort", "sym", "-g", "none", "-q").Output()
	if err != nil {
		t.Fatalf("perf report: %v", err)
	}
	var perfTop string
	var perfShare float64
	for _, l := range strings.Split(string(rep), "\n") {
		// "    98.67%  [.] long Hot.quasarKernel(long)"
		f := strings.Fields(l)
		if len(f) < 3 || !strings.HasSuffix(f[0], "%") {
			continue
		}
		perfShare, _ = strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
		_, perfTop, _ = strings.Cut(l, "] ")
		break
	}
	t.Logf("perf: %.2f%% of self time in %s", perfShare, perfTop)
	if !strings.Contains(perfTop, "Hot.quasarKernel") {
		t.Errorf("perf's hottest symbol is %q, not Hot.quasarKernel: the comparison does not hold", perfTop)
	}
	if len(flat) > 0 && strings.TrimSpace(perfTop) != flat[0].name {
		t.Errorf("hottest function: cctop %q, perf %q", flat[0].name, perfTop)
	}
}

// compileJava compiles the class name from src into a temporary directory
// and returns the java executable and that directory; it skips the test
// where there is no JDK.
func compileJava(t *testing.T, name, src string) (java, dir string) {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not installed")
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("javac not installed")
	}
	dir = t.TempDir()
	file := filepath.Join(dir, name+".java")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(javac, "-d", dir, file).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	return java, dir
}
