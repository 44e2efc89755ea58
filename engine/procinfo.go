package engine

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
)

// Process is what a fleet backend is told of the process a profile came
// from (its OTLP resource).
type Process struct {
	PID  uint32
	Name string // the executable's base name, else the command name
	Exe  string // the executable's path; "" when it could not be read
	// ContainerID is the container's ID from the process's cgroup path;
	// "" outside containers.
	ContainerID string
}

// readProcess reads what /proc says of pid; a process gone already has
// its PID and nothing else.
func readProcess(pid uint32) Process {
	p := Process{PID: pid}
	dir := fmt.Sprintf("/proc/%d", pid)
	if exe, err := os.Readlink(dir + "/exe"); err == nil {
		p.Exe = strings.TrimSuffix(exe, " (deleted)")
		p.Name = filepath.Base(p.Exe)
	}
	if p.Name == "" {
		if comm, err := os.ReadFile(dir + "/comm"); err == nil {
			p.Name = strings.TrimSpace(string(comm))
		}
	}
	if f, err := os.Open(dir + "/cgroup"); err == nil {
		p.ContainerID = containerID(bufio.NewScanner(f))
		f.Close()
	}
	return p
}

// containerIDPattern is a container runtime's ID in a cgroup path: 64 hex
// digits, as Docker, containerd, CRI-O and Podman name their scopes
// (docker-<id>.scope, cri-containerd-<id>.scope, crio-<id>.scope,
// /docker/<id>, /kubepods/.../<id>).
var containerIDPattern = regexp.MustCompile(`(?:^|[/-])([0-9a-f]{64})(?:\.scope)?(?:/|$)`)

// containerID is the last container ID in a /proc/PID/cgroup's paths.
func containerID(sc *bufio.Scanner) string {
	id := ""
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		_, path, ok := strings.Cut(sc.Text(), "::")
		if !ok {
			parts := strings.SplitN(sc.Text(), ":", 3)
			if len(parts) < 3 {
				continue
			}
			path = parts[2]
		}
		for _, m := range containerIDPattern.FindAllStringSubmatch(path, -1) {
			id = m[1]
		}
	}
	return id
}

// processBook is what was read of the processes a run has sampled, read
// once per process while it lives, and forgotten when it is gone.
type processBook struct {
	procs map[uint32]Process
}

func newProcessBook() *processBook { return &processBook{procs: map[uint32]Process{}} }

// see reads pid's process the first time it is named.
func (pb *processBook) see(pid uint32) Process {
	if p, ok := pb.procs[pid]; ok {
		return p
	}
	p := readProcess(pid)
	pb.procs[pid] = p
	return p
}

// forgetGone drops the processes that no longer run: a host's processes
// come and go, and the book must not grow with them.
func (pb *processBook) forgetGone() {
	for pid := range pb.procs {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			delete(pb.procs, pid)
		}
	}
}

// split is a window's tree as one profile per process: the target's
// (children included) in a target's session, each process's own with
// sampler.Config.AllProcesses.
func (pb *processBook) split(cfg sampler.Config, sess *sampler.Session, b *builder, m cct.Meta) []ProcessProfile {
	t := b.tree
	if !cfg.AllProcesses {
		return []ProcessProfile{{Process: pb.see(uint32(sess.PID())), Tree: t, Meta: m}}
	}
	byPID := map[uint32][]uint32{}
	for _, tid := range t.TIDs() {
		pid := m.Threads[tid].PID
		if pid == 0 {
			pid = b.pids[tid] // exited: the session forgot it
		}
		byPID[pid] = append(byPID[pid], tid)
	}
	pids := slices.Sorted(maps.Keys(byPID))
	out := make([]ProcessProfile, 0, len(pids))
	for _, pid := range pids {
		tids := byPID[pid]
		keep := func(tid uint32) bool { _, ok := slices.BinarySearch(tids, tid); return ok }
		pm := m
		pm.Threads = map[uint32]cct.Thread{}
		for _, tid := range tids {
			th := m.Threads[tid]
			th.TID, th.PID = tid, pid
			pm.Threads[tid] = th
		}
		p := Process{PID: pid, Name: "[unknown]"}
		if pid != 0 {
			p = pb.see(pid)
			if p.Name == "" {
				p.Name = m.Threads[pid].Name
			}
		}
		out = append(out, ProcessProfile{Process: p, Tree: t.FilterThreads(keep), Meta: pm})
	}
	return out
}
