package jvmagent

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/jit"
)

// TestJavaHome follows the links of a java executable to its JDK.
func TestJavaHome(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "jdk", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "java"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "java")
	if err := os.Symlink(filepath.Join(bin, "java"), link); err != nil {
		t.Fatal(err)
	}
	if home, err := JavaHome(link); err != nil || home != filepath.Join(dir, "jdk") {
		t.Errorf("JavaHome = %q, %v", home, err)
	}
	if _, err := JavaHome(filepath.Join(dir, "jdk")); err == nil {
		t.Errorf("a JDK with no bin directory")
	}
	// A JDK without headers: one line saying so.
	_, err := Build(link)
	if err == nil || !strings.Contains(err.Error(), "jvmti.h") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Build without headers: %v", err)
	}
}

// TestAgent builds the agent for the system's JDK (with -Wall -Werror)
// and runs a JVM with it: the jitdump it writes decodes without error,
// names compiled methods as HotSpot's perf map does, and gives inline
// chains, innermost first, with the compiled method last.
func TestAgent(t *testing.T) {
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not installed")
	}
	lib, err := Build(java)
	if err != nil {
		t.Skipf("no agent: %v", err)
	}
	if lib2, err := Build(java); err != nil || lib2 != lib {
		t.Errorf("second Build = %q, %v; want the same %q", lib2, err, lib)
	}
	// A JVM that only starts, compiling every method it runs (-Xcomp):
	// many compiled methods, some with others inlined.
	cmd := exec.Command(java, "-agentpath:"+lib, "-Xcomp", "-XX:TieredStopAtLevel=1", "-version")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("java with the agent: %v\n%s", err, stderr.String())
	}
	path := DumpPath(cmd.Process.Pid)
	defer os.Remove(path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no jitdump: %v (%s)", err, stderr.String())
	}
	d := jit.NewDecoder()
	if err := d.Feed(b); err != nil || d.Waiting() != 0 {
		t.Fatalf("decoding %s: %v, %d bytes left", path, err, d.Waiting())
	}
	loads, unknown := d.Records()
	t.Logf("%d bytes, %d loads, %d debug infos, %d inline records in %v", len(b), loads[0], loads[2], d.Inlines(), time.Since(start))
	if loads[0] < 100 || d.Inlines() == 0 || unknown != 0 {
		t.Errorf("%d loads, %d inline records, %d unknown", loads[0], d.Inlines(), unknown)
	}
	if h := d.Header(); h.PID != uint32(cmd.Process.Pid) || h.ArchTimestamp() {
		t.Errorf("header %+v, pid %d", h, cmd.Process.Pid)
	}
	if !bytes.Contains(b, []byte("java.lang.String.hashCode()\x00")) && !bytes.Contains(b, []byte(" java.lang.String.")) {
		t.Errorf("no method named as HotSpot's perf map names them (\"int java.lang.String.hashCode()\")")
	}
	if !bytes.Contains(b, []byte("Interpreter\x00")) {
		t.Errorf("no Interpreter stub among the dynamic code")
	}
}
