package symbol

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
)

// Reading whole functions' machine code, for control-flow analysis (the
// flow package decodes it into basic blocks). Off the sampling path: a
// profile's functions are read once per module, after the samples that
// name them.

// FuncCode is one function's machine code.
type FuncCode struct {
	Name  string
	Start uint64 // ELF virtual address, the form Frame.Addr takes
	Code  []byte
}

// maxFuncCode bounds the bytes read for one function: a symbol size read
// from a corrupt file must not allocate gigabytes, and no compiler emits
// a function this large.
const maxFuncCode = 4 << 20

// CodeFile reads the functions of one ELF file. Their bounds come from
// the symbol tables (.symtab, a separate debug file's or MiniDebugInfo when
// the file is stripped, .dynsym, a Go binary's functab), sized symbols only: a zero-size
// symbol's end is a guess, and decoding past a function's end would make
// up control flow. The bytes come through the PT_LOAD segment holding them.
type CodeFile struct {
	r       io.ReaderAt
	closer  io.Closer
	segs    []segment
	syms    symtab
	plt     symtab // PLT stubs, named "exit@plt": the targets of calls into other modules
	BuildID []byte
	Arch    string // "amd64", "arm64", or the ELF machine of another
}

// OpenCode opens path for reading its functions.
func OpenCode(path string) (*CodeFile, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	c, err := newCodeFile(file, st.Size(), path, os.Open)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.closer = file
	return c, nil
}

// newCodeFile reads the function bounds of the ELF image in r (size bytes;
// path and open find a separate debug file, open nil for none).
func newCodeFile(r io.ReaderAt, size int64, path string, open func(string) (*os.File, error)) (*CodeFile, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	c := &CodeFile{r: r, segs: loadSegments(f.Progs), BuildID: buildID(f)}
	switch f.Machine {
	case elf.EM_X86_64:
		c.Arch = "amd64"
	case elf.EM_AARCH64:
		c.Arch = "arm64"
	default:
		c.Arch = f.Machine.String()
	}
	symtab, _ := f.Symbols()
	dynsym, _ := f.DynamicSymbols()
	cands := funcCands(nil, symtab, f.Sections, false)
	if len(symtab) == 0 && open != nil {
		if dbg := findDebugFile(f, path, c.BuildID, open); dbg != nil {
			dsyms, _ := dbg.Symbols()
			cands = funcCands(cands, dsyms, dbg.Sections, false)
			dbg.Close()
		}
	}
	if len(cands) == 0 {
		cands = miniDebugInfoCands(cands, f, size)
	}
	cands = funcCands(cands, dynsym, f.Sections, true)
	if g := newGoTable(f, r, symtab, c.segs, size); g != nil {
		// A Go binary's functab bounds every function, stripped or not
		// (go test strips its binaries).
		cands = g.funcCands(cands)
		g.close()
	}
	cands = slices.DeleteFunc(cands, func(s symCand) bool { return s.size == 0 || s.size > maxFuncCode || s.size > uint64(size) })
	c.syms = newSymtab(cands)
	c.plt = newSymtab(pltCands(f, symtab, dynsym, size))
	return c, nil
}

// FuncStart is the start of the function holding vaddr, without reading
// its code: callers that keep what they made of a function look it up by
// its start before asking Func for the bytes.
func (c *CodeFile) FuncStart(vaddr uint64) (uint64, bool) {
	s, ok := c.syms.holding(vaddr)
	return s.start, ok
}

// Func is the function holding vaddr, with its code; false where no sized
// symbol covers vaddr or its bytes are not in the file.
func (c *CodeFile) Func(vaddr uint64) (FuncCode, bool) {
	s, ok := c.syms.holding(vaddr)
	if !ok {
		return FuncCode{}, false
	}
	return c.read(s)
}

// NameAt names the function or PLT stub at vaddr ("" for none): what a
// direct call there calls, to tell calls that do not return (exit@plt,
// abort, __stack_chk_fail@plt).
func (c *CodeFile) NameAt(vaddr uint64) string {
	if s, ok := c.plt.holding(vaddr); ok {
		return s.name
	}
	if s, ok := c.syms.holding(vaddr); ok {
		return s.name
	}
	return ""
}

// SymAt is the function or PLT stub holding vaddr and where it starts
// ("", 0 for none): what a disassembler prints a call's or a jump's
// target as (name+offset).
func (c *CodeFile) SymAt(vaddr uint64) (string, uint64) {
	if s, ok := c.plt.holding(vaddr); ok {
		return s.name, s.start
	}
	if s, ok := c.syms.holding(vaddr); ok {
		return s.name, s.start
	}
	return "", 0
}

// funcCands appends a candidate symbol for every function of the table,
// sized to the next function's entry; none if the mapped table faults.
func (g *goTable) funcCands(dst []symCand) (out []symCand) {
	if g.tab == nil {
		return dst
	}
	if g.fm != nil {
		ok := true
		defer func() {
			if !ok {
				out = dst
			}
		}()
		defer guarded(debug.SetPanicOnFault(true), &ok)
	}
	return g.tab.funcCands(dst)
}

func (t *pclntab) funcCands(dst []symCand) []symCand {
	for i := 0; i < t.nfunc; i++ {
		f, ok := t.findFunc(t.text + uint64(t.entryOff(i)))
		if !ok {
			continue
		}
		name, ok := t.funcName(t.nameOff(f))
		if !ok {
			continue
		}
		dst = append(dst, symCand{addr: f.entry, size: f.end - f.entry, name: name, bind: elf.STB_GLOBAL})
	}
	return dst
}

// Starts lists the start of every function the file's symbols bound, in
// address order: Func reads each.
func (c *CodeFile) Starts() []uint64 {
	out := make([]uint64, len(c.syms))
	for i, s := range c.syms {
		out[i] = s.start
	}
	return out
}

func (c *CodeFile) read(s sym) (FuncCode, bool) {
	off, ok := fileOffset(c.segs, s.start)
	if !ok || s.end <= s.start {
		return FuncCode{}, false
	}
	code := make([]byte, s.end-s.start)
	if n, _ := c.r.ReadAt(code, int64(off)); n != len(code) {
		return FuncCode{}, false
	}
	return FuncCode{Name: s.name, Start: s.start, Code: code}, true
}

// Close closes the file.
func (c *CodeFile) Close() error {
	if c.closer == nil {
		return nil
	}
	return c.closer.Close()
}
