// Package symbol turns sampled program counters into frames: function name,
// source position and module.
//
// It owns everything between a raw address and a name: the executable
// mappings of every sampled process (from /proc/PID/maps and kernel MMAP2
// records, kept current across fork, exec and exit), the translation of a
// pc through a mapping and the ELF program headers to the address the
// binary was linked at, and the symbol sources for each module: the Go
// pclntab; DWARF, which gives C, C++ and Rust code file:line and the
// chain of functions inlined at each address (one Frame each, innermost
// first); ELF .symtab/.dynsym, plus the symbols of .gnu_debugdata
// (MiniDebugInfo) in binaries stripped without a debug package; the vdso
// image; and /proc/kallsyms for the kernel. Symbols and DWARF of a
// stripped binary come from its separate debug file, found by build id or
// .gnu_debuglink.
//
// Modules are loaded lazily and shared by every process that maps them;
// each module memoizes its answers per address, because a profiler sees
// the same few thousand pcs millions of times. DWARF is lazier still: a
// compilation unit's functions and line table are decoded on the first
// lookup that lands in it. A module may also be read on another goroutine
// (loads.go): with lookups deferred, one that needs a module not loaded yet
// starts its load and answers without it, and the caller, told so by
// TakeMissed, asks again once Collect has put the module in.
//
// What the modules hold is estimated as each part is loaded (mem.go says
// what is counted). By default every module stays loaded for the
// resolver's life, as a top or record session wants; an always-on agent
// sets a byte budget (SetBudget), and the least recently used modules,
// those no live process maps first, are then evicted and reloaded
// transparently when a mapping needs them again (budget.go). MemStats
// reports the modules, their bytes, evictions, reloads and processes;
// what is tied to one process (its mappings, its JIT perf map and
// jitdump) goes with its Exit. ModuleInfo gives a module's build id and
// executable segment, for exporters that describe mappings.
//
// PLT stubs are named "memcpy@plt" as perf names them (plt.go), and any
// other address of a mapped file that nothing names "[module+0xOFFSET]",
// OFFSET a file offset, grouped by the function start the CFI knows
// (unnamed.go).
//
// Nothing here returns an error or panics for a binary it cannot read or
// parse: such pcs get the "[module+0xOFFSET]" name of a file offset, so a
// profile degrades to module+offset instead of losing samples.
package symbol
