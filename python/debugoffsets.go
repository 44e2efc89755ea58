package python

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/cctop/cctop/lang"
)

// From 3.13, _PyRuntime starts with _Py_DebugOffsets
// (Include/internal/pycore_runtime.h, filled in by _PyRuntimeState_INIT of
// pycore_runtime_init.h): a cookie, PY_VERSION_HEX, whether the build is
// free-threaded, then one group of uint64s per struct, each starting with
// the struct's sizeof and going on with offsetofs. The interpreter thereby
// tells a debugger its layout, so that builds with other options (or
// patches) are read right without a table. Its own layout is only stable
// within a minor version (3.14's is another, larger one), so the parser
// knows 3.13's.

// debugOffsetsSize is how much of _PyRuntime to read:
// sizeof(_Py_DebugOffsets) of 3.13, that is 8+8+8 and 70 uint64s of groups.
const debugOffsetsSize = 584

const debugCookie = "xdebugpy" // _Py_Debug_Cookie

// maxStructSize bounds every size the target reports. The largest struct
// described, _PyRuntimeState, is under 300 KiB in 3.13; a size past this is
// bytes that are not debug offsets, and bounding the sizes bounds every
// offset the reader will ever add to an address.
const maxStructSize = 1 << 20

// debugGroup is one struct's group in _Py_DebugOffsets: its name and the
// names of its offsets, in order, after the leading size.
type debugGroup struct {
	name    string
	offsets []string
}

// debugGroups313 are the groups of 3.13.0's _Py_DebugOffsets, named as in
// the header, after cookie, version and free_threaded.
var debugGroups313 = []debugGroup{
	{"runtime_state", []string{"finalizing", "interpreters_head"}},
	{"interpreter_state", []string{"id", "next", "threads_head", "gc", "imports_modules", "sysdict", "builtins",
		"ceval_gil", "gil_runtime_state", "gil_runtime_state_enabled", "gil_runtime_state_locked", "gil_runtime_state_holder"}},
	{"thread_state", []string{"prev", "next", "interp", "current_frame", "thread_id", "native_thread_id",
		"datastack_chunk", "status"}},
	{"interpreter_frame", []string{"previous", "executable", "instr_ptr", "localsplus", "owner"}},
	{"code_object", []string{"filename", "name", "qualname", "linetable", "firstlineno", "argcount",
		"localsplusnames", "localspluskinds", "co_code_adaptive"}},
	{"pyobject", []string{"ob_type"}},
	{"type_object", []string{"tp_name", "tp_repr", "tp_flags"}},
	{"tuple_object", []string{"ob_item", "ob_size"}},
	{"list_object", []string{"ob_item", "ob_size"}},
	{"dict_object", []string{"ma_keys", "ma_values"}},
	{"float_object", []string{"ob_fval"}},
	{"long_object", []string{"lv_tag", "ob_digit"}},
	{"bytes_object", []string{"ob_size", "ob_sval"}},
	{"unicode_object", []string{"state", "length", "asciiobject_size"}},
	{"gc", []string{"collecting"}},
}

