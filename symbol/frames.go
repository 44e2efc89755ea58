package symbol

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
)

// Reading one file's frames by address outside any process, for the
// annotate view: each instruction of a function with its file:line and
// the chain of functions inlined there. The same sources name the
// samples (loadELF with lines), so an instruction's line here is the one
// its samples were given.

// Line sources a FrameFile may have, most precise first.
const (
	LinesGo    = "go"    // the Go pclntab
	LinesDWARF = "dwarf" // DWARF line tables and inlines
)

// FrameFile names the addresses of one ELF file.
type FrameFile struct {
	mod  *module
	path string
	// Lines is where file:line comes from: LinesGo, LinesDWARF, or ""
	// when the file has none (stripped, or built without -g).
	Lines string
	// Broken: the file has debug sections that could not be read
	// (truncated, or corrupt), so Lines says less than it should.
	Broken bool
}

// OpenFrames reads path's names and lines. Its separate debug file is
// found as the resolver finds it (build ID, .gnu_debuglink).
func OpenFrames(path string) (*FrameFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	own := hasDWARF(ef)
	// loadELF reads what it needs and keeps no descriptor.
	mod := loadELF(f, st.Size(), path, os.Open, true)
	if len(mod.segs) == 0 {
		return nil, errors.New(path + ": no loadable segments")
	}
	ff := &FrameFile{mod: mod, path: path}
	for _, s := range mod.sources {
		switch s.(type) {
		case *goTable:
			ff.Lines = LinesGo
		case *dwarfSource:
			if ff.Lines == "" {
				ff.Lines = LinesDWARF
			}
		}
	}
	// Debug info in the file that loadELF could not use is cut or
	// corrupt: a file that has none is stripped, which is not Broken.
	ff.Broken = own && ff.Lines == ""
	return ff, nil
}

// Frames appends the frames at addr (an ELF virtual address), innermost
// first, Inlined on all but the last; one frame with no Func where
// nothing names addr.
func (ff *FrameFile) Frames(addr uint64, dst []Frame) []Frame {
	return ff.mod.frames(addr, ff.path, dst)
}
