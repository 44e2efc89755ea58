// Package sampler owns the kernel side of cctop: perf_event_open event sets,
// their mmap rings, decoding of the records the kernel writes into them, and
// the lifecycle of the sampled target (attach to a running process, or launch
// one with the events already enabled). It emits batches of decoded records;
// it knows nothing about symbols or trees.
//
// ring.go is the only file that touches mmap. unsafe is used only at the
// kernel's interface: the ring's metadata page (ring.go), the size of
// perf_event_attr and a uprobe's path (attrs.go), and PERF_EVENT_IOC_ID
// (threadevents.go). decode.go decodes raw record bytes and is portable, so
// it can be fuzzed and tested anywhere.
package sampler
