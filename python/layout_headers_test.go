package python

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/lang"
)

// The tables of layouts.go and the parser of debugoffsets.go are checked
// against what a C compiler makes of the installed headers of pyenv's
// builds, so that a number typed wrong, or a field of the wrong struct,
// fails here rather than as garbled stacks of a live process.

// headerExprs is, for each field of Layout, the C expression that computes
// it from the headers of CPython v; "0" where the version has no such
// field, so that every field of Layout is checked for every version.
// END is the end of a field, for the sizes of the reads; MAXOF the
// largest of its arguments.
func headerExprs(v lang.Version) map[string]string {
	e := map[string]string{
		"RuntimeInterpretersHead": "offsetof(_PyRuntimeState, interpreters.head)",
		"InterpNext":              "offsetof(PyInterpreterState, next)",
		"TstateNext":              "offsetof(PyThreadState, next)",
		"TstateThreadID":          "offsetof(PyThreadState, thread_id)",
		"CodeFilename":            "offsetof(PyCodeObject, co_filename)",
		"CodeName":                "offsetof(PyCodeObject, co_name)",
		"CodeFirstLineno":         "offsetof(PyCodeObject, co_firstlineno)",
		"UnicodeState":            "offsetof(PyASCIIObject, state)",
		"UnicodeLength":           "offsetof(PyASCIIObject, length)",
		"ASCIISize":               "sizeof(PyASCIIObject)",
		"CompactSize":             "sizeof(PyCompactUnicodeObject)",
		"BytesSize":               "offsetof(PyBytesObject, ob_base.ob_size)",
		"BytesData":               "offsetof(PyBytesObject, ob_sval)",
		"ObjectType":              "offsetof(PyObject, ob_type)",
		"TypeName":                "offsetof(PyTypeObject, tp_name)",
		"InstrIsNext":             "0",
	}
	zero := func(names ...string) {
		for _, n := range names {
			e[n] = "0"
		}
	}
	codeEnds := "END(PyObject, ob_type), END(PyCodeObject, co_filename), END(PyCodeObject, co_name), " +
		"END(PyCodeObject, co_firstlineno), END(PyCodeObject, co_linetable)"
	if v.AtLeast(3, 11) {
		e["InterpThreadsHead"] = "offsetof(PyInterpreterState, threads.head)"
		e["TstateNativeThreadID"] = "offsetof(PyThreadState, native_thread_id)"
		zero("FrameObjects", "FrameBack", "FrameCode", "FrameLasti")
		e["IFramePrevious"] = "offsetof(_PyInterpreterFrame, previous)"
		e["IFrameOwner"] = "offsetof(_PyInterpreterFrame, owner)"
		e["CodeQualname"] = "offsetof(PyCodeObject, co_qualname)"
		e["CodeLinetable"] = "offsetof(PyCodeObject, co_linetable)"
		e["CodeAdaptive"] = "offsetof(PyCodeObject, co_code_adaptive)"
		e["CodeSize"] = "MAXOF(" + codeEnds + ", END(PyCodeObject, co_qualname))"
	} else {
		e["InterpThreadsHead"] = "offsetof(PyInterpreterState, tstate_head)"
		zero("TstateNativeThreadID", "TstateCFrame", "CFrameCurrentFrame")
		e["TstateFrame"] = "offsetof(PyThreadState, frame)"
		e["FrameObjects"] = "_Generic(((PyThreadState *)0)->frame, PyFrameObject *: 1, default: 0)"
		e["FrameBack"] = "offsetof(PyFrameObject, f_back)"
		e["FrameCode"] = "offsetof(PyFrameObject, f_code)"
		e["FrameLasti"] = "offsetof(PyFrameObject, f_lasti)"
		zero("IFramePrevious", "IFrameCode", "IFrameInstr", "IFrameIsEntry", "IFrameOwner", "IFrameSize")
		zero("CodeQualname", "CodeAdaptive")
		table := "co_linetable"
		if !v.AtLeast(3, 10) {
			table = "co_lnotab"
		}
		e["CodeLinetable"] = "offsetof(PyCodeObject, " + table + ")"
		e["CodeSize"] = "MAXOF(" + strings.ReplaceAll(codeEnds, "co_linetable", table) + ")"
	}
	switch {
	case v.AtLeast(3, 13):
		e["TstateFrame"] = "offsetof(PyThreadState, current_frame)"
		zero("TstateCFrame", "CFrameCurrentFrame", "IFrameIsEntry")
		e["IFrameCode"] = "offsetof(_PyInterpreterFrame, f_executable)"
		e["IFrameInstr"] = "offsetof(_PyInterpreterFrame, instr_ptr)"
		e["IFrameSize"] = "MAXOF(END(_PyInterpreterFrame, previous), END(_PyInterpreterFrame, f_executable), " +
			"END(_PyInterpreterFrame, instr_ptr), END(_PyInterpreterFrame, owner))"
		e["InstrIsNext"] = "1"
		// Not a field of Layout: how much of _PyRuntime is read.
		e["debugOffsetsSize"] = "sizeof(_Py_DebugOffsets)"
	case v.AtLeast(3, 11):
		zero("TstateFrame")
		e["TstateCFrame"] = "offsetof(PyThreadState, cframe)"
		e["CFrameCurrentFrame"] = "offsetof(_PyCFrame, current_frame)"
		e["IFrameCode"] = "offsetof(_PyInterpreterFrame, f_code)"
		e["IFrameInstr"] = "offsetof(_PyInterpreterFrame, prev_instr)"
		ends := "END(_PyInterpreterFrame, previous), END(_PyInterpreterFrame, f_code), " +
			"END(_PyInterpreterFrame, prev_instr), END(_PyInterpreterFrame, owner)"
		if v.AtLeast(3, 12) {
			zero("IFrameIsEntry")
		} else {
			e["IFrameIsEntry"] = "offsetof(_PyInterpreterFrame, is_entry)"
			ends += ", END(_PyInterpreterFrame, is_entry)"
		}
		e["IFrameSize"] = "MAXOF(" + ends + ")"
	}
	return e
}

