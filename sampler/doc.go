// Package sampler owns the kernel side of cctop: perf_event_open event sets,
// their mmap rings, decoding of the records the kernel writes into them, and
// the lifecycle of the sampled target (attach to a running process, or launch
// one with the events already enabled). It emits batches of decoded records;
// it knows nothing about symbols or trees.
//
// ring.go is the only file that touches mmap and unsafe. record.go decodes
// raw record bytes and is portable, so it can be fuzzed and tested anywhere.
package sampler
