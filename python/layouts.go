package python

import "github.com/cctop/cctop/lang"

// The layouts of CPython 3.9 to 3.12, which do not describe themselves to
// a debugger (3.13 does: debugoffsets.go). Each number is what gcc makes of
// offsetof or sizeof against the headers of the release build (3.9.18,
// 3.10.13, 3.11.7, 3.12.1; GIL, not Py_DEBUG, LP64), and
// layout_headers_test.go compiles the same expressions again against
// whatever builds are installed. Within a minor version the structs are
// stable across patch releases, which is what makes a table per minor
// version enough.
//
// Paths are those of the CPython source tree (installed under
// include/python3.X). A zero is sometimes a real offset (a struct's first
// field: PyInterpreterState.next, _PyInterpreterFrame.f_code in 3.12);
// which fields a version lacks is said by the version, not by the zero.
//
// IFrameSize and CodeSize end at the last field the reader reads of a
// frame or a code object (the code object's ob_type included: its type is
// checked from the same read). co_code_adaptive is not among them: it is
// only the address an instruction pointer is measured from, past the
// fields the reader needs, so counting it would read more for nothing.

// layoutFor is the layout of a release build of CPython v, for 3.9 to 3.12.
func layoutFor(v lang.Version) (Layout, bool) {
	if v.Major != 3 {
		return Layout{}, false
	}
	switch v.Minor {
	case 9:
		return layout39, true
	case 10:
		return layout310, true
	case 11:
		return layout311, true
	case 12:
		return layout312, true
	}
	return Layout{}, false
}

// Shared by every version read here: the object headers of
// Include/object.h (PyObject.ob_type, PyVarObject.ob_size), PyTypeObject
// (Include/cpython/object.h) and PyBytesObject (Include/cpython/bytesobject.h)
// have not moved from 3.9 to 3.13.

var layout39 = Layout{
	Version: lang.Version{Major: 3, Minor: 9},

	RuntimeInterpretersHead: 32, // Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head

	InterpNext:        0, // Include/internal/pycore_interp.h: struct _is.next
	InterpThreadsHead: 8, // Include/internal/pycore_interp.h: struct _is.tstate_head

	TstateNext:     8,   // Include/cpython/pystate.h: struct _ts.next
	TstateThreadID: 176, // Include/cpython/pystate.h: struct _ts.thread_id
	TstateFrame:    24,  // Include/cpython/pystate.h: struct _ts.frame

	FrameObjects: true,
	FrameBack:    24,  // Include/cpython/frameobject.h: struct _frame.f_back
	FrameCode:    32,  // Include/cpython/frameobject.h: struct _frame.f_code
	FrameLasti:   104, // Include/cpython/frameobject.h: struct _frame.f_lasti (int, a byte offset)

	CodeFilename:    104, // Include/cpython/code.h: PyCodeObject.co_filename
	CodeName:        112, // Include/cpython/code.h: PyCodeObject.co_name
	CodeFirstLineno: 40,  // Include/cpython/code.h: PyCodeObject.co_firstlineno (int)
	CodeLinetable:   120, // Include/cpython/code.h: PyCodeObject.co_lnotab
	CodeSize:        128, // end of co_lnotab

	UnicodeState:  32, // Include/cpython/unicodeobject.h: PyASCIIObject.state
	UnicodeLength: 16, // Include/cpython/unicodeobject.h: PyASCIIObject.length
	ASCIISize:     48, // sizeof(PyASCIIObject): with wstr
	CompactSize:   72, // sizeof(PyCompactUnicodeObject): with wstr_length

	BytesSize: 16, // PyBytesObject.ob_base.ob_size
	BytesData: 32, // PyBytesObject.ob_sval

	ObjectType: 8,  // PyObject.ob_type
	TypeName:   24, // PyTypeObject.tp_name
}

