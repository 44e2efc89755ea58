package symbol

import (
	"debug/elf"
	"io"
	"os"
	"slices"

	"github.com/cctop/cctop/symbol/cfi"
)

// loadELF loads one ELF image: program headers for translation, then its
// name sources, most precise first: the PLT stubs (plt.go), the Go pclntab
// (it has file:line and covers Go code exactly), DWARF (inline chains and
// file:line for C, C++, Rust...), then the function symbols, which name
// whatever the others do not know (assembly, code built without -g).
//
// size bounds every allocation driven by values read from the file, so a
// corrupt header cannot make us allocate more than the file holds. path is
// the file's name as the target sees it, used to find a .gnu_debuglink
// file next to it; open (nil for images that are not files, like the vdso)
// opens debug files.
func loadELF(r io.ReaderAt, size int64, path string, open func(string) (*os.File, error), lines bool) *module {
	mod := newModule()
	f, err := elf.NewFile(r)
	if err != nil {
		return mod
	}
	mod.segs = loadSegments(f.Progs)
	mod.buildID = buildID(f)
	mod.goBuildID = goBuildID(f)

	symtab, _ := f.Symbols()
	dynsym, _ := f.DynamicSymbols()
	goTab := newGoTable(f, r, symtab, mod.segs, size)
	// Go binaries are named by their pclntab. Their DWARF would add only
	// the C code of cgo packages, at the price of holding all of it.
	wantDWARF := goTab == nil && lines
	ownDWARF := wantDWARF && hasDWARF(f)

	cands := funcCands(nil, symtab, f.Sections, false)
	if goTab != nil && goTab.hi > goTab.lo {
		// The table names every pc of the Go code, so the symbols there
		// would be read only by funcRange, which asks the table: a Go
		// service's tens of thousands of names (2.5 MB of heap for
		// cctop's own binary) are not kept.
		cands = slices.DeleteFunc(cands, func(c symCand) bool { return goTab.covers(c.addr) })
	}
	var dbg *debugFile
	if open != nil && (len(symtab) == 0 || (wantDWARF && !ownDWARF)) {
		// Stripped: the full symbol table, with the local symbols that
		// name most of libc's hot code, and the DWARF live in a separate
		// debug file.
		dbg = findDebugFile(f, path, mod.buildID, open)
	}
	if dbg != nil {
		defer dbg.Close()
		// Its .debug_frame, if any, is CFI the stripped file may lack.
		if t, err := cfi.Load(dbg.File); err == nil && t.Len() > 0 {
			mod.debugCFI = t
			mod.acct.add(t.Bytes())
		}
		if len(symtab) == 0 {
			dsyms, _ := dbg.Symbols()
			cands = funcCands(cands, dsyms, dbg.Sections, false)
		}
	}
	if len(cands) == 0 {
		// No symbol table anywhere: Fedora-style binaries carry their
		// local function symbols in .gnu_debugdata (debugdata.go).
		cands = miniDebugInfoCands(cands, f, size)
	}
	cands = funcCands(cands, dynsym, f.Sections, true)

	st := newSymtab(cands)
	// PLT stubs come first: nothing else names them, and a zero-size
	// symbol before .plt must not run over it.
	if plt := newSymtab(pltCands(f, symtab, dynsym, size)); len(plt) > 0 {
		mod.sources = append(mod.sources, pltSource{plt})
		mod.acct.add(symtabBytes(plt))
	}
	if goTab != nil {
		mod.sources = append(mod.sources, goTab)
		goTab.account(&mod.acct)
	}
	var dw *dwarfSource
	switch {
	case ownDWARF:
		if dw = newDWARFSource(f, size); dw != nil {
			dw.rest.reopen = reopenDWARF(open, path, mod.buildID)
		}
	case wantDWARF && dbg != nil:
		if dw = newDWARFSource(dbg.File, dbg.size); dw != nil {
			dw.rest.reopen = reopenDWARF(open, dbg.path, mod.buildID)
		}
	}
	if dw != nil {
		dw.syms = st
		mod.sources = append(mod.sources, dw)
		dw.account(&mod.acct)
	}
	// The table is counted once, though DWARF shares it.
	mod.acct.add(symtabBytes(st))
	if len(st) > 0 {
		mod.sources = append(mod.sources, st)
	}
	return mod
}
