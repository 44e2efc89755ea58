package python

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/cctop/cctop/lang"
)

var v313 = lang.Version{Major: 3, Minor: 13}

func TestLayoutForVersions(t *testing.T) {
	for minor := 0; minor <= 20; minor++ {
		v := lang.Version{Major: 3, Minor: minor}
		l, ok := layoutFor(v)
		// 3.13+ describe themselves (debugoffsets.go); a table for them
		// would override what the process says of itself.
		if want := minor >= 9 && minor <= 12; ok != want {
			t.Errorf("layoutFor(%v): ok = %v, want %v", v, ok, want)
		}
		if ok && l.Version != v {
			t.Errorf("layoutFor(%v).Version = %v", v, l.Version)
		}
		if ok && l.FrameObjects == v.AtLeast(3, 11) {
			t.Errorf("layoutFor(%v).FrameObjects = %v", v, l.FrameObjects)
		}
	}
	for _, v := range []lang.Version{{}, {Major: 2, Minor: 7}, {Major: 4, Minor: 10}} {
		if _, ok := layoutFor(v); ok {
			t.Errorf("layoutFor(%v): a layout", v)
		}
	}
}

// The tables are read by a reader that trusts them: each field it reads
// must lie within what it reads of the struct.
func TestLayoutTablesConsistent(t *testing.T) {
	for minor := 9; minor <= 12; minor++ {
		l, _ := layoutFor(lang.Version{Major: 3, Minor: minor})
		checkLayoutBounds(t, l)
	}
}

func checkLayoutBounds(t *testing.T, l Layout) {
	t.Helper()
	ends := func(what string, size uint64, fields map[string]uint64) {
		for name, end := range fields {
			if end > size {
				t.Errorf("%v: %s ends at %d, past %s %d", l.Version, name, end, what, size)
			}
		}
	}
	ends("CodeSize", l.CodeSize, map[string]uint64{
		"ObjectType": l.ObjectType + 8, "CodeFilename": l.CodeFilename + 8, "CodeName": l.CodeName + 8,
		"CodeQualname": l.CodeQualname + 8, "CodeLinetable": l.CodeLinetable + 8, "CodeFirstLineno": l.CodeFirstLineno + 4,
	})
	ends("CompactSize", l.CompactSize, map[string]uint64{"ASCIISize": l.ASCIISize})
	ends("ASCIISize", l.ASCIISize, map[string]uint64{
		"ObjectType": l.ObjectType + 8, "UnicodeState": l.UnicodeState + 4, "UnicodeLength": l.UnicodeLength + 8,
	})
	ends("BytesData", l.BytesData, map[string]uint64{"ObjectType": l.ObjectType + 8, "BytesSize": l.BytesSize + 8})
	if !l.FrameObjects {
		ends("IFrameSize", l.IFrameSize, map[string]uint64{
			"IFramePrevious": l.IFramePrevious + 8, "IFrameCode": l.IFrameCode + 8, "IFrameInstr": l.IFrameInstr + 8,
			"IFrameOwner": l.IFrameOwner + 1, "IFrameIsEntry": l.IFrameIsEntry + 1,
		})
	}
}

// synthDebugOffsets is a 3.13 _Py_DebugOffsets with a distinct value in
// every slot, so that a field taken from the wrong slot shows, and the
// values by name.
func synthDebugOffsets() ([]byte, map[string]uint64) {
	b := make([]byte, 24, debugOffsetsSize)
	copy(b, debugCookie)
	binary.LittleEndian.PutUint64(b[8:], 0x030d00f0) // 3.13.0 final
	vals := map[string]uint64{}
	for g, grp := range debugGroups313 {
		size := uint64(1024 + 8*g)
		vals[grp.name+".size"] = size
		b = binary.LittleEndian.AppendUint64(b, size)
		for i, f := range grp.offsets {
			off := uint64(8*(i+1) + g)
			vals[grp.name+"."+f] = off
			b = binary.LittleEndian.AppendUint64(b, off)
		}
	}
	return b, vals
}

func TestDebugOffsetsSize(t *testing.T) {
	n := 24
	for _, g := range debugGroups313 {
		n += 8 * (1 + len(g.offsets))
	}
	if n != debugOffsetsSize {
		t.Errorf("debugGroups313 lays out %d bytes, debugOffsetsSize is %d", n, debugOffsetsSize)
	}
}

