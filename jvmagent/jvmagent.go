// Package jvmagent owns cctop's JVMTI agent: a small shared library, in C
// (agent.c, embedded), that a JVM loads with -agentpath and that writes
// the JVM's compiled methods, their source lines and the inlining its JIT
// did to /tmp/jit-PID.dump, as perf's jitdump plus cctop's own inline
// record (jit/format.go, JIT_CODE_INLINE). No JVMTI perf agent ships with
// Debian's JDKs, and the JVM's perf map names only whole compiled
// methods: the agent is how a hot method inlined into its caller still
// shows as itself.
//
// The library is built on demand with the system's C compiler against the
// headers of the JDK that runs the program (Build), once per source and
// JDK, in the user's cache directory. Nothing here runs or loads it.
package jvmagent

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed csrc/agent.c
var source []byte

// LibName is the base name of the built agent.
const LibName = "libcctopjvmti.so"

// buildTimeout bounds the C compiler's run.
const buildTimeout = 60 * time.Second

// JavaHome is the JDK (or JRE) that the java executable belongs to: the
// executable with its symbolic links resolved (/usr/bin/java →
// /usr/lib/jvm/java-17-openjdk-amd64/bin/java), its directory's parent.
func JavaHome(java string) (string, error) {
	p, err := filepath.EvalSymlinks(java)
	if err != nil {
		return "", err
	}
	bin := filepath.Dir(p)
	if filepath.Base(bin) != "bin" {
		return "", fmt.Errorf("%s is not in a JDK's bin directory", p)
	}
	return filepath.Dir(bin), nil
}

var (
	mu    sync.Mutex
	built = map[string]result{} // by JAVA_HOME: one build per run
)

type result struct {
	path string
	err  error
}

// Build returns the path of the agent built for the JVM of the java
// executable, building it if the cache has none: cc (or gcc) with the
// JDK's include and include/linux, whose jvmti.h must exist. The error
// says in one line why there is no agent.
func Build(java string) (string, error) {
	home, err := JavaHome(java)
	if err != nil {
		return "", fmt.Errorf("no JDK for %s: %v", java, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if r, ok := built[home]; ok {
		return r.path, r.err
	}
	p, err := build(home)
	built[home] = result{p, err}
	return p, err
}

func build(home string) (string, error) {
	inc := filepath.Join(home, "include")
	if _, err := os.Stat(filepath.Join(inc, "jvmti.h")); err != nil {
		return "", fmt.Errorf("no %s (a JRE without the JDK's headers; install the JDK)", filepath.Join(inc, "jvmti.h"))
	}
	cc, err := compiler()
	if err != nil {
		return "", err
	}
	// The key: the source, the JDK and the compiler.
	h := sha256.New()
	h.Write(source)
	fmt.Fprintf(h, "\x00%s\x00%s", home, cc)
	key := hex.EncodeToString(h.Sum(nil))[:16]
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the agent: %v", err)
	}
	dir := filepath.Join(cache, "cctop", "jvmti-"+key)
	lib := filepath.Join(dir, LibName)
	if fi, err := os.Stat(lib); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return lib, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot cache the agent: %v", err)
	}
	src := filepath.Join(dir, "agent.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("cannot cache the agent: %v", err)
	}
	tmp, err := os.CreateTemp(dir, LibName+".*")
	if err != nil {
		return "", fmt.Errorf("cannot cache the agent: %v", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := []string{"-shared", "-fPIC", "-O2", "-Wall", "-Werror",
		"-I" + inc, "-I" + filepath.Join(inc, "linux"), "-o", tmp.Name(), src, "-lpthread"}
	cmd := exec.Command(cc, args...)
	done := make(chan struct{})
	var out []byte
	var cerr error
	go func() { out, cerr = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(buildTimeout):
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		<-done
		return "", fmt.Errorf("%s took over %v to build the agent", cc, buildTimeout)
	}
	if cerr != nil {
		return "", fmt.Errorf("%s cannot build the agent: %s", cc, firstLine(out, cerr))
	}
	if err := os.Rename(tmp.Name(), lib); err != nil {
		return "", fmt.Errorf("cannot cache the agent: %v", err)
	}
	return lib, nil
}

// compiler is the system's C compiler: $CC, cc or gcc.
func compiler() (string, error) {
	names := []string{"cc", "gcc"}
	if cc := os.Getenv("CC"); cc != "" && !strings.ContainsAny(cc, " \t") {
		names = append([]string{cc}, names...)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no C compiler (cc or gcc) to build the agent")
}

// firstLine is the compiler's first line of complaint, or its error.
func firstLine(out []byte, err error) string {
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return err.Error()
}

// DumpPath is the jitdump the agent in the process pid (as its own PID
// namespace numbers it) writes.
func DumpPath(pid int) string { return fmt.Sprintf("/tmp/jit-%d.dump", pid) }
