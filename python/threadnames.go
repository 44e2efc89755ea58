package python

import (
	"errors"
	"fmt"
)

// Thread names: what threading.Thread(name="worker-1") calls a thread is
// not the kernel's comm (Python does not set it) but an attribute of a
// Python object, found the way Python finds it, read from the target's
// memory with no code run in it: the main interpreter's sys.modules (a
// dict), its "threading" (a module), the module's dict, its "_active" (a
// dict of idents, the pthread_self() values that PyThreadState.thread_id
// holds, to Thread objects), and each Thread's instance attribute "_name"
// (a str).
//
// Every dict is read the same way: its keys object's entries in order,
// bounded (dk_nentries, checked against the table's size), the keys that
// are str compared with the name sought. Where an instance keeps its
// attributes changes with each version:
//
//   - 3.9, 3.10: in its __dict__, a pointer at the type's tp_dictoffset;
//     the dict of an instance of a class is usually split: its keys are the
//     class's, shared (ma_keys), its values its own (ma_values), by index.
//   - 3.11 (Py_TPFLAGS_MANAGED_DICT): before the object's GC header (at
//     obj-2 words), at obj-4 words a PyDictValues* (the values of the
//     class's shared keys, ht_cached_keys), used if not NULL, else at
//     obj-3 words a dict.
//   - 3.12: one word at obj-3 words: a dict, or, with its low bit set, a
//     PyDictValues* less one.
//   - 3.13 (Py_TPFLAGS_INLINE_VALUES): the values inline after the object's
//     header, with a header of their own (capacity, size, embedded, valid),
//     used while valid, else the dict at obj-3 words; a split dict's
//     ma_values has that header too.
//
// Every pointer is the target's: each object is checked to be of the type
// expected (by ob_type's tp_name, or the str type's address where known),
// each loop and the reads of a call are bounded, and what cannot be read
// is an error, never a guess.

// namesLayout is where a CPython version keeps what ThreadNames reads,
// past what the stack reader's Layout says: per-version tables for 3.9 to
// 3.12 (layouts.go), from the debug offsets and the headers for 3.13
// (namesLayout313). Kept apart from Layout, whose 3.13 value is all that
// parseDebugOffsets makes of the debug offsets.
type namesLayout struct {
	// PyInterpreterState: modules (3.9–3.11), imports.modules (3.12+):
	// sys.modules.
	InterpModules uint64

	// PyModuleObject.md_dict.
	ModuleDict uint64

	// PyDictObject: ma_keys, ma_values (a split table's values, else NULL).
	DictKeys, DictValues uint64

	// PyDictKeysObject: the size of the hash table as dk_size, a
	// Py_ssize_t (3.9–3.10), or (KeysLog2, 3.11+) as dk_log2_size, with
	// dk_log2_index_bytes and dk_kind, uint8s; dk_nentries; dk_indices,
	// the hash table, after which the entries start.
	KeysLog2                                                          bool
	KeysSize, KeysLog2IndexBytes, KeysKind, KeysNentries, KeysIndices uint64

	// PyDictKeyEntry (me_hash, me_key, me_value), and PyDictUnicodeEntry
	// (3.11+: me_key, me_value), the entries of keys of a kind other than
	// DICT_KEYS_GENERAL: their sizes and where key and value are.
	EntrySize, EntryKey, EntryValue                      uint64
	UnicodeEntrySize, UnicodeEntryKey, UnicodeEntryValue uint64

	// PyDictValues (3.11+): values, the array; 3.13 puts a header of
	// uint8s before it, of which capacity and valid are read (ValuesValues
	// is then not 0: it says the header is there).
	ValuesValues, ValuesCapacity, ValuesValid uint64

	// PyLongObject: ob_size (3.9–3.11: the number of digits, negative for
	// a negative int) or (LongTag, 3.12+) lv_tag (the number of digits
	// shifted left by 3, the sign in the low 2 bits); ob_digit, 30-bit
	// digits in uint32s, least significant first.
	LongTag              bool
	LongSize, LongDigits uint64

	// PyTypeObject: tp_flags, tp_dictoffset; PyHeapTypeObject:
	// ht_cached_keys (3.11+), the keys its instances' values are of.
	TypeFlags, TypeDictOffset, HeapTypeCachedKeys uint64

	// An instance of a type with Py_TPFLAGS_MANAGED_DICT (3.11+): how many
	// bytes before the object its dict pointer is (ManagedDict), and in
	// 3.11 its values pointer (ManagedValues); TaggedValues (3.12): the
	// dict pointer is the values pointer less one where its low bit is
	// set; InlineValues (3.13): where the values of a type with
	// Py_TPFLAGS_INLINE_VALUES start, after the object's header.
	ManagedDict, ManagedValues uint64
	TaggedValues               bool
	InlineValues               uint64
}

