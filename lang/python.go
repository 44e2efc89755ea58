package lang

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Version is a CPython version, Major.Minor.
type Version struct{ Major, Minor int }

func (v Version) String() string { return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) }

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// maxScript bounds what is read of a script's first line.
const maxScript = 256

var (
	pythonName = regexp.MustCompile(`^python(\d)\.(\d+)`)
	libPython  = regexp.MustCompile(`^libpython(\d)\.(\d+)`)
)

// PythonOf says whether the executable at path is CPython and which
// version, reading as little as it can: the Py_Version constant (3.11+)
// its dynamic symbol table points at, the libpythonX.Y it links, else its name
// (python3.12) or, for a script such as pyenv's shims, nothing: ok with a
// zero Version means "a python of unknown version" (a shim or a launcher
// named python).
func PythonOf(path string) (v Version, ok bool) { return pythonOf(path, 0) }

func pythonOf(path string, depth int) (v Version, ok bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	byName := func(p string) (Version, bool) {
		if m := pythonName.FindStringSubmatch(filepath.Base(p)); m != nil {
			return parseVersion(m[1], m[2]), true
		}
		if m := libPython.FindStringSubmatch(filepath.Base(p)); m != nil {
			return parseVersion(m[1], m[2]), true
		}
		return Version{}, false
	}
	f, err := elf.Open(real)
	if err != nil {
		// A script whose #! line names python runs that python; a
		// pyenv shim (a shell script) or anything unreadable has only
		// its name.
		if in := scriptInterpreter(real); in != "" && depth < 2 {
			if p, err := lookPath(in); err == nil && filepath.Base(p) != filepath.Base(path) {
				if v, ok := pythonOf(p, depth+1); ok {
					return v, true
				}
			}
		}
		if v, ok := byName(real); ok {
			return v, true
		}
		if v, ok := byName(path); ok {
			return v, true
		}
		base := filepath.Base(path)
		return Version{}, base == "python" || base == "python3"
	}
	defer f.Close()
	// The dynamic symbols only, read once: a CPython executable exports
	// its API there for extension modules (Debian's stripped python3
	// too), and any program cctop launches passes through here, where
	// reading a large .symtab would delay every launch.
	dyn, _ := f.DynamicSymbols()
	if v, ok := pyVersionSymbol(f, dyn); ok {
		return v, true
	}
	if libs, err := f.ImportedLibraries(); err == nil {
		for _, l := range libs {
			if m := libPython.FindStringSubmatch(l); m != nil {
				return parseVersion(m[1], m[2]), true
			}
		}
	}
	if defines(dyn, "Py_Initialize") || defines(dyn, "_PyRuntime") {
		if v, ok := byName(real); ok {
			return v, true
		}
		return Version{}, true
	}
	return Version{}, false
}

func parseVersion(major, minor string) Version {
	a, _ := strconv.Atoi(major)
	b, _ := strconv.Atoi(minor)
	return Version{a, b}
}

// pyVersionSymbol reads Py_Version (PY_VERSION_HEX, 0xMMmmppXX) from the
// file's data, where its dynamic symbols syms name it.
func pyVersionSymbol(f *elf.File, syms []elf.Symbol) (Version, bool) {
	for _, s := range syms {
		if s.Name != "Py_Version" || s.Size != 4 || s.Section == elf.SHN_UNDEF {
			continue
		}
		for _, p := range f.Progs {
			if p.Type != elf.PT_LOAD || s.Value < p.Vaddr || s.Value+4 > p.Vaddr+p.Filesz {
				continue
			}
			var b [4]byte
			if _, err := p.ReadAt(b[:], int64(s.Value-p.Vaddr)); err != nil {
				return Version{}, false
			}
			hex := f.ByteOrder.Uint32(b[:])
			v := Version{int(hex >> 24), int(hex >> 16 & 0xff)}
			return v, v.Major == 3
		}
	}
	return Version{}, false
}

// defines reports whether syms define name.
func defines(syms []elf.Symbol, name string) bool {
	for _, s := range syms {
		if s.Name == name && s.Section != elf.SHN_UNDEF {
			return true
		}
	}
	return false
}

// scriptInterpreter is the program a script's #! line names, "" for
// none; "/usr/bin/env python3" gives python3.
func scriptInterpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, maxScript)
	n, _ := f.Read(b)
	b = b[:n]
	if !bytes.HasPrefix(b, []byte("#!")) {
		return ""
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	fields := strings.Fields(string(b[2:]))
	if len(fields) == 0 {
		return ""
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		return fields[1]
	}
	return fields[0]
}

// lookPath finds a #! line's program: a path as it is, a name on PATH.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	return exec.LookPath(name)
}
