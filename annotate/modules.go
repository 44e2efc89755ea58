package annotate

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cctop/cctop/symbol"
)

// maxModules bounds the modules an Annotator keeps open between builds: a
// live view rebuilds the listing of one function as samples come, and
// reading a module's symbols and debug info again each time would cost
// more than the rest of the build. Each holds its symbol table and debug
// info in memory, not a descriptor (CodeFile keeps one: closed on
// eviction).
const maxModules = 8

// module is one binary opened for its code and its lines, or why not.
type module struct {
	path string
	code *symbol.CodeFile
	data []dataSym // sized data symbols, by address
	// sizes are the ELF symbol table's function sizes by start: a Go
	// binary's functab bounds a function to the next one's start,
	// padding included, which its symbol leaves out (as pprof does).
	sizes  map[uint64]uint64
	frames *symbol.FrameFile
	err    error
	// mtime and size say whether the file is the one read: a binary
	// rebuilt between two builds is read again.
	mtime int64
	size  int64
	// funcs are the functions decoded so far, by start: a live view
	// rebuilds the same function's listing again and again, and decoding
	// and naming its lines is most of a build.
	funcs map[uint64]*function
}

// function is one decoded function: its instructions with their lines and
// targets, no weights.
type function struct {
	sym   Sym
	insns []insn
}

type insn struct {
	Insn
	size int
}

// maxFuncs bounds the functions kept decoded per module; past it the
// cache starts over.
const maxFuncs = 64

// errNoDisasm is an architecture the package cannot decode.
var errNoDisasm = errors.New("no disassembler")

// function decodes the function starting at start, or returns it as
// decoded before.
func (m *module) function(start uint64) (*function, error) {
	if f, ok := m.funcs[start]; ok {
		return f, nil
	}
	fc, ok := m.code.Func(start)
	if !ok {
		return nil, fmt.Errorf("the code at %#x of %s could not be read", start, filepath.Base(m.path))
	}
	if n := m.sizes[fc.Start]; n > 0 && n < uint64(len(fc.Code)) {
		fc.Code = fc.Code[:n]
	}
	ds, ok := decode(m.code.Arch, fc.Code, fc.Start, m.lookup)
	if !ok {
		return nil, fmt.Errorf("%w for %s", errNoDisasm, m.code.Arch)
	}
	end := fc.Start + uint64(len(fc.Code))
	f := &function{sym: Sym{Name: fc.Name, Start: fc.Start, End: end}, insns: make([]insn, 0, len(ds))}
	targets := jumpTargets(ds, fc.Start, end)
	var frames []symbol.Frame
	for _, d := range ds {
		in := insn{Insn{Addr: d.addr, Text: d.text, Target: d.target, IsTarget: targets[d.addr]}, d.size}
		if d.call && d.target != 0 {
			in.Call = m.code.NameAt(d.target)
		}
		frames = m.frames.Frames(d.addr, frames[:0])
		if len(frames) > 0 && frames[0].Line > 0 {
			in.File, in.Line = frames[0].File, frames[0].Line
		}
		f.insns = append(f.insns, in)
	}
	if m.funcs == nil || len(m.funcs) >= maxFuncs {
		m.funcs = map[uint64]*function{}
	}
	m.funcs[start] = f
	return f, nil
}

type modules struct {
	open []*module // most recently used last
}

// get opens path, or returns it as opened before if unchanged.
func (ms *modules) get(path string) *module {
	st, statErr := os.Stat(path)
	for i, m := range ms.open {
		if m.path != path {
			continue
		}
		if statErr == nil && (st.ModTime().UnixNano() != m.mtime || st.Size() != m.size) {
			m.close()
			ms.open = append(ms.open[:i], ms.open[i+1:]...)
			break
		}
		ms.open = append(append(ms.open[:i], ms.open[i+1:]...), m)
		return m
	}
	m := &module{path: path}
	if statErr != nil {
		m.err = statErr
	} else {
		m.mtime, m.size = st.ModTime().UnixNano(), st.Size()
		if m.code, m.err = symbol.OpenCode(path); m.err == nil {
			if m.frames, m.err = symbol.OpenFrames(path); m.err != nil {
				m.code.Close()
				m.code = nil
			} else {
				m.data, m.sizes = readSyms(path)
			}
		}
	}
	if len(ms.open) >= maxModules {
		ms.open[0].close()
		ms.open = ms.open[1:]
	}
	ms.open = append(ms.open, m)
	return m
}

func (m *module) close() {
	if m.code != nil {
		m.code.Close()
	}
}

// dataSym is a variable of the binary: Go's disassembler names the data
// an instruction addresses (sink(SB)), and so do we, to print the same.
type dataSym struct {
	name       string
	start, end uint64
}

// maxDataSyms bounds the data symbols kept of one module.
const maxDataSyms = 1 << 20

// readSyms reads path's sized data symbols and function sizes.
func readSyms(path string) ([]dataSym, map[uint64]uint64) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	syms, _ := f.Symbols()
	var out []dataSym
	sizes := map[uint64]uint64{}
	for _, s := range syms {
		if s.Size == 0 || s.Value == 0 || len(out)+len(sizes) >= maxDataSyms {
			continue
		}
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_OBJECT, elf.STT_TLS:
			out = append(out, dataSym{s.Name, s.Value, s.Value + s.Size})
		case elf.STT_FUNC:
			sizes[s.Value] = max(sizes[s.Value], s.Size)
		}
	}
	slices.SortFunc(out, func(a, b dataSym) int { return cmp.Compare(a.start, b.start) })
	return out, sizes
}

// lookup names addr as a disassembler prints it: the function or PLT
// stub, else the variable, holding it, and where that starts.
func (m *module) lookup(addr uint64) (string, uint64) {
	if name, start := m.code.SymAt(addr); name != "" {
		return name, start
	}
	i, _ := slices.BinarySearchFunc(m.data, addr, func(d dataSym, a uint64) int {
		return cmp.Compare(d.start, a+1)
	})
	if i > 0 && addr < m.data[i-1].end {
		return m.data[i-1].name, m.data[i-1].start
	}
	return "", 0
}
