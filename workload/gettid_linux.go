package workload

import "syscall"

// gettid names the OS thread in per-thread counts, as profiles label it.
func gettid() int { return syscall.Gettid() }