// headerProgram is a C program that prints each expression as name=value.
func headerProgram(v lang.Version, exprs map[string]string) string {
	var b strings.Builder
	b.WriteString("#define Py_BUILD_CORE 1\n#include \"Python.h\"\n")
	if !v.AtLeast(3, 11) {
		// Not included by Python.h, and there is no pycore_frame.h yet.
		b.WriteString("#include \"frameobject.h\"\n")
	} else {
		b.WriteString("#include \"internal/pycore_frame.h\"\n")
	}
	b.WriteString(`#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#include <stddef.h>
#include <stdio.h>

#define END(T, f) (offsetof(T, f) + sizeof(((T *)0)->f))
#define MAXOF(...) maxof((size_t[]){__VA_ARGS__}, sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t))

static size_t maxof(const size_t *v, size_t n) {
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

int main(void) {
`)
	names := make([]string, 0, len(exprs))
	for n := range exprs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\tprintf(\"%s=%%zu\\n\", (size_t)(%s));\n", n, exprs[n])
	}
	b.WriteString("\treturn 0;\n}\n")
	return b.String()
}

// headerValues compiles and runs headerProgram against the headers under
// include.
func headerValues(t *testing.T, v lang.Version, include string) map[string]uint64 {
	t.Helper()
	return runHeaderProgram(t, include, headerProgram(v, headerExprs(v)))
}

