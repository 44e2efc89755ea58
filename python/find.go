package python

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/cctop/cctop/lang"
)

// Interpreter is a CPython found in a process: the file that holds it (the
// executable, or its libpython), its version and layout, and the addresses
// of what a reader starts from and checks against.
type Interpreter struct {
	PID     int
	Module  string // the ELF file with _PyRuntime, as the process maps it
	Version lang.Version
	Layout  Layout
	// Runtime is _PyRuntime's address in the process.
	Runtime uint64
	// The type objects of code, str and bytes objects (0 where the
	// dynamic symbols do not name them): a pointer the target's memory
	// gives is used as one of those only if its ob_type says so.
	CodeType, StrType, BytesType uint64
	// tidOffset is where the C library keeps a thread's kernel id in its
	// struct pthread, for 3.9 and 3.10: 0 until found, -1 if not found.
	tidOffset int
}

// ErrNotPython: the process runs no CPython this package can find.
var ErrNotPython = errors.New("not a CPython process")

// notYet marks what may change in a moment: a process whose dynamic
// loader is still mapping and relocating the interpreter.
type notYet struct{ error }

func (e notYet) Unwrap() error { return e.error }

// NotYet says whether Find's err may go away if asked again.
func NotYet(err error) bool {
	var n notYet
	return errors.As(err, &n) || errors.Is(err, ErrNotPython)
}

// interpreterFile: an ELF that may hold the interpreter, by name.
var interpreterFile = regexp.MustCompile(`^(lib)?python\d(\.\d+)?[a-z]*(\.so[.\d]*)?$`)

// mapping is a line of /proc/PID/maps.
type mapping struct {
	start, end, offset uint64
	path               string
}

// readMaps reads the file mappings of pid.
func readMaps(pid int) ([]mapping, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/maps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || end <= start {
			continue
		}
		out = append(out, mapping{start, end, off, strings.Join(fields[5:], " ")})
	}
	return out, sc.Err()
}

// Find looks for a CPython in pid: a mapped file named as CPython's
// executable or library (python3.11, libpython3.12.so.1.0) whose dynamic
// symbols define _PyRuntime, and reads its layout: from the tables of
// 3.9–3.12, or from the _Py_DebugOffsets that 3.13+ keeps at the start of
// _PyRuntime. A process with no such file is ErrNotPython; one whose layout is
// not known or not readable is an error that says why, in one line.
func Find(pid int, mem Memory) (*Interpreter, error) {
	maps, err := readMaps(pid)
	if err != nil {
		// Gone, or not ours to read: the symbols say so, for any
		// program.
		return nil, ErrNotPython
	}
	seen := map[string]bool{}
	var firstErr error
	for _, m := range maps {
		if seen[m.path] || !interpreterFile.MatchString(filepath.Base(m.path)) {
			continue
		}
		seen[m.path] = true
		in, err := findIn(pid, m.path, maps, mem)
		if err == nil {
			return in, nil
		}
		if !errors.Is(err, ErrNotPython) && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, ErrNotPython
}

// findIn reads path's dynamic symbols for _PyRuntime and the types.
func findIn(pid int, path string, maps []mapping, mem Memory) (*Interpreter, error) {
	// The process's view of the file: its mount namespace may differ.
	f, err := elf.Open("/proc/" + strconv.Itoa(pid) + "/root" + path)
	if err != nil {
		if f, err = elf.Open(path); err != nil {
			return nil, fmt.Errorf("python: %s: %v", filepath.Base(path), err)
		}
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, ErrNotPython
	}
	want := map[string]uint64{"_PyRuntime": 0, "PyCode_Type": 0, "PyUnicode_Type": 0, "PyBytes_Type": 0, "Py_Version": 0}
	for _, s := range syms {
		if _, ok := want[s.Name]; ok && s.Section != elf.SHN_UNDEF && s.Value != 0 {
			want[s.Name] = s.Value
		}
	}
	if want["_PyRuntime"] == 0 {
		return nil, ErrNotPython
	}
	in := &Interpreter{PID: pid, Module: path}
	addr := func(name string) uint64 {
		v := want[name]
		if v == 0 {
			return 0
		}
		return loadedAddr(f, v, path, maps)
	}
	in.Runtime = addr("_PyRuntime")
	if in.Runtime == 0 {
		return nil, fmt.Errorf("python: %s: _PyRuntime is not mapped", filepath.Base(path))
	}
	in.CodeType, in.StrType, in.BytesType = addr("PyCode_Type"), addr("PyUnicode_Type"), addr("PyBytes_Type")
	if !segmentMapped(f, want["_PyRuntime"], path, maps) {
		// Found while the dynamic loader maps it: looked at again.
		return nil, ErrNotPython
	}
	v, ok := lang.PythonOf(path)
	if !ok || v.Major == 0 {
		return nil, fmt.Errorf("python: %s: version not known", filepath.Base(path))
	}
	in.Version = v
	if err := in.readLayout(mem); err != nil {
		return nil, err
	}
	if err := in.checkTypes(mem); err != nil {
		return nil, err
	}
	return in, nil
}

// segmentMapped says whether the load segment that holds vaddr is mapped
// from its own place in the file (its zero-filled end, where _PyRuntime
// may be, follows that mapping).
func segmentMapped(f *elf.File, vaddr uint64, path string, maps []mapping) bool {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || vaddr < p.Vaddr || vaddr >= p.Vaddr+p.Memsz {
			continue
		}
		for _, m := range maps {
			if m.path == path && m.offset == p.Off&^(pageSize-1) {
				return true
			}
		}
	}
	return false
}