func TestParseDebugOffsetsRoundTrip(t *testing.T) {
	b, d := synthDebugOffsets()
	got, err := parseDebugOffsets(b, v313)
	if err != nil {
		t.Fatal(err)
	}
	want := Layout{
		Version:                 v313,
		RuntimeInterpretersHead: d["runtime_state.interpreters_head"],
		InterpNext:              d["interpreter_state.next"],
		InterpThreadsHead:       d["interpreter_state.threads_head"],
		TstateNext:              d["thread_state.next"],
		TstateNativeThreadID:    d["thread_state.native_thread_id"],
		TstateThreadID:          d["thread_state.thread_id"],
		TstateFrame:             d["thread_state.current_frame"],
		IFramePrevious:          d["interpreter_frame.previous"],
		IFrameCode:              d["interpreter_frame.executable"],
		IFrameInstr:             d["interpreter_frame.instr_ptr"],
		IFrameOwner:             d["interpreter_frame.owner"],
		InstrIsNext:             true,
		CodeFilename:            d["code_object.filename"],
		CodeName:                d["code_object.name"],
		CodeQualname:            d["code_object.qualname"],
		CodeFirstLineno:         d["code_object.firstlineno"],
		CodeLinetable:           d["code_object.linetable"],
		CodeAdaptive:            d["code_object.co_code_adaptive"],
		UnicodeState:            d["unicode_object.state"],
		UnicodeLength:           d["unicode_object.length"],
		ASCIISize:               d["unicode_object.asciiobject_size"],
		CompactSize:             d["unicode_object.asciiobject_size"] + 16, // utf8_length, utf8
		BytesSize:               d["bytes_object.ob_size"],
		BytesData:               d["bytes_object.ob_sval"],
		ObjectType:              d["pyobject.ob_type"],
		TypeName:                d["type_object.tp_name"],
	}
	// The sizes of the reads: up to the end of the last field read.
	want.IFrameSize = max(want.IFramePrevious+8, want.IFrameCode+8, want.IFrameInstr+8, want.IFrameOwner+1)
	want.CodeSize = max(want.ObjectType+8, want.CodeFilename+8, want.CodeName+8, want.CodeQualname+8,
		want.CodeLinetable+8, want.CodeFirstLineno+4)
	if got != want {
		t.Errorf("parseDebugOffsets:\n got %+v\nwant %+v", got, want)
	}
	checkLayoutBounds(t, got)

	// Bytes past the struct are not its business.
	if got2, err := parseDebugOffsets(append(b, 0xff, 0xff), v313); err != nil || got2 != got {
		t.Errorf("with trailing bytes: %+v, %v", got2, err)
	}
}

// checkError fails unless err is an error of one line, as errors here are
// (lower case but for a name, no trailing period), holding each of want.
func checkError(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || strings.HasSuffix(msg, ".") || msg != strings.TrimSpace(msg) {
		t.Errorf("%s: error %q: not one line without a trailing period", what, msg)
	}
	if first := msg[:1]; first != strings.ToLower(first) && !strings.HasPrefix(msg, "CPython") {
		t.Errorf("%s: error %q starts upper case", what, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q does not say %q", what, msg, w)
		}
	}
}

// rejectCase is bytes and a version parseDebugOffsets must refuse, with
// what its error must say.
type rejectCase struct {
	name string
	b    []byte
	v    lang.Version
	want []string
}