// 3.10 moves f_lasti, now an index of 2-byte code units, and replaces
// co_lnotab by co_linetable in the same place.
var layout310 = Layout{
	Version: lang.Version{Major: 3, Minor: 10},

	RuntimeInterpretersHead: 32, // Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head

	InterpNext:        0, // Include/internal/pycore_interp.h: struct _is.next
	InterpThreadsHead: 8, // Include/internal/pycore_interp.h: struct _is.tstate_head

	TstateNext:     8,   // Include/cpython/pystate.h: struct _ts.next
	TstateThreadID: 176, // Include/cpython/pystate.h: struct _ts.thread_id
	TstateFrame:    24,  // Include/cpython/pystate.h: struct _ts.frame

	FrameObjects: true,
	FrameBack:    24, // Include/cpython/frameobject.h: struct _frame.f_back
	FrameCode:    32, // Include/cpython/frameobject.h: struct _frame.f_code
	FrameLasti:   96, // Include/cpython/frameobject.h: struct _frame.f_lasti (int, code units)

	CodeFilename:    104, // Include/cpython/code.h: PyCodeObject.co_filename
	CodeName:        112, // Include/cpython/code.h: PyCodeObject.co_name
	CodeFirstLineno: 40,  // Include/cpython/code.h: PyCodeObject.co_firstlineno (int)
	CodeLinetable:   120, // Include/cpython/code.h: PyCodeObject.co_linetable
	CodeSize:        128, // end of co_linetable

	UnicodeState:  32, // Include/cpython/unicodeobject.h: PyASCIIObject.state
	UnicodeLength: 16, // Include/cpython/unicodeobject.h: PyASCIIObject.length
	ASCIISize:     48, // sizeof(PyASCIIObject): with wstr
	CompactSize:   72, // sizeof(PyCompactUnicodeObject): with wstr_length

	BytesSize: 16, // PyBytesObject.ob_base.ob_size
	BytesData: 32, // PyBytesObject.ob_sval

	ObjectType: 8,  // PyObject.ob_type
	TypeName:   24, // PyTypeObject.tp_name
}

// 3.11: frames become _PyInterpreterFrames, reached through the thread's
// _PyCFrame, and the interpreter's threads move into a struct pythreads.
var layout311 = Layout{
	Version: lang.Version{Major: 3, Minor: 11},

	RuntimeInterpretersHead: 40, // Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head

	InterpNext:        0,  // Include/internal/pycore_interp.h: struct _is.next
	InterpThreadsHead: 16, // Include/internal/pycore_interp.h: struct _is.threads.head (no tstate_head any more)

	TstateNext:           8,   // Include/cpython/pystate.h: struct _ts.next
	TstateNativeThreadID: 160, // Include/cpython/pystate.h: struct _ts.native_thread_id
	TstateThreadID:       152, // Include/cpython/pystate.h: struct _ts.thread_id
	TstateCFrame:         56,  // Include/cpython/pystate.h: struct _ts.cframe
	CFrameCurrentFrame:   8,   // Include/cpython/pystate.h: _PyCFrame.current_frame (after int use_tracing)

	IFramePrevious: 48, // Include/internal/pycore_frame.h: _PyInterpreterFrame.previous
	IFrameCode:     32, // Include/internal/pycore_frame.h: _PyInterpreterFrame.f_code
	IFrameInstr:    56, // Include/internal/pycore_frame.h: _PyInterpreterFrame.prev_instr
	IFrameIsEntry:  68, // Include/internal/pycore_frame.h: _PyInterpreterFrame.is_entry (bool)
	IFrameOwner:    69, // Include/internal/pycore_frame.h: _PyInterpreterFrame.owner (char)
	IFrameSize:     70, // end of owner

	CodeFilename:    112, // Include/cpython/code.h: PyCodeObject.co_filename
	CodeName:        120, // Include/cpython/code.h: PyCodeObject.co_name
	CodeQualname:    128, // Include/cpython/code.h: PyCodeObject.co_qualname
	CodeFirstLineno: 72,  // Include/cpython/code.h: PyCodeObject.co_firstlineno (int)
	CodeLinetable:   136, // Include/cpython/code.h: PyCodeObject.co_linetable
	CodeAdaptive:    184, // Include/cpython/code.h: PyCodeObject.co_code_adaptive
	CodeSize:        144, // end of co_linetable; co_code_adaptive is where instructions are, not read

	UnicodeState:  32, // Include/cpython/unicodeobject.h: PyASCIIObject.state
	UnicodeLength: 16, // Include/cpython/unicodeobject.h: PyASCIIObject.length
	ASCIISize:     48, // sizeof(PyASCIIObject): with wstr
	CompactSize:   72, // sizeof(PyCompactUnicodeObject): with wstr_length

	BytesSize: 16, // PyBytesObject.ob_base.ob_size
	BytesData: 32, // PyBytesObject.ob_sval

	ObjectType: 8,  // PyObject.ob_type
	TypeName:   24, // PyTypeObject.tp_name
}