// checkTypes reads the names of the type objects found: "code", "str"
// and "bytes", or the addresses (or the layout) are not this process's.
func (in *Interpreter) checkTypes(mem Memory) error {
	for _, c := range []struct {
		addr *uint64
		name string
	}{{&in.CodeType, "code"}, {&in.StrType, "str"}, {&in.BytesType, "bytes"}} {
		if *c.addr == 0 {
			continue
		}
		var w [8]byte
		if err := mem.ReadAt(w[:], *c.addr+in.Layout.TypeName); err != nil {
			return notYet{fmt.Errorf("python %s: reading the %s type: %v", in.Version, c.name, err)}
		}
		var name [8]byte
		if err := mem.ReadAt(name[:len(c.name)+1], le64(w[:], 0)); err != nil || string(name[:len(c.name)+1]) != c.name+"\x00" {
			return notYet{fmt.Errorf("python %s: the %s type is not where its symbol says", in.Version, c.name)}
		}
	}
	return nil
}

// readLayout takes the version's table, or its debug offsets.
func (in *Interpreter) readLayout(mem Memory) error {
	if l, ok := layoutFor(in.Version); ok {
		in.Layout = l
		return nil
	}
	if !in.Version.AtLeast(3, 13) {
		return fmt.Errorf("python %s: layout not known to this cctop (3.9 to 3.13 are)", in.Version)
	}
	b := make([]byte, debugOffsetsSize)
	if err := mem.ReadAt(b, in.Runtime); err != nil {
		return fmt.Errorf("python %s: reading _Py_DebugOffsets: %v", in.Version, err)
	}
	l, err := parseDebugOffsets(b, in.Version)
	if err != nil {
		return fmt.Errorf("python %s: %v", in.Version, err)
	}
	in.Layout = l
	return nil
}

// loadedAddr is where the ELF virtual address vaddr of the file at path is
// in the process: the file's load bias, from the mapping of its first
// bytes, plus vaddr. Not from the mapping that holds vaddr's page: while
// the dynamic loader works, one mapping of the whole file at its first
// segment's place stands where the others will be.
func loadedAddr(f *elf.File, vaddr uint64, path string, maps []mapping) uint64 {
	var first *elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			first = p
			break
		}
	}
	if first == nil || first.Off != 0 {
		return 0
	}
	for _, m := range maps {
		if m.path == path && m.offset == 0 {
			return m.start - first.Vaddr&^(pageSize-1) + vaddr
		}
	}
	return 0
}