// From Include/object.h and Include/internal/pycore_dict.h, checked by
// layout_headers_test.go.
const (
	tpflagsInlineValues = 1 << 2 // Py_TPFLAGS_INLINE_VALUES (3.13)
	tpflagsManagedDict  = 1 << 4 // Py_TPFLAGS_MANAGED_DICT (3.11+)
	tpflagsHeapType     = 1 << 9 // Py_TPFLAGS_HEAPTYPE

	dictKeysGeneral = 0 // DICT_KEYS_GENERAL (3.11+)
	dictKeysUnicode = 1 // DICT_KEYS_UNICODE
	dictKeysSplit   = 2 // DICT_KEYS_SPLIT

	longShift = 30 // PyLong_SHIFT: every build read here has 30-bit digits

	// Include/internal/pycore_long.h (3.12+): lv_tag's low bits.
	longNonSizeBits = 3 // NON_SIZE_BITS: the digits are counted above
	longSignMask    = 3 // SIGN_MASK
	longSignZero    = 1 // SIGN_ZERO (0 is positive, 2 negative)
)

// Bounds on what the target's memory makes ThreadNames read.
const (
	// maxDictEntries bounds the entries of a dict read (dk_nentries): a
	// large program's sys.modules holds a few thousand.
	maxDictEntries = 1 << 14
	// maxDictLog2 bounds the log2 of a hash table's size, so that where
	// the entries start is an address, not an overflow.
	maxDictLog2 = 40
	// maxNameReads bounds the reads of one call, whatever the dicts link
	// to: about a hundred milliseconds of system calls.
	maxNameReads = 1 << 17
	// maxDictOffset bounds a type's tp_dictoffset.
	maxDictOffset = 1 << 16
	// entryChunk is how many entries (and values) are read at once.
	entryChunk = 64
	// maxTypeCache bounds the types remembered in one call.
	maxTypeCache = 256
)

var (
	errNameReads = fmt.Errorf("more than %d reads", maxNameReads)
	errNotFound  = errors.New("not found")
)

// ThreadNames reads threading._active ({ident: Thread}) of the main
// interpreter and returns each thread's name by its ident (the
// pthread_self() value, PyThreadState.thread_id), bounded.
//
// A process that has not imported threading has no names: an empty map.
// A thread whose entry cannot be read is left out, unless none can be,
// which is the error of the first. Each call reads the memory afresh, a
// few system calls for each module of sys.modules and each thread: a
// caller asks again when it sees a thread it has no name for, not at each
// sample.
func (in *Interpreter) ThreadNames(mem Memory) (map[uint64]string, error) {
	names, err := in.threadNames(mem)
	if err != nil {
		return nil, fmt.Errorf("python %s: thread names: %w", in.Version, err)
	}
	return names, nil
}

func (in *Interpreter) threadNames(mem Memory) (map[uint64]string, error) {
	nl, err := in.namesLayout(mem)
	if err != nil {
		return nil, err
	}
	r := newNamesReader(in, mem, &nl)
	interp, err := r.mainInterpreter()
	if err != nil {
		return nil, err
	}
	modules, err := r.ptr("sys.modules", interp+nl.InterpModules)
	if err != nil {
		return nil, err
	}
	if modules == 0 {
		return nil, fmt.Errorf("the interpreter has no sys.modules yet")
	}
	mod, err := r.dictGet(modules, "threading")
	if errors.Is(err, errNotFound) {
		return map[uint64]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sys.modules: %w", err)
	}
	if err := r.isType(mod, "module"); err != nil {
		return nil, fmt.Errorf("sys.modules[\"threading\"]: %w", err)
	}
	md, err := r.ptr("threading's md_dict", mod+nl.ModuleDict)
	if err != nil {
		return nil, err
	}
	active, err := r.dictGet(md, "_active")
	if err != nil {
		return nil, fmt.Errorf("threading._active: %w", err)
	}
	t, err := r.dict(active)
	if err != nil {
		return nil, fmt.Errorf("threading._active: %w", err)
	}
	names := map[uint64]string{}
	var first error
	err = r.each(t, func(_, key, value uint64) (bool, error) {
		ident, err := r.ident(key)
		var name string
		if err == nil {
			name, err = r.threadName(value)
		}
		switch {
		case errors.Is(err, errNameReads):
			return false, err
		case err != nil:
			if first == nil {
				first = fmt.Errorf("threading._active entry: %w", err)
			}
		default:
			names[ident] = name
		}
		return len(names) < maxThreads, nil
	})
	if err != nil {
		return nil, fmt.Errorf("threading._active: %w", err)
	}
	if len(names) == 0 && first != nil {
		return nil, first
	}
	return names, nil
}

