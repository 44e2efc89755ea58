package symbol

import (
	"debug/elf"
	"io"
	"os"
)

// loadELF loads one ELF image: program headers for translation, then its
// name sources, Go pclntab first (it has file:line and covers Go code
// exactly), then the function symbols.
//
// size bounds every allocation driven by values read from the file, so a
// corrupt header cannot make us allocate more than the file holds. path is
// the file's name as the target sees it, used to find a .gnu_debuglink
// file next to it; open (nil for images that are not files, like the vdso)
// opens debug files.
func loadELF(r io.ReaderAt, size int64, path string, open func(string) (*os.File, error)) *module {
	mod := newModule()
	f, err := elf.NewFile(r)
	if err != nil {
		return mod
	}
	mod.segs = loadSegments(f.Progs)
	mod.buildID = buildID(f)

	symtab, _ := f.Symbols()
	dynsym, _ := f.DynamicSymbols()
	cands := funcCands(nil, symtab, f.Sections, false)
	if len(symtab) == 0 && open != nil {
		// Stripped: the full symbol table, with the local symbols that
		// name most of libc's hot code, lives in a separate debug file.
		if dbg := findDebugFile(f, path, mod.buildID, open); dbg != nil {
			dsyms, _ := dbg.Symbols()
			cands = funcCands(cands, dsyms, dbg.Sections, false)
			dbg.Close()
		}
	}
	cands = funcCands(cands, dynsym, f.Sections, true)

	if g := newGoTable(f, symtab, mod.segs, size); g != nil {
		mod.sources = append(mod.sources, g)
	}
	if st := newSymtab(cands); len(st) > 0 {
		mod.sources = append(mod.sources, st)
	}
	return mod
}
