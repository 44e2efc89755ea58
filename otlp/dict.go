package otlp

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// dict interns entries into one ProfilesDictionary, each table deduplicated through a
// map from an entry's encoded content to its index. pdata's SetString, SetLocation...
// scan the whole table per call, which is quadratic in a profile's size; these maps
// make an entry one lookup. The maps outlive the dictionary: sync clears them for the
// next one, keeping their memory, so a Builder's windows do not regrow them.
//
// Entries already in a dictionary (another writer's, or this one's before a previous
// Append) are indexed too, under the same encoding, so nothing is written twice. An
// entry changed in place behind dict's back is not noticed: dictionaries only grow.
type dict struct {
	d     pprofile.ProfilesDictionary
	valid bool
	// seen is how many entries of each table are indexed.
	seen                                        [7]int
	strs                                        map[string]int32
	funcs, maps, locs, stacks, attrTable, links map[string]int32
	key                                         []byte
	lines                                       []line
}

const (
	tabStrings = iota
	tabFunctions
	tabMappings
	tabLocations
	tabStacks
	tabAttributes
	tabLinks
)

// line is one line of a location: a function and a line (and column) in it.
type line struct {
	fn        int32
	line, col int64
}

// sync makes d the dictionary entries go to. Every table gets its zero entry at index
// 0 if it has none (the format requires one: index 0 means "none"), and the entries
// added since the last sync are indexed.
func (x *dict) sync(d pprofile.ProfilesDictionary) {
	if x.strs == nil {
		x.strs = make(map[string]int32)
		x.funcs = make(map[string]int32)
		x.maps = make(map[string]int32)
		x.locs = make(map[string]int32)
		x.stacks = make(map[string]int32)
		x.attrTable = make(map[string]int32)
		x.links = make(map[string]int32)
	}
	lens := tableLens(d)
	stale := !x.valid || x.d != d
	for i := range lens {
		stale = stale || lens[i] < x.seen[i]
	}
	if stale {
		clear(x.strs)
		clear(x.funcs)
		clear(x.maps)
		clear(x.locs)
		clear(x.stacks)
		clear(x.attrTable)
		clear(x.links)
		x.seen = [7]int{}
		x.d, x.valid = d, true
	}
	if d.StringTable().Len() == 0 {
		d.StringTable().Append("")
	}
	if d.FunctionTable().Len() == 0 {
		d.FunctionTable().AppendEmpty()
	}
	if d.MappingTable().Len() == 0 {
		d.MappingTable().AppendEmpty()
	}
	if d.LocationTable().Len() == 0 {
		d.LocationTable().AppendEmpty()
	}
	if d.StackTable().Len() == 0 {
		d.StackTable().AppendEmpty()
	}
	if d.AttributeTable().Len() == 0 {
		d.AttributeTable().AppendEmpty()
	}
	if d.LinkTable().Len() == 0 {
		d.LinkTable().AppendEmpty()
	}
	x.index()
}

// index adds the entries past seen to the maps; the first of equal entries keeps its
// index.
func (x *dict) index() {
	d := x.d
	for i := x.seen[tabStrings]; i < d.StringTable().Len(); i++ {
		if _, ok := x.strs[d.StringTable().At(i)]; !ok {
			x.strs[d.StringTable().At(i)] = int32(i)
		}
	}
	for i := x.seen[tabFunctions]; i < d.FunctionTable().Len(); i++ {
		f := d.FunctionTable().At(i)
		x.keyFunction(f.NameStrindex(), f.SystemNameStrindex(), f.FilenameStrindex(), f.StartLine())
		keep(x.funcs, x.key, i)
	}
	for i := x.seen[tabMappings]; i < d.MappingTable().Len(); i++ {
		m := d.MappingTable().At(i)
		x.keyMapping(m.FilenameStrindex(), m.MemoryStart(), m.MemoryLimit(), m.FileOffset(), m.AttributeIndices().AsRaw())
		keep(x.maps, x.key, i)
	}
	for i := x.seen[tabLocations]; i < d.LocationTable().Len(); i++ {
		l := d.LocationTable().At(i)
		x.lines = x.lines[:0]
		for _, ln := range l.Lines().All() {
			x.lines = append(x.lines, line{ln.FunctionIndex(), ln.Line(), ln.Column()})
		}
		x.keyLocation(l.MappingIndex(), l.Address(), l.AttributeIndices().AsRaw(), x.lines)
		keep(x.locs, x.key, i)
	}
	for i := x.seen[tabStacks]; i < d.StackTable().Len(); i++ {
		x.keyStack(d.StackTable().At(i).LocationIndices().AsRaw())
		keep(x.stacks, x.key, i)
	}
	for i := x.seen[tabAttributes]; i < d.AttributeTable().Len(); i++ {
		a := d.AttributeTable().At(i)
		if x.keyAttr(a.KeyStrindex(), a.UnitStrindex(), a.Value()) {
			keep(x.attrTable, x.key, i)
		}
	}
	for i := x.seen[tabLinks]; i < d.LinkTable().Len(); i++ {
		l := d.LinkTable().At(i)
		x.keyLink(l.TraceID(), l.SpanID())
		keep(x.links, x.key, i)
	}
	x.seen = tableLens(d)
}