// 3.12: is_entry gives way to the owner FRAME_OWNED_BY_CSTACK; the frame's
// fields and co_firstlineno move; str loses wstr, so both str headers
// shrink.
var layout312 = Layout{
	Version: lang.Version{Major: 3, Minor: 12},

	RuntimeInterpretersHead: 40, // Include/internal/pycore_runtime.h: _PyRuntimeState.interpreters.head

	InterpNext:        0,  // Include/internal/pycore_interp.h: struct _is.next
	InterpThreadsHead: 72, // Include/internal/pycore_interp.h: struct _is.threads.head

	TstateNext:           8,   // Include/cpython/pystate.h: struct _ts.next
	TstateNativeThreadID: 144, // Include/cpython/pystate.h: struct _ts.native_thread_id
	TstateThreadID:       136, // Include/cpython/pystate.h: struct _ts.thread_id
	TstateCFrame:         56,  // Include/cpython/pystate.h: struct _ts.cframe
	CFrameCurrentFrame:   0,   // Include/cpython/pystate.h: _PyCFrame.current_frame (use_tracing is gone)

	IFramePrevious: 8,  // Include/internal/pycore_frame.h: _PyInterpreterFrame.previous
	IFrameCode:     0,  // Include/internal/pycore_frame.h: _PyInterpreterFrame.f_code
	IFrameInstr:    56, // Include/internal/pycore_frame.h: _PyInterpreterFrame.prev_instr
	IFrameOwner:    70, // Include/internal/pycore_frame.h: _PyInterpreterFrame.owner (char)
	IFrameSize:     71, // end of owner

	CodeFilename:    112, // Include/cpython/code.h: PyCodeObject.co_filename
	CodeName:        120, // Include/cpython/code.h: PyCodeObject.co_name
	CodeQualname:    128, // Include/cpython/code.h: PyCodeObject.co_qualname
	CodeFirstLineno: 68,  // Include/cpython/code.h: PyCodeObject.co_firstlineno (int)
	CodeLinetable:   136, // Include/cpython/code.h: PyCodeObject.co_linetable
	CodeAdaptive:    192, // Include/cpython/code.h: PyCodeObject.co_code_adaptive
	CodeSize:        144, // end of co_linetable; co_code_adaptive is where instructions are, not read

	UnicodeState:  32, // Include/cpython/unicodeobject.h: PyASCIIObject.state
	UnicodeLength: 16, // Include/cpython/unicodeobject.h: PyASCIIObject.length
	ASCIISize:     40, // sizeof(PyASCIIObject): no wstr
	CompactSize:   56, // sizeof(PyCompactUnicodeObject): no wstr_length

	BytesSize: 16, // PyBytesObject.ob_base.ob_size
	BytesData: 32, // PyBytesObject.ob_sval

	ObjectType: 8,  // PyObject.ob_type
	TypeName:   24, // PyTypeObject.tp_name
}

// namesLayoutFor is the namesLayout (threadnames.go) of a release build of
// CPython v, for 3.9 to 3.12; 3.13's is namesLayout313, from its debug
// offsets and names313.
func namesLayoutFor(v lang.Version) (namesLayout, bool) {
	if v.Major != 3 {
		return namesLayout{}, false
	}
	switch v.Minor {
	case 9:
		return names39, true
	case 10:
		return names310, true
	case 11:
		return names311, true
	case 12:
		return names312, true
	}
	return namesLayout{}, false
}

