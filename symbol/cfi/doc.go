// Package cfi reads DWARF call frame information (.eh_frame and
// .debug_frame) of one ELF module and unwinds a user-space x86-64 stack one
// frame at a time.
//
// It owns the on-disk format and its meaning: CIE and FDE parsing with
// their pointer encodings and augmentations, the per-module index of FDEs
// sorted by address, the CFA instruction interpreter that turns an FDE into
// the rule that holds at one pc, the DWARF expression evaluator those rules
// may need, and the single unwind step that applies a rule to a register
// set and a copy of the stack.
//
// It does not know about processes, mappings or perf samples: pcs are the
// module's link-time virtual addresses, and stack memory is reached through
// a function the caller supplies. Choosing which module a pc belongs to,
// translating runtime addresses, memoizing rules and deciding when a chain
// of steps has gone wrong are the caller's.
//
// Nothing here panics or loops on malformed input, and nothing allocates
// more than the input's size: a corrupt section yields fewer rules, never a
// crash, because the input is whatever binary a profiled process mapped.
package cfi