// namesLayout is the version's table, or for 3.13 what its debug offsets
// say, read again from the target (once a call: 584 bytes).
func (in *Interpreter) namesLayout(mem Memory) (namesLayout, error) {
	if nl, ok := namesLayoutFor(in.Version); ok {
		return nl, nil
	}
	if !in.Version.AtLeast(3, 13) {
		return namesLayout{}, fmt.Errorf("layout not known to this cctop")
	}
	b := make([]byte, debugOffsetsSize)
	if err := mem.ReadAt(b, in.Runtime); err != nil {
		return namesLayout{}, &ReadError{"_Py_DebugOffsets", in.Runtime, err}
	}
	return namesLayout313(b, in.Version)
}

// namesReader is one call of ThreadNames: its reads counted, the types
// it has checked, the slot of an attribute in shared keys.
type namesReader struct {
	in  *Interpreter
	mem Memory
	l   *Layout
	nl  *namesLayout
	// reads counts the reads, up to maxNameReads.
	reads int
	// types: whether the type at an address has a tp_name.
	types map[addrName]bool
	// fields: the fields read of a type, by its address.
	fields map[uint64]typeFields
	// slots: the entry of a name in a split table's keys, by the keys'
	// address (shared keys only grow, so the slot holds for the call).
	slots map[addrName]uint64
	// ents, vals: a chunk of entries and of values; addrs, hdrs, bufs:
	// the str headers of a chunk's keys, then the characters of some.
	ents  [entryChunk * 24]byte
	vals  [entryChunk * 8]byte
	addrs [entryChunk]uint64
	hdrs  [entryChunk][128]byte
	bufs  [entryChunk][]byte
}

func newNamesReader(in *Interpreter, mem Memory, nl *namesLayout) *namesReader {
	return &namesReader{in: in, mem: mem, l: &in.Layout, nl: nl,
		types:  map[addrName]bool{},
		fields: map[uint64]typeFields{},
		slots:  map[addrName]uint64{},
	}
}

// addrName is an object's address and a name: of a type and its
// tp_name, or of shared keys and a key.
type addrName struct {
	addr uint64
	name string
}

type typeFields struct {
	flags      uint64
	dictOffset int64
}

// read fills p from addr, counted.
func (r *namesReader) read(what string, p []byte, addr uint64) error {
	if r.reads >= maxNameReads {
		return errNameReads
	}
	r.reads++
	if addr == 0 || addr+uint64(len(p)) < addr {
		return &ReadError{what, addr, errUnmapped}
	}
	if err := r.mem.ReadAt(p, addr); err != nil {
		return &ReadError{what, addr, err}
	}
	return nil
}

// ptr reads the pointer at addr.
func (r *namesReader) ptr(what string, addr uint64) (uint64, error) {
	var w [8]byte
	if err := r.read(what, w[:], addr); err != nil {
		return 0, err
	}
	return le64(w[:], 0), nil
}

// mainInterpreter is the last of _PyRuntime's list of interpreters: the
// first made, as each is put at the head.
func (r *namesReader) mainInterpreter() (uint64, error) {
	interp, err := r.ptr("_PyRuntime.interpreters.head", r.in.Runtime+r.l.RuntimeInterpretersHead)
	if err != nil {
		return 0, err
	}
	if interp == 0 {
		return 0, fmt.Errorf("no interpreter")
	}
	for i := 0; ; i++ {
		if i == maxInterpreters {
			return 0, fmt.Errorf("more than %d interpreters", maxInterpreters)
		}
		next, err := r.ptr("interpreter's next", interp+r.l.InterpNext)
		if err != nil {
			return 0, err
		}
		if next == 0 {
			return interp, nil
		}
		interp = next
	}
}