// runHeaderProgram compiles and runs a program that prints name=value
// lines, against the headers under include.
func runHeaderProgram(t *testing.T, include, program string) map[string]uint64 {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "layout.c")
	if err := os.WriteFile(src, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "layout")
	cc := exec.Command("gcc", "-std=gnu11", "-I", include, "-I", filepath.Join(include, "internal"), "-o", bin, src)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("running the layout program: %v", err)
	}
	vals := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), "=")
		n, err := strconv.ParseUint(val, 10, 64)
		if !ok || err != nil {
			t.Fatalf("layout program: bad line %q", sc.Text())
		}
		vals[name] = n
	}
	return vals
}

// compareLayout checks every field of l against the headers' values: an
// uncovered field of Layout (one added later) is an error too.
func compareLayout(t *testing.T, l Layout, v lang.Version, want map[string]uint64) {
	t.Helper()
	if l.Version != v {
		t.Errorf("Version = %v, want %v", l.Version, v)
	}
	rv := reflect.ValueOf(l)
	seen := map[string]bool{}
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if f.Name == "Version" {
			continue
		}
		seen[f.Name] = true
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("Layout.%s: no C expression for it in headerExprs", f.Name)
			continue
		}
		var got uint64
		switch f.Type.Kind() {
		case reflect.Uint64:
			got = rv.Field(i).Uint()
		case reflect.Bool:
			if rv.Field(i).Bool() {
				got = 1
			}
		default:
			t.Errorf("Layout.%s: a %s, which this test does not know how to check", f.Name, f.Type)
			continue
		}
		if got != w {
			t.Errorf("Layout.%s = %d, the headers say %d", f.Name, got, w)
		}
	}
	for name := range want {
		if !seen[name] && name != "debugOffsetsSize" {
			t.Errorf("headerExprs has %s, not a field of Layout", name)
		}
	}
}

func pyenvRoot() string {
	if r := os.Getenv("PYENV_ROOT"); r != "" {
		return r
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".pyenv")
}

// pyenvBuilds are the installed builds of 3.minor: plain release names
// only, as "3.13.0t" is a free-threaded build, of other offsets.
func pyenvBuilds(minor int) []string {
	dirs, _ := filepath.Glob(filepath.Join(pyenvRoot(), "versions", fmt.Sprintf("3.%d.*", minor)))
	plain := regexp.MustCompile(fmt.Sprintf(`^3\.%d\.[0-9]+$`, minor))
	var out []string
	for _, d := range dirs {
		if plain.MatchString(filepath.Base(d)) {
			out = append(out, d)
		}
	}
	return out
}

func TestLayoutsMatchHeaders(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	for minor := 9; minor <= 13; minor++ {
		v := lang.Version{Major: 3, Minor: minor}
		builds := pyenvBuilds(minor)
		if len(builds) == 0 {
			t.Logf("python %v: no pyenv build, not checked", v)
		}
		for _, dir := range builds {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				include := filepath.Join(dir, "include", "python"+v.String())
				if _, err := os.Stat(filepath.Join(include, "internal", "pycore_runtime.h")); err != nil {
					t.Skipf("no internal headers: %v", err)
				}
				want := headerValues(t, v, include)
				if minor <= 12 {
					l, ok := layoutFor(v)
					if !ok {
						t.Fatalf("layoutFor(%v): none", v)
					}
					compareLayout(t, l, v, want)
					return
				}
				if want["debugOffsetsSize"] != debugOffsetsSize {
					t.Errorf("debugOffsetsSize = %d, sizeof(_Py_DebugOffsets) = %d", debugOffsetsSize, want["debugOffsetsSize"])
				}
				lib := filepath.Join(dir, "lib", "libpython"+v.String()+".so.1.0")
				b, err := runtimeBytes(lib, debugOffsetsSize)
				if err != nil {
					t.Skipf("no _PyRuntime to read: %v", err)
				}
				l, err := parseDebugOffsets(b, v)
				if err != nil {
					t.Fatalf("parseDebugOffsets of %s: %v", lib, err)
				}
				compareLayout(t, l, v, want)
				checkFuzzSeed(t, filepath.Base(dir), b)
			})
		}
	}
}

