package engine

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestContainerID: the container runtimes' cgroup paths (cgroup v2's one
// line and v1's many) give their 64-digit IDs; host processes none.
func TestContainerID(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct{ name, cgroup, want string }{
		{"docker v2", "0::/system.slice/docker-" + id + ".scope\n", id},
		{"containerd cri v2", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-" + id + ".scope\n", id},
		{"cri-o", "0::/kubepods.slice/kubepods-pod5678.slice/crio-" + id + ".scope\n", id},
		{"docker v1", "12:memory:/docker/" + id + "\n11:cpu,cpuacct:/docker/" + id + "\n", id},
		{"kubepods v1", "4:pids:/kubepods/besteffort/pod1234/" + id + "\n", id},
		{"podman", "0::/machine.slice/libpod-" + id + ".scope/container\n", id},
		{"host v2", "0::/user.slice/user-0.slice/session-1.scope\n", ""},
		{"host v1", "12:memory:/\n1:name=systemd:/init.scope\n", ""},
		{"too short", "0::/system.slice/docker-0123456789abcdef.scope\n", ""},
		{"65 digits", "0::/x/" + id + "0\n", ""},
	} {
		if got := containerID(bufio.NewScanner(strings.NewReader(c.cgroup))); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestReadProcess: this process as a resource sees it: its executable's
// path and name, and no container ID where its cgroup names none.
func TestReadProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := readProcess(uint32(os.Getpid()))
	if p.Exe != exe || p.Name == "" || !strings.HasSuffix(exe, "/"+p.Name) {
		t.Errorf("readProcess: %+v, executable %s", p, exe)
	}
	cg, _ := os.ReadFile("/proc/self/cgroup")
	if want := containerID(bufio.NewScanner(strings.NewReader(string(cg)))); p.ContainerID != want {
		t.Errorf("container ID %q, the cgroup file gives %q", p.ContainerID, want)
	}
	if gone := readProcess(1 << 30); gone.Exe != "" || gone.Name != "" {
		t.Errorf("a process that does not exist: %+v", gone)
	}
}