func tableLens(d pprofile.ProfilesDictionary) [7]int {
	return [7]int{d.StringTable().Len(), d.FunctionTable().Len(), d.MappingTable().Len(),
		d.LocationTable().Len(), d.StackTable().Len(), d.AttributeTable().Len(), d.LinkTable().Len()}
}

func keep(m map[string]int32, key []byte, i int) {
	if _, ok := m[string(key)]; !ok {
		m[string(key)] = int32(i)
	}
}

func appendInt32s(b []byte, s []int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	for _, v := range s {
		b = binary.AppendVarint(b, int64(v))
	}
	return b
}

// appendValue encodes an attribute value; false for a map, whose entries have no
// order to encode them in (such attributes are never deduplicated against).
func appendValue(b []byte, v pcommon.Value) ([]byte, bool) {
	b = append(b, byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		b = appendString(b, v.Str())
	case pcommon.ValueTypeInt:
		b = binary.AppendVarint(b, v.Int())
	case pcommon.ValueTypeBool:
		if v.Bool() {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case pcommon.ValueTypeDouble:
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.Double()))
	case pcommon.ValueTypeBytes:
		b = binary.AppendUvarint(b, uint64(v.Bytes().Len()))
		for i := range v.Bytes().Len() {
			b = append(b, v.Bytes().At(i))
		}
	case pcommon.ValueTypeSlice:
		b = binary.AppendUvarint(b, uint64(v.Slice().Len()))
		for _, e := range v.Slice().All() {
			var ok bool
			if b, ok = appendValue(b, e); !ok {
				return b, false
			}
		}
	case pcommon.ValueTypeMap:
		return b, false
	}
	return b, true
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// str is the index of s in the string table.
func (x *dict) str(s string) int32 {
	if i, ok := x.strs[s]; ok {
		return i
	}
	t := x.d.StringTable()
	t.Append(s)
	i := int32(t.Len() - 1)
	x.strs[s] = i
	x.seen[tabStrings]++
	return i
}

func (x *dict) keyFunction(name, system, file int32, start int64) {
	x.key = x.key[:0]
	x.key = binary.AppendVarint(x.key, int64(name))
	x.key = binary.AppendVarint(x.key, int64(system))
	x.key = binary.AppendVarint(x.key, int64(file))
	x.key = binary.AppendVarint(x.key, start)
}

// function is the index of a function, its strings given by index.
func (x *dict) function(name, system, file int32, start int64) int32 {
	x.keyFunction(name, system, file, start)
	if i, ok := x.funcs[string(x.key)]; ok {
		return i
	}
	f := x.d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(name)
	f.SetSystemNameStrindex(system)
	f.SetFilenameStrindex(file)
	f.SetStartLine(start)
	return x.added(x.funcs, tabFunctions, x.d.FunctionTable().Len())
}

// added files the entry just appended (the table is n long now) under x.key.
func (x *dict) added(m map[string]int32, table, n int) int32 {
	i := int32(n - 1)
	m[string(x.key)] = i
	x.seen[table]++
	return i
}

func (x *dict) keyMapping(file int32, start, limit, offset uint64, attrs []int32) {
	x.key = x.key[:0]
	x.key = binary.AppendVarint(x.key, int64(file))
	x.key = binary.AppendUvarint(x.key, start)
	x.key = binary.AppendUvarint(x.key, limit)
	x.key = binary.AppendUvarint(x.key, offset)
	x.key = appendInt32s(x.key, attrs)
}

// mapping is the index of a mapping with attributes attrs.
func (x *dict) mapping(file int32, start, limit, offset uint64, attrs []int32) int32 {
	x.keyMapping(file, start, limit, offset, attrs)
	if i, ok := x.maps[string(x.key)]; ok {
		return i
	}
	m := x.d.MappingTable().AppendEmpty()
	m.SetFilenameStrindex(file)
	m.SetMemoryStart(start)
	m.SetMemoryLimit(limit)
	m.SetFileOffset(offset)
	m.AttributeIndices().Append(attrs...)
	return x.added(x.maps, tabMappings, x.d.MappingTable().Len())
}