// typeIs says whether the type object at tp is named name, reading as
// many bytes of its tp_name: a C string that ends there.
func (r *namesReader) typeIs(tp uint64, name string) (bool, error) {
	k := addrName{tp, name}
	if ok, seen := r.types[k]; seen {
		return ok, nil
	}
	np, err := r.ptr("type's tp_name", tp+r.l.TypeName)
	if err != nil {
		return false, err
	}
	var b [16]byte
	n := len(name) + 1
	if n > len(b) {
		return false, fmt.Errorf("type name %q too long to check", name)
	}
	if err := r.read("type's name", b[:n], np); err != nil {
		return false, err
	}
	ok := string(b[:n-1]) == name && b[n-1] == 0
	if len(r.types) >= maxTypeCache {
		clear(r.types)
	}
	r.types[k] = ok
	return ok, nil
}

// isType checks that the object at addr is of the type named name
// (exactly: not a subclass).
func (r *namesReader) isType(addr uint64, name string) error {
	tp, err := r.ptr("object's type", addr+r.l.ObjectType)
	if err != nil {
		return err
	}
	return r.checkType(addr, tp, name)
}

func (r *namesReader) checkType(addr, tp uint64, name string) error {
	if name == "str" && r.in.StrType != 0 {
		if tp != r.in.StrType {
			return fmt.Errorf("%#x is not a str", addr)
		}
		return nil
	}
	ok, err := r.typeIs(tp, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%#x is not a %s", addr, name)
	}
	return nil
}

// table is a dict's entries as read: its keys object's, and a split
// table's values.
type table struct {
	keys    uint64
	kind    uint8
	n       uint64 // dk_nentries, checked
	entries uint64 // the first entry's address
	size    uint64 // of an entry
	key     uint64 // where its key is
	value   uint64 // where its value is, in a combined table
	// values is a split table's first value (0 for a combined table),
	// nvalues how many there are (3.13's capacity), at least n before.
	values  uint64
	nvalues uint64
}

// usable is USABLE_FRACTION of Objects/dictobject.c: how many entries a
// hash table of size slots holds.
func usable(size uint64) uint64 { return (size << 1) / 3 }

// keysTable reads the PyDictKeysObject at keys.
func (r *namesReader) keysTable(keys uint64) (table, error) {
	nl := r.nl
	var hdr [64]byte
	n := max(nl.KeysSize+8, nl.KeysNentries+8, nl.KeysLog2IndexBytes+1, nl.KeysKind+1)
	if n > uint64(len(hdr)) || nl.KeysIndices > uint64(len(hdr)) {
		return table{}, fmt.Errorf("dict keys layout out of bounds")
	}
	if err := r.read("dict keys", hdr[:n], keys); err != nil {
		return table{}, err
	}
	t := table{keys: keys, n: le64(hdr[:], nl.KeysNentries)}
	var size, indexBytes uint64
	if nl.KeysLog2 {
		log2 := uint64(hdr[nl.KeysSize])
		if log2 > maxDictLog2 {
			return table{}, fmt.Errorf("dict keys at %#x: a table of 2^%d slots", keys, log2)
		}
		// dk_log2_index_bytes: slots of 1, 2, 4 or 8 bytes, as the
		// size needs (Objects/dictobject.c: new_keys_object).
		want := log2
		switch {
		case log2 >= 32:
			want += 3
		case log2 >= 16:
			want += 2
		case log2 >= 8:
			want++
		}
		if lib := uint64(hdr[nl.KeysLog2IndexBytes]); lib != want {
			return table{}, fmt.Errorf("dict keys at %#x: 2^%d index bytes for 2^%d slots", keys, lib, log2)
		}
		size, indexBytes = 1<<log2, 1<<want
		t.kind = hdr[nl.KeysKind]
		switch t.kind {
		case dictKeysGeneral:
			t.size, t.key, t.value = nl.EntrySize, nl.EntryKey, nl.EntryValue
		case dictKeysUnicode, dictKeysSplit:
			t.size, t.key, t.value = nl.UnicodeEntrySize, nl.UnicodeEntryKey, nl.UnicodeEntryValue
		default:
			return table{}, fmt.Errorf("dict keys at %#x: kind %d", keys, t.kind)
		}
	} else {
		size = le64(hdr[:], nl.KeysSize)
		if size == 0 || size&(size-1) != 0 || size > 1<<maxDictLog2 {
			return table{}, fmt.Errorf("dict keys at %#x: a table of %d slots", keys, size)
		}
		// Objects/dictobject.c: DK_IXSIZE.
		ix := uint64(8)
		switch {
		case size <= 0xff:
			ix = 1
		case size <= 0xffff:
			ix = 2
		case size <= 0xffffffff:
			ix = 4
		}
		indexBytes = size * ix
		t.size, t.key, t.value = nl.EntrySize, nl.EntryKey, nl.EntryValue
	}
	if t.n > usable(size) || t.n > maxDictEntries {
		return table{}, fmt.Errorf("dict keys at %#x: %d entries in a table of %d slots (at most %d read)", keys, t.n, size, maxDictEntries)
	}
	if t.size == 0 || t.size > 24 || t.key+8 > t.size || t.value+8 > t.size {
		return table{}, fmt.Errorf("dict entry layout out of bounds")
	}
	t.entries = keys + nl.KeysIndices + indexBytes
	if t.entries < keys || t.entries+t.n*t.size < t.entries {
		return table{}, fmt.Errorf("dict keys at %#x: entries past the address space", keys)
	}
	t.nvalues = t.n
	return t, nil
}

