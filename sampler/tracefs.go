//go:build linux

package sampler

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Uprobes are placed as tracefs probe events (uprobe_events), opened as
// tracepoints, wherever tracefs is writable; the uprobe PMU (config1 = a
// path pointer) is the fallback. Measured on the development VM (kernel
// 6.18, bench/manycore.sh): closing a uprobe PMU event waits for the kernel
// to unregister its uprobe, 70-110 ms, serialized under the kernel's
// event_mutex so that closing them in parallel gains nothing, and there is
// one uprobe per event: 17 threads x 1 probe took 1.2 s, 16 CPUs x 16
// threads x 4 probes would take minutes. Perf events on a tracefs probe
// share its one uprobe registration: only the last of them to close pays
// the unregistering (110 ms), the others close in microseconds (1087 of
// them in 3.8 ms). And a tracepoint's attr holds no user pointer, so its
// events can be inherited by new threads, which the uprobe PMU's cannot
// (the kernel reads config1 again in the memory of the task that creates
// the thread, and that clone fails with EFAULT): no following of threads
// one by one, no events per new thread.

// probeSet owns the tracefs probes of one cctop process: the group
// cctop_<pid> in uprobe_events. Events hold references to its probes; a
// probe is deleted from tracefs once no open event uses it. Safe for
// concurrent use: old events are closed on a goroutine (dropEvents).
type probeSet struct {
	dir   string // tracefs mount, "" when probes cannot be created there
	why   string // why dir is "", for notes
	told  bool   // the session noted why
	group string
	mu    sync.Mutex
	byKey map[probeKey]*tprobe
	next  int
}

type probeKey struct {
	path string
	off  uint64
}

// tprobe is one probe event in tracefs and how many event sets use it.
type tprobe struct {
	key   probeKey
	name  string // group/event
	id    uint64 // tracepoint id, the attr's config
	users int
}

// tracefsDirs are where tracefs is found, newest convention first.
var tracefsDirs = [...]string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// newProbeSet finds a writable uprobe_events. Where tracefs is not mounted
// (systemd mounts it; minimal VMs and containers may not), it mounts it at
// its standard place, as perf does for its probes, when it may.
func newProbeSet() *probeSet {
	ps := &probeSet{group: fmt.Sprintf("cctop_%d", os.Getpid()), byKey: map[probeKey]*tprobe{}}
	mountTracefs()
	ps.dir, ps.why = writableTracefs()
	if ps.dir != "" {
		ps.removeStale()
	}
	return ps
}

// ensureProbes is the session's probe set, made on first use.
func (s *Session) ensureProbes() *probeSet {
	if s.probes == nil {
		s.probes = newProbeSet()
		if s.k.pmuUprobes {
			s.probes.dir, s.probes.why = "", "the uprobe PMU was asked for"
		}
	}
	return s.probes
}

