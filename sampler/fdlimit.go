//go:build linux

package sampler

// File-descriptor limits: making room under RLIMIT_NOFILE for the events of
// the target's threads (a descriptor per event, thread and CPU), and saying
// so when there is none.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileLimit is what cctop did about RLIMIT_NOFILE.
type fileLimit struct {
	told bool // the user was told that threads go unsampled
}

// fileSlack is descriptors left for cctop's own files (symbol files, the
// output, the terminal) beyond the events.
const fileSlack = 128

// fdsPerThread is the descriptors one thread's events take: a group per
// CPU, a descriptor per event of the group.
func (s *Session) fdsPerThread() int {
	n := 0
	for i := range s.groups {
		if !s.groups[i].allTasks {
			n += 1 + len(s.groups[i].members)
		}
	}
	return n * len(s.cpus)
}

// ensureFiles makes room under RLIMIT_NOFILE for the events of threads more
// threads. Go raises the soft limit to the hard one at start; beyond that
// cctop raises the hard limit where it may (root, CAP_SYS_RESOURCE), and
// otherwise says how many descriptors it needs and how to allow them.
func (s *Session) ensureFiles(threads int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return nil // let perf_event_open say
	}
	need := uint64(openFiles() + threads*s.fdsPerThread() + fileSlack)
	if need <= lim.Cur {
		return nil
	}
	// Room for threads to come, as long as the limits allow.
	want := need + need/4
	if want <= lim.Max {
		if setFileLimit(want, lim.Max) == nil {
			return nil
		}
	}
	if nr := nrOpen(); nr > 0 && want > nr {
		want = max(need, nr)
	}
	if want > lim.Max && setFileLimit(want, want) == nil {
		s.note(fmt.Sprintf("raised the open-file limit (RLIMIT_NOFILE) from %d to %d: the events of %d threads on %d CPUs need about %d descriptors",
			lim.Cur, want, len(s.tidFDs)+threads, len(s.cpus), need))
		return nil
	}
	if lim.Cur < lim.Max {
		setFileLimit(lim.Max, lim.Max)
	}
	return s.files.tooFew(len(s.tidFDs)+threads, s.fdsPerThread())
}

// tooFew is the error for a descriptor limit too low for threads threads.
func (f *fileLimit) tooFew(threads, perThread int) error {
	var lim unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &lim)
	return &FileLimitError{Threads: threads, Need: threads*perThread + fileSlack, Limit: lim.Cur, Hard: lim.Max, Root: os.Geteuid() == 0}
}

// FileLimitError says that RLIMIT_NOFILE is too low for the events of the
// target's threads and cctop could not raise it.
type FileLimitError struct {
	Threads     int    // threads to sample
	Need        int    // descriptors needed, about
	Limit, Hard uint64 // RLIMIT_NOFILE
	Root        bool   // cctop runs as root, and still could not raise it
}

func (e *FileLimitError) Error() string {
	fix := fmt.Sprintf("run `ulimit -n %d` first (above the hard limit that takes root), or run cctop as root", e.Need)
	if e.Root {
		fix = fmt.Sprintf("root without CAP_SYS_RESOURCE cannot raise the hard limit: raise it where cctop starts (`ulimit -Hn %d` in a shell that may, or the container's or service's LimitNOFILE)", e.Need)
	}
	return fmt.Sprintf("open-file limit too low: sampling %d threads takes about %d descriptors, RLIMIT_NOFILE is %d (hard %d) and cctop cannot raise it: %s",
		e.Threads, e.Need, e.Limit, e.Hard, fix)
}

// setFileLimit sets RLIMIT_NOFILE through the syscall package, which then
// lets commands cctop starts inherit the new limit rather than the one Go
// found at start.
func setFileLimit(cur, hard uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: cur, Max: hard})
}

// openFiles is how many descriptors cctop has open.
func openFiles() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

// nrOpen is fs.nr_open, the most RLIMIT_NOFILE may be, 0 if unknown.
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return n
}

// tellFiles notes, once, that new threads go unsampled for err (a
// descriptor limit, say).
func (s *Session) tellFiles(err error) {
	if s.files.told {
		return
	}
	s.files.told = true
	s.note("new threads not sampled: " + err.Error())
}