// dict reads the dict at addr: its keys and, if split, its values.
func (r *namesReader) dict(addr uint64) (table, error) {
	nl := r.nl
	var hdr [64]byte
	n := max(r.l.ObjectType, nl.DictKeys, nl.DictValues) + 8
	if n > uint64(len(hdr)) {
		return table{}, fmt.Errorf("dict layout out of bounds")
	}
	if err := r.read("dict", hdr[:n], addr); err != nil {
		return table{}, err
	}
	if err := r.checkType(addr, le64(hdr[:], r.l.ObjectType), "dict"); err != nil {
		return table{}, err
	}
	t, err := r.keysTable(le64(hdr[:], nl.DictKeys))
	if err != nil {
		return table{}, err
	}
	if v := le64(hdr[:], nl.DictValues); v != 0 {
		if err := r.split(&t, v); err != nil {
			return table{}, err
		}
	}
	return t, nil
}

// split makes t the table of the PyDictValues at v, values of t's keys.
func (r *namesReader) split(t *table, v uint64) error {
	nl := r.nl
	if nl.KeysLog2 && t.kind != dictKeysSplit {
		return fmt.Errorf("values at %#x of keys at %#x of kind %d, not split", v, t.keys, t.kind)
	}
	t.values, t.nvalues = v, t.n
	if nl.ValuesValues != 0 {
		// 3.13: a header before the values says how many there are.
		var hdr [16]byte
		if nl.ValuesValues > uint64(len(hdr)) || nl.ValuesCapacity >= nl.ValuesValues {
			return fmt.Errorf("dict values layout out of bounds")
		}
		if err := r.read("dict values", hdr[:nl.ValuesValues], v); err != nil {
			return err
		}
		t.values = v + nl.ValuesValues
		t.nvalues = min(t.n, uint64(hdr[nl.ValuesCapacity]))
	}
	if t.values+8*t.nvalues < t.values {
		return fmt.Errorf("dict values at %#x: past the address space", v)
	}
	return nil
}

// dictEntry is an entry of a table with a key and a value: its index, its
// key's address and its value's.
type dictEntry struct{ i, key, value uint64 }

