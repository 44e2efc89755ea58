//go:build !linux

package workload

// offCPUNames are the off-CPU workloads Names lists after the others: none
// here (see offcpu_other.go).
var offCPUNames []string