// runtimeBytes reads the first n bytes of the library's _PyRuntime from
// the section that holds it (.PyRuntime in 3.13, a section of its own so
// that debuggers find it; .data would do as well). Its _Py_DebugOffsets is
// a static initializer of constants only: no relocation touches it, so the
// file's bytes are those of every process that loads the library.
func runtimeBytes(lib string, n int) ([]byte, error) {
	f, err := elf.Open(lib)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, err
	}
	for _, s := range syms {
		if s.Name != "_PyRuntime" {
			continue
		}
		for _, sec := range f.Sections {
			if sec.Type == elf.SHT_NOBITS || s.Value < sec.Addr || s.Value+uint64(n) > sec.Addr+sec.Size {
				continue
			}
			b := make([]byte, n)
			if _, err := sec.ReadAt(b, int64(s.Value-sec.Addr)); err != nil {
				return nil, err
			}
			return b, nil
		}
		return nil, fmt.Errorf("%s: _PyRuntime at %#x is in no section with file bytes", lib, s.Value)
	}
	return nil, fmt.Errorf("%s: no dynamic symbol _PyRuntime", lib)
}

// checkFuzzSeed keeps the fuzz corpus's copy of a real build's bytes
// (testdata/fuzz/FuzzParseDebugOffsets/<build>) the same as the build's.
func checkFuzzSeed(t *testing.T, build string, real []byte) {
	t.Helper()
	path := filepath.Join("testdata", "fuzz", "FuzzParseDebugOffsets", build)
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") || !strings.HasSuffix(lines[1], ")") {
		t.Fatalf("%s: not a one-[]byte corpus entry", path)
	}
	seed, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if seed != string(real) {
		t.Errorf("%s differs from the build's _PyRuntime: write it again from the library", path)
	}
}