// eachChunk calls fn with the entries of t that have a key and a value,
// in order, a chunk of at most entryChunk at a time, until fn says no more.
func (r *namesReader) eachChunk(t table, fn func(ents []dictEntry) (bool, error)) error {
	var out [entryChunk]dictEntry
	for i := uint64(0); i < t.n; i += entryChunk {
		k := min(entryChunk, t.n-i)
		ents := r.ents[:k*t.size]
		if err := r.read("dict entries", ents, t.entries+i*t.size); err != nil {
			return err
		}
		var vals []byte
		if t.values != 0 && i < t.nvalues {
			vals = r.vals[:min(k, t.nvalues-i)*8]
			if err := r.read("dict values", vals, t.values+i*8); err != nil {
				return err
			}
		}
		n := 0
		for j := uint64(0); j < k; j++ {
			key := le64(ents, j*t.size+t.key)
			value := le64(ents, j*t.size+t.value)
			if t.values != 0 {
				value = le64(vals, j*8) // 0 past the values there are
			}
			if key != 0 && value != 0 {
				out[n] = dictEntry{i + j, key, value}
				n++
			}
		}
		if n == 0 {
			continue
		}
		if more, err := fn(out[:n]); err != nil || !more {
			return err
		}
	}
	return nil
}

// each calls fn with each entry of t that has a key and a value, in
// order, until fn says no more.
func (r *namesReader) each(t table, fn func(i, key, value uint64) (bool, error)) error {
	return r.eachChunk(t, func(ents []dictEntry) (bool, error) {
		for _, e := range ents {
			if more, err := fn(e.i, e.key, e.value); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	})
}

// get is the value of the str key name in t: errNotFound if none. The
// keys of a chunk of entries are read at once, in one system call where
// the memory can, and then the characters of those of name's length.
func (r *namesReader) get(t table, name string) (uint64, error) {
	var found uint64
	err := r.eachChunk(t, func(ents []dictEntry) (bool, error) {
		j, err := r.findKey(ents, name)
		if err != nil || j < 0 {
			return err == nil, err
		}
		found = ents[j].value
		if t.values != 0 && len(r.slots) < maxTypeCache {
			r.slots[addrName{t.keys, name}] = ents[j].i
		}
		return false, nil
	})
	if err != nil {
		return 0, err
	}
	if found == 0 {
		return 0, fmt.Errorf("no key %q: %w", name, errNotFound)
	}
	return found, nil
}

// dictGet is the value of the str key name of the dict at addr.
func (r *namesReader) dictGet(addr uint64, name string) (uint64, error) {
	t, err := r.dict(addr)
	if err != nil {
		return 0, err
	}
	return r.getSlot(t, name)
}

// getSlot is get, first trying the slot name had in the same shared keys.
func (r *namesReader) getSlot(t table, name string) (uint64, error) {
	if i, ok := r.slots[addrName{t.keys, name}]; ok && t.values != 0 && i < t.nvalues {
		v, err := r.ptr("dict value", t.values+8*i)
		if err != nil || v != 0 {
			return v, err
		}
	}
	return r.get(t, name)
}

// findKey is the index in ents of the entry whose key is a str equal to
// want, an ASCII name, or -1: the keys' headers (PyASCIIObject) are read,
// and the characters of those that are compact ASCII strs of want's
// length.
func (r *namesReader) findKey(ents []dictEntry, want string) (int, error) {
	l := r.l
	n := l.ASCIISize
	if n > uint64(len(r.hdrs[0])) || l.UnicodeState+4 > n || l.UnicodeLength+8 > n || l.ObjectType+8 > n {
		return -1, fmt.Errorf("str layout out of bounds")
	}
	if len(want) > len(r.hdrs[0]) {
		return -1, fmt.Errorf("key %q too long to compare", want)
	}
	if len(ents) > len(r.hdrs) {
		return -1, fmt.Errorf("%d keys at once, more than %d", len(ents), len(r.hdrs))
	}
	bufs, addrs := r.bufs[:len(ents)], r.addrs[:len(ents)]
	for j, e := range ents {
		bufs[j], addrs[j] = r.hdrs[j][:n], e.key
	}
	if err := r.readBatch("str", bufs, addrs); err != nil {
		return -1, err
	}
	var which [entryChunk]int
	m := 0
	for j, e := range ents {
		hdr := r.hdrs[j][:n]
		tp := le64(hdr, l.ObjectType)
		if r.in.StrType != 0 {
			if tp != r.in.StrType {
				continue
			}
		} else if ok, err := r.typeIs(tp, "str"); err != nil {
			return -1, err
		} else if !ok {
			continue
		}
		state := le32(hdr, l.UnicodeState)
		kind, compact, ascii := state>>2&7, state>>5&1, state>>6&1
		if kind != 1 || compact != 1 || ascii != 1 || le64(hdr, l.UnicodeLength) != uint64(len(want)) {
			continue
		}
		which[m] = j
		bufs[m], addrs[m] = r.hdrs[m][:len(want)], e.key+l.ASCIISize
		m++
	}
	if m == 0 {
		return -1, nil
	}
	if err := r.readBatch("str data", bufs[:m], addrs[:m]); err != nil {
		return -1, err
	}
	for k := 0; k < m; k++ {
		if string(bufs[k]) == want {
			return which[k], nil
		}
	}
	return -1, nil
}

// readBatch fills bufs[i] from addrs[i], counted, in one system call
// where the memory can (a Memory with ReadMany, as processMemory has),
// else one by one.
func (r *namesReader) readBatch(what string, bufs [][]byte, addrs []uint64) error {
	if r.reads+len(bufs) > maxNameReads {
		return errNameReads
	}
	if v, ok := r.mem.(interface {
		ReadMany(bufs [][]byte, addrs []uint64) error
	}); ok && len(bufs) > 1 {
		valid := true
		for i, a := range addrs {
			valid = valid && a != 0 && a+uint64(len(bufs[i])) >= a
		}
		if valid {
			r.reads++
			if v.ReadMany(bufs, addrs) == nil {
				return nil
			}
		}
		// One failed; which, the reads one by one say.
	}
	for i, a := range addrs {
		if err := r.read(what, bufs[i], a); err != nil {
			return err
		}
	}
	return nil
}

// ident reads the int at addr: a thread's ident, positive and of at most
// 64 bits.
func (r *namesReader) ident(addr uint64) (uint64, error) {
	nl := r.nl
	var b [64]byte
	// The header and the first digit, which every int has room for.
	n := nl.LongDigits + 4
	if n > uint64(len(b)) || nl.LongSize+8 > nl.LongDigits || r.l.ObjectType+8 > nl.LongDigits {
		return 0, fmt.Errorf("int layout out of bounds")
	}
	if err := r.read("int", b[:n], addr); err != nil {
		return 0, err
	}
	if err := r.checkType(addr, le64(b[:], r.l.ObjectType), "int"); err != nil {
		return 0, err
	}
	var ndigits uint64
	size := le64(b[:], nl.LongSize)
	if nl.LongTag {
		// Include/internal/pycore_long.h: the sign in the low 2 bits
		// (0 positive, 1 zero, 2 negative), the digits above 3 bits.
		sign := size & longSignMask
		ndigits = size >> longNonSizeBits
		if sign == longSignZero {
			ndigits = 0
		} else if sign != 0 {
			return 0, fmt.Errorf("int at %#x: not a positive int", addr)
		}
	} else {
		if int64(size) < 0 {
			return 0, fmt.Errorf("int at %#x: not a positive int", addr)
		}
		ndigits = size
	}
	if ndigits == 0 || ndigits > 3 {
		return 0, fmt.Errorf("int at %#x: %d digits, not a thread ident", addr, ndigits)
	}
	if ndigits > 1 {
		if err := r.read("int digits", b[n:n+4*(ndigits-1)], addr+n); err != nil {
			return 0, err
		}
	}
	var v uint64
	for i := uint64(0); i < ndigits; i++ {
		d := uint64(le32(b[:], nl.LongDigits+4*i))
		if d >= 1<<longShift || i == 2 && d >= 1<<(64-2*longShift) {
			return 0, fmt.Errorf("int at %#x: digit %d out of range", addr, i)
		}
		v |= d << (longShift * i)
	}
	return v, nil
}

// typeFields reads the flags and dict offset of the type at tp.
func (r *namesReader) typeFields(tp uint64) (typeFields, error) {
	if f, ok := r.fields[tp]; ok {
		return f, nil
	}
	nl := r.nl
	lo := min(nl.TypeFlags, nl.TypeDictOffset)
	hi := max(nl.TypeFlags, nl.TypeDictOffset) + 8
	var b [256]byte
	if hi-lo > uint64(len(b)) {
		return typeFields{}, fmt.Errorf("type layout out of bounds")
	}
	if err := r.read("type", b[:hi-lo], tp+lo); err != nil {
		return typeFields{}, err
	}
	f := typeFields{flags: le64(b[:], nl.TypeFlags-lo), dictOffset: int64(le64(b[:], nl.TypeDictOffset-lo))}
	if len(r.fields) >= maxTypeCache {
		clear(r.fields)
	}
	r.fields[tp] = f
	return f, nil
}

// threadName reads the attribute _name of the Thread object at obj.
func (r *namesReader) threadName(obj uint64) (string, error) {
	v, err := r.attr(obj, "_name")
	if err != nil {
		return "", err
	}
	// str checks the type itself where it knows the str type's address.
	if r.in.StrType == 0 {
		if err := r.isType(v, "str"); err != nil {
			return "", fmt.Errorf("the thread's _name: %w", err)
		}
	}
	r.reads += 2 // str's reads: its header and its characters
	return r.in.str(r.mem, v)
}

// attr is the instance attribute name of the object at obj, an instance
// of a class (a heap type), where the version keeps its attributes.
func (r *namesReader) attr(obj uint64, name string) (uint64, error) {
	nl := r.nl
	tp, err := r.ptr("object's type", obj+r.l.ObjectType)
	if err != nil {
		return 0, err
	}
	tf, err := r.typeFields(tp)
	if err != nil {
		return 0, err
	}
	if tf.flags&tpflagsHeapType == 0 {
		return 0, fmt.Errorf("%#x is not an instance of a class", obj)
	}
	if nl.ManagedDict == 0 || tf.flags&tpflagsManagedDict == 0 {
		// A __dict__ at tp_dictoffset; a negative offset counts from the
		// end of a variable-sized object, which a Thread is not.
		if tf.dictOffset <= 0 || tf.dictOffset > maxDictOffset {
			return 0, fmt.Errorf("%#x: no __dict__ at a fixed offset (tp_dictoffset %d)", obj, tf.dictOffset)
		}
		return r.dictAt(obj+uint64(tf.dictOffset), name)
	}
	if obj < max(nl.ManagedDict, nl.ManagedValues) {
		return 0, fmt.Errorf("%#x: no room for a managed dict before it", obj)
	}
	switch {
	case nl.InlineValues != 0:
		// 3.13: the inline values while valid, else the dict.
		if tf.flags&tpflagsInlineValues != 0 {
			v := obj + nl.InlineValues
			var hdr [16]byte
			if nl.ValuesValid >= nl.ValuesValues || nl.ValuesValues > uint64(len(hdr)) {
				return 0, fmt.Errorf("dict values layout out of bounds")
			}
			if err := r.read("inline values", hdr[:nl.ValuesValues], v); err != nil {
				return 0, err
			}
			if hdr[nl.ValuesValid] != 0 {
				return r.values(tp, v, name)
			}
		}
	case nl.ManagedValues != 0:
		// 3.11: the values if there are, else the dict.
		v, err := r.ptr("managed values", obj-nl.ManagedValues)
		if err != nil {
			return 0, err
		}
		if v != 0 {
			return r.values(tp, v, name)
		}
	case nl.TaggedValues:
		// 3.12: one word, the values (tagged) or the dict.
		v, err := r.ptr("managed dict or values", obj-nl.ManagedDict)
		if err != nil {
			return 0, err
		}
		if v&1 != 0 {
			return r.values(tp, v+1, name)
		}
	}
	return r.dictAt(obj-nl.ManagedDict, name)
}

// dictAt is the value of the str key name of the instance dict whose
// pointer is at at.
func (r *namesReader) dictAt(at uint64, name string) (uint64, error) {
	d, err := r.ptr("instance dict pointer", at)
	if err != nil {
		return 0, err
	}
	if d == 0 {
		return 0, fmt.Errorf("no instance dict: %w", errNotFound)
	}
	return r.dictGet(d, name)
}

// values is the attribute name of the values at v of an instance of the
// class at tp, of its shared keys.
func (r *namesReader) values(tp, v uint64, name string) (uint64, error) {
	nl := r.nl
	if nl.HeapTypeCachedKeys == 0 {
		return 0, fmt.Errorf("no shared keys in this version")
	}
	keys, err := r.ptr("type's cached keys", tp+nl.HeapTypeCachedKeys)
	if err != nil {
		return 0, err
	}
	if keys == 0 {
		return 0, fmt.Errorf("values at %#x of a class with no shared keys", v)
	}
	t, err := r.keysTable(keys)
	if err != nil {
		return 0, err
	}
	if err := r.split(&t, v); err != nil {
		return 0, err
	}
	return r.getSlot(t, name)
}