func TestParseDebugOffsetsRejects(t *testing.T) {
	good, _ := synthDebugOffsets()
	edit := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	put := func(b []byte, at int, x uint64) { binary.LittleEndian.PutUint64(b[at:], x) }

	cases := []rejectCase{
		{"nil", nil, v313, []string{"0 bytes"}},
		{"short", good[:debugOffsetsSize-1], v313, []string{"583 bytes"}},
		{"cookie", edit(func(b []byte) { b[0] = 'X' }), v313, []string{"cookie"}},
		{"zero cookie", edit(func(b []byte) { clear(b[:8]) }), v313, []string{"cookie"}},
		{"older", edit(func(b []byte) { put(b, 8, 0x030c01f0) }), v313, []string{"3.12", "3.13"}},
		{"newer", edit(func(b []byte) { put(b, 8, 0x030e00a1) }), v313, []string{"3.14", "3.13"}},
		{"garbage version", edit(func(b []byte) { put(b, 8, ^uint64(0)) }), v313, []string{"3.13"}},
		{"free-threaded", edit(func(b []byte) { put(b, 16, 1) }), v313, []string{"free-threaded build: not supported"}},
		{"3.14", good, lang.Version{Major: 3, Minor: 14}, []string{"CPython 3.14: layout not known to this cctop"}},
		{"3.12", good, lang.Version{Major: 3, Minor: 12}, []string{"3.12", "not known"}},
	}
	// Every size out of bounds, and every offset at its struct's end,
	// named in the error.
	at := 24
	for _, g := range debugGroups313 {
		sizeAt := at
		cases = append(cases,
			rejectCase{g.name + ".size huge", edit(func(b []byte) { put(b, sizeAt, maxStructSize) }), v313, []string{g.name + ".size"}},
			rejectCase{g.name + ".size zero", edit(func(b []byte) { put(b, sizeAt, 0) }), v313, []string{g.name + ".size"}},
		)
		at += 8
		for _, f := range g.offsets {
			offAt := at
			name := g.name + "." + f
			cases = append(cases, rejectCase{name + " past size", edit(func(b []byte) {
				put(b, offAt, binary.LittleEndian.Uint64(b[sizeAt:]))
			}), v313, []string{name}})
			at += 8
		}
	}
	for _, c := range cases {
		l, err := parseDebugOffsets(c.b, c.v)
		checkError(t, c.name, err, c.want...)
		if l != (Layout{}) {
			t.Errorf("%s: a layout with the error", c.name)
		}
	}
}

// A field the reader reads must fit whole, not only start, inside its
// struct; and the derived sizes must fit in the structs they come from.
func TestParseDebugOffsetsWidths(t *testing.T) {
	good, d := synthDebugOffsets()
	slot := map[string]int{}
	at := 24
	for _, g := range debugGroups313 {
		slot[g.name+".size"] = at
		at += 8
		for _, f := range g.offsets {
			slot[g.name+"."+f] = at
			at += 8
		}
	}
	set := func(name string, x uint64) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint64(b[slot[name]:], x)
		return b
	}
	for name, width := range map[string]uint64{
		"interpreter_frame.previous": 8, "thread_state.current_frame": 8, "code_object.firstlineno": 4,
		"interpreter_state.threads_head": 8, "type_object.tp_name": 8,
	} {
		group, _, _ := strings.Cut(name, ".")
		_, err := parseDebugOffsets(set(name, d[group+".size"]-width+1), v313)
		checkError(t, name+" straddling the end", err, name)
		if _, err := parseDebugOffsets(set(name, d[group+".size"]-width), v313); err != nil {
			t.Errorf("%s at the very end: %v", name, err)
		}
	}
	// A PyCompactUnicodeObject larger than PyUnicodeObject, state and
	// length outside PyASCIIObject, ob_size or ob_type in a bytes
	// object's data, ob_type outside a str's header.
	for _, c := range []struct {
		name string
		val  uint64
	}{
		{"unicode_object.asciiobject_size", d["unicode_object.size"] - 15},
		{"unicode_object.state", d["unicode_object.asciiobject_size"] - 3},
		{"unicode_object.length", d["unicode_object.asciiobject_size"] - 7},
		{"bytes_object.ob_size", d["bytes_object.ob_sval"] - 7},
		{"pyobject.ob_type", d["bytes_object.ob_sval"] - 7},
		{"pyobject.ob_type", d["unicode_object.asciiobject_size"] - 7},
	} {
		_, err := parseDebugOffsets(set(c.name, c.val), v313)
		checkError(t, c.name, err, c.name)
	}
}

func FuzzParseDebugOffsets(f *testing.F) {
	// The real 3.13.0 bytes, and cut ones, are in testdata/fuzz.
	b, _ := synthDebugOffsets()
	f.Add(b)
	f.Add(b[:100])
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseDebugOffsets(b, v313)
		if err != nil {
			if l != (Layout{}) {
				t.Errorf("a layout with the error %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			return
		}
		rv := reflect.ValueOf(l)
		for i := range rv.NumField() {
			if fv := rv.Field(i); fv.Kind() == reflect.Uint64 && fv.Uint() >= maxStructSize {
				t.Errorf("Layout.%s = %d, not below 1 MiB", rv.Type().Field(i).Name, fv.Uint())
			}
		}
		checkLayoutBounds(t, l)
	})
}