// What ThreadNames reads of 3.9 and 3.10. The dict keys object is
// Objects/dict-common.h's, a private header that is not installed (nor
// before 3.10 is PyModuleObject, of Objects/moduleobject.c): the numbers
// are gcc's of the release's source, as layout_headers_test.go declares
// it again, and the live test reads them at work. An instance's __dict__
// is a pointer at tp_dictoffset.
var names39 = namesLayout{
	InterpModules: 856, // Include/internal/pycore_interp.h: struct _is.modules

	ModuleDict: 16, // Objects/moduleobject.c: PyModuleObject.md_dict

	DictKeys:   32, // Include/cpython/dictobject.h: PyDictObject.ma_keys
	DictValues: 40, // Include/cpython/dictobject.h: PyDictObject.ma_values (PyObject **)

	KeysSize:     8,  // Objects/dict-common.h: struct _dictkeysobject.dk_size (Py_ssize_t)
	KeysNentries: 32, // Objects/dict-common.h: struct _dictkeysobject.dk_nentries
	KeysIndices:  40, // Objects/dict-common.h: struct _dictkeysobject.dk_indices

	EntrySize:  24, // Objects/dict-common.h: sizeof(PyDictKeyEntry): me_hash, me_key, me_value
	EntryKey:   8,
	EntryValue: 16,

	LongSize:   16, // Include/longintrepr.h: PyLongObject.ob_base.ob_size (signed: the number of digits)
	LongDigits: 24, // Include/longintrepr.h: PyLongObject.ob_digit (30-bit digits in uint32s)

	TypeFlags:      168, // Include/cpython/object.h: PyTypeObject.tp_flags
	TypeDictOffset: 288, // Include/cpython/object.h: PyTypeObject.tp_dictoffset
}

// 3.10: as 3.9 (PyModuleObject is now in
// Include/internal/pycore_moduleobject.h).
var names310 = names39

// 3.11: a dict's keys object says the log2 of its size and its kind, and
// keys that are all str have entries of two pointers; an instance of a
// class keeps its attributes before its header, as values (with its
// class's shared keys) or as a dict.
var names311 = namesLayout{
	InterpModules: 888, // Include/internal/pycore_interp.h: struct _is.modules

	ModuleDict: 16, // Include/internal/pycore_moduleobject.h: PyModuleObject.md_dict

	DictKeys:   32, // Include/cpython/dictobject.h: PyDictObject.ma_keys
	DictValues: 40, // Include/cpython/dictobject.h: PyDictObject.ma_values (PyDictValues *)

	KeysLog2:           true,
	KeysSize:           8,  // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_log2_size (uint8_t)
	KeysLog2IndexBytes: 9,  // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_log2_index_bytes (uint8_t)
	KeysKind:           10, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_kind (uint8_t)
	KeysNentries:       24, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_nentries
	KeysIndices:        32, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_indices

	EntrySize:         24, // Include/internal/pycore_dict.h: sizeof(PyDictKeyEntry): me_hash, me_key, me_value
	EntryKey:          8,
	EntryValue:        16,
	UnicodeEntrySize:  16, // Include/internal/pycore_dict.h: sizeof(PyDictUnicodeEntry): me_key, me_value
	UnicodeEntryKey:   0,
	UnicodeEntryValue: 8,

	ValuesValues: 0, // Include/internal/pycore_dict.h: struct _dictvalues.values

	LongSize:   16, // Include/cpython/longintrepr.h: PyLongObject.ob_base.ob_size
	LongDigits: 24, // Include/cpython/longintrepr.h: PyLongObject.ob_digit

	TypeFlags:          168, // Include/cpython/object.h: PyTypeObject.tp_flags
	TypeDictOffset:     288, // Include/cpython/object.h: PyTypeObject.tp_dictoffset
	HeapTypeCachedKeys: 872, // Include/cpython/object.h: PyHeapTypeObject.ht_cached_keys

	ManagedDict:   24, // Include/internal/pycore_object.h: _PyObject_ManagedDictPointer, ((PyObject **)obj)-3
	ManagedValues: 32, // Include/internal/pycore_object.h: _PyObject_ValuesPointer, ((PyDictValues **)obj)-4
}

