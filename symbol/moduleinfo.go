package symbol

// ModuleInfo describes the module that frames name path (their Module
// field) for exporters that list mappings beside addresses (OTLP, pprof):
// its GNU build id (nil without one) and its executable PT_LOAD segment,
// [start, limit) in module-relative (link-time) addresses from file
// offset offset, so that a frame's Addr lies at file offset
// Addr - start + offset.
//
// It answers from memory only, never opening a file: for a module that
// is loaded, or that a live process maps (the segments and build id of
// an evicted module outlive its symbols). ok is false for other paths and
// for modules that could not be read. "[vdso]" answers for the vdso
// image. The build id is shared: callers must not modify it.
func (r *Resolver) ModuleInfo(path string) (buildID []byte, start, limit, offset uint64, ok bool) {
	mod := r.moduleByPath(path)
	if mod == nil {
		return nil, 0, 0, 0, false
	}
	for _, s := range mod.segs {
		if s.exec {
			return mod.buildID, s.vaddr, s.vaddr + s.filesz, s.off, true
		}
	}
	return nil, 0, 0, 0, false
}

// moduleByPath is the module behind mappings of path: the one loaded
// from it, else one a live mapping of it holds (shared by build id, or
// evicted).
func (r *Resolver) moduleByPath(path string) *module {
	c := &r.mods
	if path == vdsoPath {
		// One image per ABI, which the path does not tell apart: the
		// largest is taken.
		var best *module
		var size uint64
		for sz, mod := range c.vdso {
			if best == nil || sz > size {
				best, size = mod, sz
			}
		}
		return best
	}
	if mod := c.byPath[path]; mod != nil {
		return mod
	}
	for _, p := range r.procs {
		for i := range p.maps {
			if m := &p.maps[i]; m.Path == path && m.loaded && m.mod != nil {
				return m.mod
			}
		}
	}
	return nil
}

// GoBuildID is the Go build ID of the module frames name path, from
// memory as ModuleInfo answers; "" for other binaries.
func (r *Resolver) GoBuildID(path string) string {
	if mod := r.moduleByPath(path); mod != nil {
		return mod.goBuildID
	}
	return ""
}

// SetNamesOnly makes the modules loaded from now on name functions from
// their symbol tables only, without DWARF: no source lines, no inlined
// frames, and a fraction of the memory and load time (a libc's debug
// information alone holds some 20 MB). For an always-on agent, whose
// backend can symbolize lines by build ID.
func (r *Resolver) SetNamesOnly(on bool) { r.mods.namesOnly = on }