// parseDebugOffsets builds the layout of CPython v (3.13 only) from the
// first debugOffsetsSize bytes of its _PyRuntime, as read from the target.
// Those bytes are the target's, not ours: every size is bounded and every
// offset must lie within its struct before it is used, so that no field of
// the result sends the reader outside the object it reads.
func parseDebugOffsets(b []byte, v lang.Version) (Layout, error) {
	d, err := debugOffsetsTable(b, v)
	if err != nil {
		return Layout{}, err
	}
	field := d.fieldFunc(&err)
	// within checks a bound between fields, which field cannot.
	within := func(name string, end, limit uint64, of string) {
		if err == nil && end > limit {
			err = fmt.Errorf("debug offsets: %s ends at %d, past %s (%d)", name, end, of, limit)
		}
	}

	l := Layout{Version: v}
	l.RuntimeInterpretersHead = field("runtime_state.interpreters_head", 8)

	l.InterpNext = field("interpreter_state.next", 8)
	l.InterpThreadsHead = field("interpreter_state.threads_head", 8)

	l.TstateNext = field("thread_state.next", 8)
	l.TstateNativeThreadID = field("thread_state.native_thread_id", 8) // unsigned long
	l.TstateThreadID = field("thread_state.thread_id", 8)              // unsigned long
	// 3.13 drops _PyCFrame: the thread state points at the innermost
	// _PyInterpreterFrame itself.
	l.TstateFrame = field("thread_state.current_frame", 8)

	// _PyInterpreterFrame: previous, f_executable and instr_ptr are
	// pointers, owner a char; IFrameSize ends at the last of them
	// (owner, in 3.13.0: the frame is read up to its locals).
	l.IFramePrevious = field("interpreter_frame.previous", 8)
	l.IFrameCode = field("interpreter_frame.executable", 8)
	l.IFrameInstr = field("interpreter_frame.instr_ptr", 8)
	l.IFrameOwner = field("interpreter_frame.owner", 1)
	l.IFrameSize = max(l.IFramePrevious+8, l.IFrameCode+8, l.IFrameInstr+8, l.IFrameOwner+1)
	// instr_ptr is the instruction executing or about to, where 3.11 and
	// 3.12 kept the code unit before it.
	l.InstrIsNext = true

	// PyCodeObject: the str and bytes pointers and the int co_firstlineno;
	// CodeSize ends at the last of those or of ob_type, which the reader
	// checks from the same read. co_code_adaptive (a char array) is only
	// an address to measure the instruction pointer from, so it need not
	// be read, only lie within the object.
	l.ObjectType = field("pyobject.ob_type", 8)
	l.CodeFilename = field("code_object.filename", 8)
	l.CodeName = field("code_object.name", 8)
	l.CodeQualname = field("code_object.qualname", 8)
	l.CodeLinetable = field("code_object.linetable", 8)
	l.CodeFirstLineno = field("code_object.firstlineno", 4)
	l.CodeAdaptive = field("code_object.co_code_adaptive", 1)
	l.CodeSize = max(l.ObjectType+8, l.CodeFilename+8, l.CodeName+8, l.CodeQualname+8, l.CodeLinetable+8, l.CodeFirstLineno+4)

	l.TypeName = field("type_object.tp_name", 8)

	l.BytesSize = field("bytes_object.ob_size", 8)
	l.BytesData = field("bytes_object.ob_sval", 1)

	// The debug offsets carry sizeof(PyASCIIObject) but not
	// sizeof(PyCompactUnicodeObject): in 3.13 the latter is the former
	// and a Py_ssize_t utf8_length and a char *utf8
	// (Include/cpython/unicodeobject.h), and a PyUnicodeObject starts with
	// it. state is an unsigned int of bit fields.
	l.UnicodeState = field("unicode_object.state", 4)
	l.UnicodeLength = field("unicode_object.length", 8)
	l.ASCIISize = d["unicode_object.asciiobject_size"]
	l.CompactSize = l.ASCIISize + 8 + 8
	within("unicode_object.state", l.UnicodeState+4, l.ASCIISize, "unicode_object.asciiobject_size")
	within("unicode_object.length", l.UnicodeLength+8, l.ASCIISize, "unicode_object.asciiobject_size")
	within("PyCompactUnicodeObject (unicode_object.asciiobject_size+16)", l.CompactSize, d["unicode_object.size"], "unicode_object.size")

	// The reader reads a str's header up to its characters and a bytes
	// object's up to its data, and checks each one's type (and a code
	// object's) from the same read.
	within("bytes_object.ob_size", l.BytesSize+8, l.BytesData, "bytes_object.ob_sval")
	within("pyobject.ob_type", l.ObjectType+8, l.BytesData, "bytes_object.ob_sval")
	within("pyobject.ob_type", l.ObjectType+8, l.ASCIISize, "unicode_object.asciiobject_size")
	within("pyobject.ob_type", l.ObjectType+8, d["code_object.size"], "code_object.size")

	if err != nil {
		return Layout{}, err
	}
	return l, nil
}

// debugTable is a _Py_DebugOffsets read and checked: each struct's size
// ("group.size") and offsets ("group.field") by name.
type debugTable map[string]uint64

