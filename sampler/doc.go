// Package sampler owns the kernel side of cctop: perf_event_open event sets,
// their mmap rings, decoding of the records the kernel writes into them, and
// the lifecycle of the sampled target (attach to a running process, or launch
// one with the events already enabled). With Config.OffCPU it also records
// the target's context switches and its threads' stacks off the CPU, from
// context-switch samples or, where the kernel drops those, from a goroutine
// that reads blocked threads' stacks through /proc (waitprobe.go). With
// Config.AllProcesses it samples every process on the host instead, each
// group opened once per CPU for every task, tracking a process from its
// first sample (KindNewProcess) to its end (systemwide.go). It emits
// batches of decoded records; it knows nothing about symbols or trees.
//
// ring.go is the only file that touches mmap. unsafe is used only at the
// kernel's interface: the ring's metadata page (ring.go), the size of
// perf_event_attr and a uprobe's path (attrs.go), and PERF_EVENT_IOC_ID
// (threadevents.go). decode.go decodes raw record bytes and is portable, so
// it can be fuzzed and tested anywhere.
package sampler