// namesHeaderExprs is, for each field of namesLayout (threadnames.go), the
// C expression that computes it from the headers of CPython v, "0" where
// the version has no such field; and, as "const.<name>", the constants of
// threadnames.go the version has. cctop_* are the private structs that
// namesHeaderProgram declares again, and the functions it adds.
func namesHeaderExprs(v lang.Version) map[string]string {
	e := map[string]string{
		"InterpModules":      "offsetof(PyInterpreterState, modules)",
		"ModuleDict":         "offsetof(PyModuleObject, md_dict)",
		"DictKeys":           "offsetof(PyDictObject, ma_keys)",
		"DictValues":         "offsetof(PyDictObject, ma_values)",
		"KeysLog2":           "_Generic(((PyDictKeysObject *)0)->dk_log2_size, uint8_t: 1, default: 0)",
		"KeysSize":           "offsetof(PyDictKeysObject, dk_log2_size)",
		"KeysLog2IndexBytes": "offsetof(PyDictKeysObject, dk_log2_index_bytes)",
		"KeysKind":           "offsetof(PyDictKeysObject, dk_kind)",
		"KeysNentries":       "offsetof(PyDictKeysObject, dk_nentries)",
		"KeysIndices":        "offsetof(PyDictKeysObject, dk_indices)",
		"EntrySize":          "sizeof(PyDictKeyEntry)",
		"EntryKey":           "offsetof(PyDictKeyEntry, me_key)",
		"EntryValue":         "offsetof(PyDictKeyEntry, me_value)",
		"UnicodeEntrySize":   "sizeof(PyDictUnicodeEntry)",
		"UnicodeEntryKey":    "offsetof(PyDictUnicodeEntry, me_key)",
		"UnicodeEntryValue":  "offsetof(PyDictUnicodeEntry, me_value)",
		"ValuesValues":       "offsetof(PyDictValues, values)",
		"ValuesCapacity":     "0",
		"ValuesValid":        "0",
		"LongTag":            "0",
		"LongSize":           "offsetof(PyLongObject, ob_base.ob_size)",
		"LongDigits":         "offsetof(PyLongObject, ob_digit)",
		"TypeFlags":          "offsetof(PyTypeObject, tp_flags)",
		"TypeDictOffset":     "offsetof(PyTypeObject, tp_dictoffset)",
		"HeapTypeCachedKeys": "offsetof(PyHeapTypeObject, ht_cached_keys)",
		"ManagedDict":        "BEFORE(_PyObject_ManagedDictPointer, Py_TPFLAGS_MANAGED_DICT)",
		"ManagedValues":      "0",
		"TaggedValues":       "0",
		"InlineValues":       "0",

		"const.tpflagsHeapType":    "Py_TPFLAGS_HEAPTYPE",
		"const.tpflagsManagedDict": "Py_TPFLAGS_MANAGED_DICT",
		"const.dictKeysGeneral":    "DICT_KEYS_GENERAL",
		"const.dictKeysUnicode":    "DICT_KEYS_UNICODE",
		"const.dictKeysSplit":      "DICT_KEYS_SPLIT",
		"const.longShift":          "PyLong_SHIFT",
	}
	zero := func(names ...string) {
		for _, n := range names {
			e[n] = "0"
		}
	}
	if !v.AtLeast(3, 11) {
		// The private dict-common.h, declared again as cctop_*; one
		// kind of entry, of a hash, a key and a value; __dict__ only
		// at tp_dictoffset.
		e["KeysSize"] = "offsetof(struct cctop_dictkeys, dk_size)"
		e["KeysNentries"] = "offsetof(struct cctop_dictkeys, dk_nentries)"
		e["KeysIndices"] = "offsetof(struct cctop_dictkeys, dk_indices)"
		e["EntrySize"] = "sizeof(cctop_PyDictKeyEntry)"
		e["EntryKey"] = "offsetof(cctop_PyDictKeyEntry, me_key)"
		e["EntryValue"] = "offsetof(cctop_PyDictKeyEntry, me_value)"
		zero("KeysLog2", "KeysLog2IndexBytes", "KeysKind", "UnicodeEntrySize", "UnicodeEntryKey", "UnicodeEntryValue",
			"ValuesValues", "HeapTypeCachedKeys", "ManagedDict")
		for _, c := range []string{"const.tpflagsManagedDict", "const.dictKeysGeneral", "const.dictKeysUnicode", "const.dictKeysSplit"} {
			delete(e, c)
		}
		if !v.AtLeast(3, 10) {
			e["ModuleDict"] = "offsetof(cctop_PyModuleObject, md_dict)"
		}
	}
	switch {
	case v.AtLeast(3, 13):
		e["InterpModules"] = "offsetof(PyInterpreterState, imports.modules)"
		e["ValuesCapacity"] = "offsetof(PyDictValues, capacity)"
		e["ValuesValid"] = "offsetof(PyDictValues, valid)"
		e["InlineValues"] = "AFTER(_PyObject_InlineValues, Py_TPFLAGS_MANAGED_DICT | Py_TPFLAGS_INLINE_VALUES)"
		e["const.tpflagsInlineValues"] = "Py_TPFLAGS_INLINE_VALUES"
	case v.AtLeast(3, 12):
		e["InterpModules"] = "offsetof(PyInterpreterState, imports.modules)"
		e["ManagedDict"] = "BEFORE(_PyObject_DictOrValuesPointer, Py_TPFLAGS_MANAGED_DICT)"
		// The values pointer, less one, tagged by its low bit.
		e["TaggedValues"] = "_PyDictOrValues_IsValues((PyDictOrValues){.values = (char *)7}) && " +
			"!_PyDictOrValues_IsValues((PyDictOrValues){.values = (char *)8}) && " +
			"(char *)_PyDictOrValues_GetValues((PyDictOrValues){.values = (char *)7}) == (char *)8"
	case v.AtLeast(3, 11):
		e["ManagedValues"] = "BEFORE(_PyObject_ValuesPointer, Py_TPFLAGS_MANAGED_DICT)"
	}
	if v.AtLeast(3, 12) {
		e["LongTag"] = "_Generic(((PyLongObject *)0)->long_value.lv_tag, uintptr_t: 1, default: 0)"
		e["LongSize"] = "offsetof(PyLongObject, long_value.lv_tag)"
		e["LongDigits"] = "offsetof(PyLongObject, long_value.ob_digit)"
		e["const.longNonSizeBits"] = "NON_SIZE_BITS"
		e["const.longSignMask"] = "SIGN_MASK"
		e["const.longSignZero"] = "SIGN_ZERO"
	}
	return e
}