// debugOffsetsTable checks the first debugOffsetsSize bytes of a 3.13
// _PyRuntime (cookie, version, no free threading) and reads their groups,
// each size bounded and each offset within its struct.
func debugOffsetsTable(b []byte, v lang.Version) (debugTable, error) {
	if v != (lang.Version{Major: 3, Minor: 13}) {
		return nil, fmt.Errorf("CPython %s: layout not known to this cctop", v)
	}
	if len(b) < debugOffsetsSize {
		return nil, fmt.Errorf("debug offsets: %d bytes, not %d", len(b), debugOffsetsSize)
	}
	if string(b[:8]) != debugCookie {
		return nil, fmt.Errorf("debug offsets: cookie %q, not %q", b[:8], debugCookie)
	}
	// PY_VERSION_HEX is 0xMMmmppLS; the patch level does not change the
	// layout.
	hex := binary.LittleEndian.Uint64(b[8:])
	if major, minor := hex>>24, hex>>16&0xff; major != uint64(v.Major) || minor != uint64(v.Minor) {
		return nil, fmt.Errorf("debug offsets: of CPython %d.%d, not %s", major, minor, v)
	}
	if binary.LittleEndian.Uint64(b[16:]) != 0 {
		// Other offsets (a larger PyObject header, for a start), and
		// stacks that change under a reader that holds no lock.
		return nil, fmt.Errorf("free-threaded build: not supported")
	}

	d := make(debugTable, 90)
	at := 24
	next := func() uint64 {
		x := binary.LittleEndian.Uint64(b[at:])
		at += 8
		return x
	}
	for _, g := range debugGroups313 {
		size := next()
		if size == 0 || size >= maxStructSize {
			return nil, fmt.Errorf("debug offsets: %s.size is %d, not a plausible struct size", g.name, size)
		}
		d[g.name+".size"] = size
		for _, f := range g.offsets {
			off := next()
			if off >= size {
				return nil, fmt.Errorf("debug offsets: %s.%s is %d, past the struct's %d bytes", g.name, f, off, size)
			}
			d[g.name+"."+f] = off
		}
	}
	return d, nil
}

// fieldFunc is a reader of offsets the reader uses, whose width bytes
// must lie within the struct too, not only its first byte: the first that
// does not sets *err, and the others are then not checked.
func (d debugTable) fieldFunc(err *error) func(name string, width uint64) uint64 {
	return func(name string, width uint64) uint64 {
		group, _, _ := strings.Cut(name, ".")
		off, ok := d[name]
		size := d[group+".size"]
		switch {
		case *err != nil:
		case !ok:
			*err = fmt.Errorf("debug offsets: no field %s", name)
		case off+width > size:
			*err = fmt.Errorf("debug offsets: %s is %d, its %d bytes end past the struct's %d", name, off, width, size)
		}
		return off
	}
}

// namesLayout313 is the namesLayout of CPython 3.13 (threadnames.go), from
// the same bytes as its Layout: what _Py_DebugOffsets carries (where
// sys.modules is in the interpreter state, a dict's ma_keys and ma_values,
// an int's lv_tag and digits, a type's tp_flags), and the rest as 3.13's
// headers have it (Include/internal/pycore_dict.h, pycore_object.h,
// pycore_moduleobject.h, Include/cpython/object.h, of a build with the
// GIL: _Py_DebugOffsets says so), which layout_headers_test.go checks.
func namesLayout313(b []byte, v lang.Version) (namesLayout, error) {
	d, err := debugOffsetsTable(b, v)
	if err != nil {
		return namesLayout{}, err
	}
	field := d.fieldFunc(&err)
	nl := names313
	nl.InterpModules = field("interpreter_state.imports_modules", 8)
	nl.DictKeys = field("dict_object.ma_keys", 8)
	nl.DictValues = field("dict_object.ma_values", 8)
	nl.LongSize = field("long_object.lv_tag", 8)
	// The digits are read past the struct's size (ob_digit[1] counts one),
	// as many as the tag says: the first must lie within it.
	nl.LongDigits = field("long_object.ob_digit", 4)
	nl.TypeFlags = field("type_object.tp_flags", 8)
	if err == nil && nl.LongSize+8 > nl.LongDigits {
		err = fmt.Errorf("debug offsets: long_object.lv_tag ends at %d, past long_object.ob_digit (%d)", nl.LongSize+8, nl.LongDigits)
	}
	if err != nil {
		return namesLayout{}, err
	}
	return nl, nil
}
