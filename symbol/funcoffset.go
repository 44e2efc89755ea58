package symbol

import (
	"debug/elf"
	"fmt"
	"os"
)

// FuncOffset resolves a function name in an ELF file to its file offset, where a uprobe goes.
// It searches .symtab, the separate debug file's .symtab when the binary is
// stripped, .dynsym, and the Go pclntab, and translates the symbol's
// address through the PT_LOAD segment holding it.
func FuncOffset(path, name string) (uint64, error) {
	_, off, err := FuncLocation(path, name)
	return off, err
}

// FuncLocation is FuncOffset that also gives the function's ELF virtual
// address, the form Frame.Addr takes.
func FuncLocation(path, name string) (vaddr, offset uint64, err error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return 0, 0, err
	}
	f, err := elf.NewFile(file)
	if err != nil {
		return 0, 0, fmt.Errorf("symbol: %s: %w", path, err)
	}
	segs := loadSegments(f.Progs)
	vaddr, ok, scanned := funcBySymtabScan(f, file, name)
	if scanned && !ok {
		// Go's assembly functions are in its .symtab with their ABI
		// ("runtime.futex.abi0"); the profile names them without.
		vaddr, ok, _ = funcBySymtabScan(f, file, name+".abi0")
	}
	var symtab []elf.Symbol
	if !scanned {
		symtab, _ = f.Symbols()
		vaddr, ok = funcByName(symtab, name)
	}
	if !ok && !scanned && len(symtab) == 0 {
		if dbg := findDebugFile(f, path, buildID(f), os.Open); dbg != nil {
			dsyms, _ := dbg.Symbols()
			dbg.Close()
			vaddr, ok = funcByName(dsyms, name)
		}
	}
	if !ok {
		dynsym, _ := f.DynamicSymbols()
		vaddr, ok = funcByName(dynsym, name)
	}
	if !ok {
		if scanned && symtab == nil {
			symtab, _ = f.Symbols() // the Go table finds its sections by them
		}
		if g := newGoTable(f, file, symtab, segs, st.Size()); g != nil {
			vaddr, ok = g.lookupFunc(name)
			g.close()
		}
	}
	if !ok {
		return 0, 0, fmt.Errorf("symbol: %s: function %q not found", path, name)
	}
	off, ok := vaddrToOffset(segs, vaddr)
	if !ok {
		return 0, 0, fmt.Errorf("symbol: %s: %q at %#x is in no loadable segment", path, name, vaddr)
	}
	return vaddr, off, nil
}

func funcByName(syms []elf.Symbol, name string) (uint64, bool) {
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if s.Name == name && (t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC) &&
			s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE {
			return s.Value, true
		}
	}
	return 0, false
}
