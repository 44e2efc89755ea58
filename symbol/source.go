package symbol

// source names module-relative addresses for one module. A module asks its
// sources in order and takes the first answer, so a more precise source goes
// in front of a coarser one.
//
// The sources of an ELF module, in order (loadELF): the PLT stubs
// (plt.go), the Go pclntab (gosym.go), DWARF (dwarf.go: several frames per
// address, innermost first, Inlined set on all but the outermost, with
// File/Line), then the symbol table (symtab.go), whose candidates include MiniDebugInfo
// (.gnu_debugdata, debugdata.go) when the binary has no .symtab. What
// none of them knows gets a "[module+0xOFFSET]" name (unnamed.go).
//
// Still to come: JIT perf maps (/tmp/perf-PID.map), a per-process source
// for anonymous mappings, consulted where Lookup handles a mapping with no
// module.
type source interface {
	// frames appends the frames for addr to dst and reports whether the
	// source knew addr. When it did not, dst is returned unchanged.
	frames(addr uint64, dst []Frame) ([]Frame, bool)
}

// demangle rewrites symbol names for display. The contract keeps mangled
// names for now; a C++/Rust demangler will be installed here. It runs once
// per distinct address, on a cache miss, so it may allocate.
var demangle = func(name string) string { return name }
