// Package annotate owns where in a function its time goes: the rows of a
// function's source lines and of its machine instructions, each with its
// flat (own frame) and cum (frames below it through that line or call
// site) weight, built from a calling context tree's per-address counts
// (cct.Tree.LeafAddrs, Node.CallSite) and read from the function's
// module (DWARF lines and inlines, its machine code through
// golang.org/x/arch) and its source files.
//
// The same Listing feeds the TUI's annotate view and `cctop view --list`
// and `--disasm`, which print it as `go tool pprof -list` and `-disasm`
// print theirs. It reads files (the module, the sources) but no process
// and no kernel: a Listing is built off the sampling path, from a tree
// that is a settled clone.
package annotate