// mountTracefs mounts tracefs at /sys/kernel/tracing when no tracefs is
// mounted there and the directory is empty (the kernel makes it for this).
// Without CAP_SYS_ADMIN the mount fails, and uprobes need it anyway.
func mountTracefs() {
	const dir = "/sys/kernel/tracing"
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type == unix.TRACEFS_MAGIC {
		return
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) > 0 {
		return
	}
	unix.Mount("nodev", dir, "tracefs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}

// usable reports whether probes are created in tracefs.
func (ps *probeSet) usable() bool { return ps != nil && ps.dir != "" }

// acquire returns the tracepoint id of the probe at path:off, creating it on
// first use, and counts one more user.
func (ps *probeSet) acquire(path string, off uint64) (uint64, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	k := probeKey{path, off}
	if p := ps.byKey[k]; p != nil {
		p.users++
		return p.id, nil
	}
	if strings.ContainsAny(path, " \t\n") {
		// uprobe_events is a line of space-separated words.
		return 0, fmt.Errorf("cannot probe %q through tracefs: its path has blanks", path)
	}
	name := fmt.Sprintf("%s/p%d", ps.group, ps.next)
	ps.next++
	if err := ps.write(fmt.Sprintf("p:%s %s:0x%x", name, path, off)); err != nil {
		return 0, fmt.Errorf("uprobe %s:0x%x: %w", path, off, err)
	}
	b, err := os.ReadFile(filepath.Join(ps.dir, "events", name, "id"))
	if err != nil {
		ps.write("-:" + name)
		return 0, fmt.Errorf("uprobe %s:0x%x: %w", path, off, err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		ps.write("-:" + name)
		return 0, fmt.Errorf("uprobe %s: id %q: %v", name, b, err)
	}
	ps.byKey[k] = &tprobe{key: k, name: name, id: id, users: 1}
	return id, nil
}

// release drops one user of each probe with an id in ids and deletes the
// probes nobody uses any more. Their events must be closed by then: tracefs
// refuses to delete a probe with open events (EBUSY).
func (ps *probeSet) release(ids []uint64) {
	if ps == nil || len(ids) == 0 {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for _, id := range ids {
		for k, p := range ps.byKey {
			if p.id != id {
				continue
			}
			if p.users--; p.users <= 0 {
				ps.write("-:" + p.name)
				delete(ps.byKey, k)
			}
			break
		}
	}
}

// detach hands the probes over: the caller deletes them (DeleteProbes) once
// the events using them are closed; the set forgets them.
func (ps *probeSet) detach() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var names []string
	for k, p := range ps.byKey {
		names = append(names, p.name)
		delete(ps.byKey, k)
	}
	return names
}

func (ps *probeSet) write(line string) error {
	return writeProbeLine(ps.dir, line)
}

func writeProbeLine(dir, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, "uprobe_events"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeStale deletes the probes of cctop processes that are gone (killed
// before they could remove theirs). A group still in use, by a live cctop or
// by the helper that closes a finished one's events, is left alone.
func (ps *probeSet) removeStale() {
	f, err := os.Open(filepath.Join(ps.dir, "uprobe_events"))
	if err != nil {
		return
	}
	var stale []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// p:cctop_1234/p0 /path:0x1234
		name, _, _ := strings.Cut(strings.TrimPrefix(sc.Text(), "p:"), " ")
		group, _, ok := strings.Cut(name, "/")
		pidStr, isOurs := strings.CutPrefix(group, "cctop_")
		if !ok || !isOurs {
			continue
		}
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		stale = append(stale, name)
	}
	f.Close()
	for _, name := range stale {
		writeProbeLine(ps.dir, "-:"+name)
	}
}

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// DeleteProbes deletes tracefs probes handed over by DetachEvents, once the
// events on them are closed.
func DeleteProbes(names []string) error {
	dir, _ := writableTracefs()
	if dir == "" {
		return nil
	}
	var first error
	for _, n := range names {
		if err := writeProbeLine(dir, "-:"+n); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// writableTracefs is the first tracefs whose uprobe_events cctop may write,
// or "" and why there is none.
func writableTracefs() (dir, why string) {
	why = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)"
	for _, d := range tracefsDirs {
		err := unix.Access(filepath.Join(d, "uprobe_events"), unix.W_OK)
		if err == nil {
			return d, ""
		}
		if !errors.Is(err, unix.ENOENT) {
			why = fmt.Sprintf("%s/uprobe_events: %v", d, err)
		}
	}
	return "", why
}

// ProbeFootprint is what one more counting probe costs in events: how many
// it opens (one per directly opened thread and CPU; inherited copies are
// the kernel's), and how many of those closes will each wait for the kernel
// to unregister a uprobe (one per probe with tracefs, every event with the
// uprobe PMU). inherits says whether new threads get the probe's events by
// inheritance rather than by cctop opening them one by one.
func (s *Session) ProbeFootprint() (events, slowCloses int, inherits bool) {
	events = max(1, len(s.tidFDs)) * len(s.cpus)
	if s.ensureProbes().usable() {
		return events, 1, true
	}
	return events, events, false
}

// ReopenCost is what re-opening the events with k counters on every thread
// would take, at the mean cost of the events opened so far: sampling stops
// meanwhile (ReconfigureWith).
func (s *Session) ReopenCost(k int) time.Duration {
	if s.openCount == 0 {
		return 0
	}
	per := s.openTime / time.Duration(s.openCount)
	return per * time.Duration(max(1, len(s.tidFDs))*len(s.cpus)*(1+k))
}

// Background runs fn on a goroutine that Close and DetachEvents wait for:
// closing events that hold tracefs probes, which are deleted once closed.
func (s *Session) Background(fn func()) { s.bg.Go(fn) }

// ProbesWhy says why uprobes cannot go through tracefs here, or "".
func (s *Session) ProbesWhy() string { return s.ensureProbes().why }

// TracefsProbes says whether uprobes can be placed as tracefs probe events
// here, and where, or why not.
func TracefsProbes() (ok bool, detail string) {
	ps := newProbeSet()
	if ps.usable() {
		return true, ps.dir + "/uprobe_events"
	}
	return false, ps.why
}
