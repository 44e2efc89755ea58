//go:build linux

package sampler

import "golang.org/x/sys/unix"

// boundary is the session's edge with the kernel where behaviour depends on
// the machine's size: the CPU list and perf_event_open. Unit tests replace
// it to run a session as if on 64 CPUs (each mapped onto a real one), and
// count the events it opens.
type boundary struct {
	cpus     func() ([]int, error)
	perfOpen func(attr *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error)
	// pmuUprobes places uprobes with the uprobe PMU even where tracefs
	// is writable, to compare the two (bench/manycore.sh).
	pmuUprobes bool
}

func kernelBoundary() boundary {
	return boundary{cpus: onlineCPUs, perfOpen: unix.PerfEventOpen}
}
