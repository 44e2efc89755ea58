// Package hpm decides how cctop counts calls, which density correction
// needs (design §3): a hardware counter where the CPU has one and the kernel
// exposes it, otherwise entry uprobes on a few functions.
//
// It owns four things. Which retired-call event (or proxy) this CPU model
// has, checked against the kernel's pmu-events tables and opened once to see
// that it works. The plain-words reason when there is none. The --calls
// decision between hardware, uprobes and nothing. And the uprobe fallback's
// bookkeeping: which functions to probe, where they live in their ELF files,
// and what one probe hit costs on this machine, so the UI can say so.
//
// Opening the events for real belongs to sampler; hpm only names them.
package hpm