func (x *dict) keyLocation(mapping int32, addr uint64, attrs []int32, lines []line) {
	x.key = x.key[:0]
	x.key = binary.AppendVarint(x.key, int64(mapping))
	x.key = binary.AppendUvarint(x.key, addr)
	x.key = appendInt32s(x.key, attrs)
	x.key = binary.AppendUvarint(x.key, uint64(len(lines)))
	for _, ln := range lines {
		x.key = binary.AppendVarint(x.key, int64(ln.fn))
		x.key = binary.AppendVarint(x.key, ln.line)
		x.key = binary.AppendVarint(x.key, ln.col)
	}
}

// location is the index of the location of address addr in mapping (0: none), with
// lines innermost first.
func (x *dict) location(mapping int32, addr uint64, attrs []int32, lines []line) int32 {
	x.keyLocation(mapping, addr, attrs, lines)
	if i, ok := x.locs[string(x.key)]; ok {
		return i
	}
	l := x.d.LocationTable().AppendEmpty()
	l.SetMappingIndex(mapping)
	l.SetAddress(addr)
	l.AttributeIndices().Append(attrs...)
	l.Lines().EnsureCapacity(len(lines))
	for _, ln := range lines {
		pl := l.Lines().AppendEmpty()
		pl.SetFunctionIndex(ln.fn)
		pl.SetLine(ln.line)
		pl.SetColumn(ln.col)
	}
	return x.added(x.locs, tabLocations, x.d.LocationTable().Len())
}

func (x *dict) keyStack(locs []int32) { x.key = appendInt32s(x.key[:0], locs) }

// stack is the index of the stack of locs, leaf first.
func (x *dict) stack(locs []int32) int32 {
	x.keyStack(locs)
	if i, ok := x.stacks[string(x.key)]; ok {
		return i
	}
	x.d.StackTable().AppendEmpty().LocationIndices().FromRaw(locs)
	return x.added(x.stacks, tabStacks, x.d.StackTable().Len())
}

// keyAttr encodes an attribute; false if its value cannot be (see appendValue).
func (x *dict) keyAttr(key, unit int32, v pcommon.Value) bool {
	x.key = x.key[:0]
	x.key = binary.AppendVarint(x.key, int64(key))
	x.key = binary.AppendVarint(x.key, int64(unit))
	var ok bool
	x.key, ok = appendValue(x.key, v)
	return ok
}

// attrValue is the index of an attribute with a copy of value v.
func (x *dict) attrValue(key, unit int32, v pcommon.Value) int32 {
	ok := x.keyAttr(key, unit, v)
	if ok {
		if i, found := x.attrTable[string(x.key)]; found {
			return i
		}
	}
	a := x.d.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(key)
	a.SetUnitStrindex(unit)
	v.CopyTo(a.Value())
	if !ok {
		x.seen[tabAttributes]++
		return int32(x.d.AttributeTable().Len() - 1)
	}
	return x.added(x.attrTable, tabAttributes, x.d.AttributeTable().Len())
}

// The attributes cctop writes: their values are made in a scratch Value first, which
// costs an allocation, but each (key, value) is looked up once per process.
func (x *dict) attrStr(key, v string) int32 {
	return x.attrValue(x.str(key), 0, pcommon.NewValueStr(v))
}

func (x *dict) attrInt(key string, v int64) int32 {
	return x.attrValue(x.str(key), 0, pcommon.NewValueInt(v))
}

func (x *dict) attrStrs(key string, vs []string) int32 {
	v := pcommon.NewValueSlice()
	v.Slice().EnsureCapacity(len(vs))
	for _, s := range vs {
		v.Slice().AppendEmpty().SetStr(s)
	}
	return x.attrValue(x.str(key), 0, v)
}

func (x *dict) keyLink(trace pcommon.TraceID, span pcommon.SpanID) {
	x.key = append(append(x.key[:0], trace[:]...), span[:]...)
}

// link is the index of a link to a span.
func (x *dict) link(trace pcommon.TraceID, span pcommon.SpanID) int32 {
	x.keyLink(trace, span)
	if i, ok := x.links[string(x.key)]; ok {
		return i
	}
	l := x.d.LinkTable().AppendEmpty()
	l.SetTraceID(trace)
	l.SetSpanID(span)
	return x.added(x.links, tabLinks, x.d.LinkTable().Len())
}