// namesConsts are the constants of threadnames.go that namesHeaderExprs
// names.
var namesConsts = map[string]uint64{
	"const.tpflagsInlineValues": tpflagsInlineValues,
	"const.tpflagsManagedDict":  tpflagsManagedDict,
	"const.tpflagsHeapType":     tpflagsHeapType,
	"const.dictKeysGeneral":     dictKeysGeneral,
	"const.dictKeysUnicode":     dictKeysUnicode,
	"const.dictKeysSplit":       dictKeysSplit,
	"const.longShift":           longShift,
	"const.longNonSizeBits":     longNonSizeBits,
	"const.longSignMask":        longSignMask,
	"const.longSignZero":        longSignZero,
}

// namesHeaderProgram is headerProgram's for namesHeaderExprs: the headers
// of dicts, modules, ints and objects too; before 3.11 the private
// structs of Objects/dict-common.h (and before 3.10 of
// Objects/moduleobject.c), as the releases' sources declare them; an
// object of a type with the flags given, to measure where the version's
// functions find its managed dict and values.
func namesHeaderProgram(v lang.Version, exprs map[string]string) string {
	var b strings.Builder
	b.WriteString("#define Py_BUILD_CORE 1\n#include \"Python.h\"\n")
	b.WriteString("#include \"internal/pycore_interp.h\"\n#include \"internal/pycore_runtime.h\"\n")
	if v.AtLeast(3, 10) {
		b.WriteString("#include \"internal/pycore_moduleobject.h\"\n")
	}
	if v.AtLeast(3, 11) {
		b.WriteString("#include \"internal/pycore_dict.h\"\n#include \"internal/pycore_object.h\"\n")
	} else {
		b.WriteString("#include \"longintrepr.h\"\n")
	}
	if v.AtLeast(3, 12) {
		b.WriteString("#include \"internal/pycore_long.h\"\n")
	}
	b.WriteString(`#include <stddef.h>
#include <stdio.h>
`)
	if !v.AtLeast(3, 11) {
		b.WriteString(`
/* Objects/dict-common.h of 3.9 and 3.10: not installed. */
typedef struct {
	Py_hash_t me_hash;
	PyObject *me_key;
	PyObject *me_value;
} cctop_PyDictKeyEntry;

struct cctop_dictkeys {
	Py_ssize_t dk_refcnt;
	Py_ssize_t dk_size;
	void *dk_lookup; /* dict_lookup_func */
	Py_ssize_t dk_usable;
	Py_ssize_t dk_nentries;
	char dk_indices[];
};

/* Objects/moduleobject.c of 3.9: installed from 3.10. */
typedef struct {
	PyObject_HEAD
	PyObject *md_dict;
	struct PyModuleDef *md_def;
	void *md_state;
	PyObject *md_weaklist;
	PyObject *md_name;
} cctop_PyModuleObject;
`)
	}
	b.WriteString(`
/* An object of a type of the flags given (and of the basic size of an
   object with no fields), with room before it: BEFORE and AFTER are how
   far before or after it f finds what it finds. */
static PyTypeObject cctop_type;
static struct {
	PyObject *pre[4];
	PyObject ob;
} cctop_obj;

static PyObject *cctop_fake(unsigned long flags) {
	cctop_type.tp_flags = flags;
	cctop_type.tp_basicsize = sizeof(PyObject);
	cctop_obj.ob.ob_type = &cctop_type;
	return &cctop_obj.ob;
}

#define BEFORE(f, flags) ((size_t)((char *)cctop_fake(flags) - (char *)f(cctop_fake(flags))))
#define AFTER(f, flags) ((size_t)((char *)f(cctop_fake(flags)) - (char *)cctop_fake(flags)))

int main(void) {
`)
	names := make([]string, 0, len(exprs))
	for n := range exprs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\tprintf(\"%s=%%zu\\n\", (size_t)(%s));\n", n, exprs[n])
	}
	b.WriteString("\treturn 0;\n}\n")
	return b.String()
}