// 3.12: sys.modules moves into the interpreter's imports; an int's size
// becomes lv_tag; an instance keeps one word before its header, its dict
// or, tagged by its low bit, its values.
var names312 = namesLayout{
	InterpModules: 944, // Include/internal/pycore_interp.h: struct _is.imports.modules (Include/internal/pycore_import.h)

	ModuleDict: 16, // Include/internal/pycore_moduleobject.h: PyModuleObject.md_dict

	DictKeys:   32, // Include/cpython/dictobject.h: PyDictObject.ma_keys
	DictValues: 40, // Include/cpython/dictobject.h: PyDictObject.ma_values (PyDictValues *)

	KeysLog2:           true,
	KeysSize:           8,  // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_log2_size (uint8_t)
	KeysLog2IndexBytes: 9,  // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_log2_index_bytes (uint8_t)
	KeysKind:           10, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_kind (uint8_t)
	KeysNentries:       24, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_nentries
	KeysIndices:        32, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_indices

	EntrySize:         24, // Include/internal/pycore_dict.h: sizeof(PyDictKeyEntry): me_hash, me_key, me_value
	EntryKey:          8,
	EntryValue:        16,
	UnicodeEntrySize:  16, // Include/internal/pycore_dict.h: sizeof(PyDictUnicodeEntry): me_key, me_value
	UnicodeEntryKey:   0,
	UnicodeEntryValue: 8,

	ValuesValues: 0, // Include/internal/pycore_dict.h: struct _dictvalues.values

	LongTag:    true,
	LongSize:   16, // Include/cpython/longintrepr.h: PyLongObject.long_value.lv_tag
	LongDigits: 24, // Include/cpython/longintrepr.h: PyLongObject.long_value.ob_digit

	TypeFlags:          168, // Include/cpython/object.h: PyTypeObject.tp_flags
	TypeDictOffset:     288, // Include/cpython/object.h: PyTypeObject.tp_dictoffset
	HeapTypeCachedKeys: 880, // Include/cpython/object.h: PyHeapTypeObject.ht_cached_keys

	ManagedDict:  24, // Include/internal/pycore_object.h: _PyObject_DictOrValuesPointer, ((PyDictOrValues *)obj)-3
	TaggedValues: true,
}

// 3.13, but for what _Py_DebugOffsets says (namesLayout313 fills those
// in): a dict's values start with a header (capacity, size, embedded,
// valid); an instance of a plain class keeps its values inline, after
// its header, and its dict, once made, before the header.
var names313 = namesLayout{
	ModuleDict: 16, // Include/internal/pycore_moduleobject.h: PyModuleObject.md_dict

	KeysLog2:           true,
	KeysSize:           8,  // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_log2_size (uint8_t)
	KeysLog2IndexBytes: 9,  // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_log2_index_bytes (uint8_t)
	KeysKind:           10, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_kind (uint8_t)
	KeysNentries:       24, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_nentries
	KeysIndices:        32, // Include/internal/pycore_dict.h: struct _dictkeysobject.dk_indices

	EntrySize:         24, // Include/internal/pycore_dict.h: sizeof(PyDictKeyEntry): me_hash, me_key, me_value
	EntryKey:          8,
	EntryValue:        16,
	UnicodeEntrySize:  16, // Include/internal/pycore_dict.h: sizeof(PyDictUnicodeEntry): me_key, me_value
	UnicodeEntryKey:   0,
	UnicodeEntryValue: 8,

	ValuesValues:   8, // Include/internal/pycore_dict.h: struct _dictvalues.values
	ValuesCapacity: 0, // Include/internal/pycore_dict.h: struct _dictvalues.capacity (uint8_t)
	ValuesValid:    3, // Include/internal/pycore_dict.h: struct _dictvalues.valid (uint8_t)

	LongTag: true,

	TypeDictOffset:     288, // Include/cpython/object.h: PyTypeObject.tp_dictoffset
	HeapTypeCachedKeys: 880, // Include/cpython/object.h: PyHeapTypeObject.ht_cached_keys

	ManagedDict:  24, // Include/internal/pycore_object.h: -MANAGED_DICT_OFFSET (with the GIL)
	InlineValues: 16, // Include/internal/pycore_object.h: _PyObject_InlineValues, obj + sizeof(PyObject)
}
