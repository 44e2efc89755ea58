//go:build !linux

package workload

// offCPUWorkloads is empty where the off-CPU workloads cannot block the way
// they must: they need Linux's futex, thread CPU clock and /proc.
var offCPUWorkloads []entry