// compareNamesLayout checks every field of nl, and the constants, against
// the headers' values.
func compareNamesLayout(t *testing.T, nl namesLayout, want map[string]uint64) {
	t.Helper()
	rv := reflect.ValueOf(nl)
	seen := map[string]bool{}
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		seen[f.Name] = true
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("namesLayout.%s: no C expression for it in namesHeaderExprs", f.Name)
			continue
		}
		var got uint64
		switch f.Type.Kind() {
		case reflect.Uint64:
			got = rv.Field(i).Uint()
		case reflect.Bool:
			if rv.Field(i).Bool() {
				got = 1
			}
		default:
			t.Errorf("namesLayout.%s: a %s, which this test does not know how to check", f.Name, f.Type)
			continue
		}
		if got != w {
			t.Errorf("namesLayout.%s = %d, the headers say %d", f.Name, got, w)
		}
	}
	for name, w := range want {
		if strings.HasPrefix(name, "const.") {
			if c, ok := namesConsts[name]; !ok || c != w {
				t.Errorf("%s = %d (%v), the headers say %d", strings.TrimPrefix(name, "const."), c, ok, w)
			}
		} else if !seen[name] {
			t.Errorf("namesHeaderExprs has %s, not a field of namesLayout", name)
		}
	}
}

// TestNamesLayoutsMatchHeaders checks the tables of what ThreadNames
// reads (3.9–3.12), and what namesLayout313 makes of a 3.13 build's debug
// offsets, against the installed headers of pyenv's builds.
func TestNamesLayoutsMatchHeaders(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	for minor := 9; minor <= 13; minor++ {
		v := lang.Version{Major: 3, Minor: minor}
		for _, dir := range pyenvBuilds(minor) {
			t.Run(filepath.Base(dir), func(t *testing.T) {
				include := filepath.Join(dir, "include", "python"+v.String())
				if _, err := os.Stat(filepath.Join(include, "internal", "pycore_runtime.h")); err != nil {
					t.Skipf("no internal headers: %v", err)
				}
				want := runHeaderProgram(t, include, namesHeaderProgram(v, namesHeaderExprs(v)))
				if minor <= 12 {
					nl, ok := namesLayoutFor(v)
					if !ok {
						t.Fatalf("namesLayoutFor(%v): none", v)
					}
					compareNamesLayout(t, nl, want)
					return
				}
				lib := filepath.Join(dir, "lib", "libpython"+v.String()+".so.1.0")
				b, err := runtimeBytes(lib, debugOffsetsSize)
				if err != nil {
					t.Skipf("no _PyRuntime to read: %v", err)
				}
				nl, err := namesLayout313(b, v)
				if err != nil {
					t.Fatalf("namesLayout313 of %s: %v", lib, err)
				}
				compareNamesLayout(t, nl, want)
			})
		}
	}
	for _, v := range []lang.Version{{Major: 3, Minor: 8}, {Major: 3, Minor: 13}, {Major: 2, Minor: 7}} {
		if _, ok := namesLayoutFor(v); ok {
			t.Errorf("namesLayoutFor(%v): a table", v)
		}
	}
}
