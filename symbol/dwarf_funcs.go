package symbol

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"slices"
)

// unitTable is what one compilation unit says about its code: the
// functions (out-of-line subprograms and inlined instances) as a tree,
// flattened into disjoint address spans that each name the innermost
// function covering them, and the unit's line table.
type unitTable struct {
	funcs []funcNode
	spans []funcSpan // sorted, disjoint
	lineTable
}

// funcNode is a subprogram (parent -1) or an inlined instance of a
// function inside parent. A node's index is always larger than its
// parent's, so walking parents ends.
type funcNode struct {
	name     string       // when known without following references
	ref      dwarf.Offset // DIE to resolve the name from when name is ""
	parent   int32
	callFile int32 // index into files: where parent calls this instance
	callLine int32
}

// funcSpan maps [lo, hi) to the innermost function node there.
type funcSpan struct {
	lo, hi uint64
	node   int32
}

// descend lists the DIEs whose children can hold code: the unit's
// scopes. Everything else (types, variables, parameters, call sites) is
// skipped whole, which is most of a unit. Types hold only declarations of
// their methods: GCC, clang and rustc put the definitions, the DIEs with
// addresses, in the enclosing namespace, pointing back with
// DW_AT_specification.
var descend = map[dwarf.Tag]bool{
	dwarf.TagNamespace:       true,
	dwarf.TagModule:          true,
	dwarf.TagLexDwarfBlock:   true,
	dwarf.TagTryDwarfBlock:   true,
	dwarf.TagCatchDwarfBlock: true,
}

// parseUnitTable reads the unit whose DIE is at off, up to end, where the
// next unit's DIE is; line is the .debug_line section, in byte order
// order. A DW_AT_sibling that jumps out of the unit ends it, so corrupt
// siblings cannot make every unit parse someone else's DIEs.
func parseUnitTable(d *dwarf.Data, off, end dwarf.Offset, line []byte, order binary.ByteOrder) *unitTable {
	r := d.Reader()
	r.Seek(off)
	cu, err := r.Next()
	if err != nil || cu == nil || cu.Tag != dwarf.TagCompileUnit {
		return nil
	}
	t := &unitTable{}
	t.lineTable = readLineTable(d, cu, line, order)
	if !cu.Children {
		return t
	}
	var (
		spans []funcSpan
		depth []int32 // per node: how many inlined levels deep
		// scopes holds, for each DIE whose children are being read, the
		// innermost function node enclosing them (-1 outside functions).
		scopes = []int32{-1}
	)
	for len(scopes) > 0 {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag != 0 && (e.Offset <= off || e.Offset >= end) {
			break // null entries carry no offset
		}
		switch e.Tag {
		case 0:
			scopes = scopes[:len(scopes)-1]
			continue
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
			rs := entryRanges(d, e)
			if len(rs) == 0 {
				// A declaration or an abstract instance: no code here or
				// in its children.
				r.SkipChildren()
				continue
			}
			n := funcNode{parent: -1, callFile: -1}
			lvl := int32(0)
			if e.Tag == dwarf.TagInlinedSubroutine {
				n.parent = scopes[len(scopes)-1]
				if n.parent >= 0 {
					lvl = depth[n.parent] + 1
				}
				if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok && v >= 0 && v <= 1<<30 {
					n.callFile = int32(v)
				}
				if v, ok := e.Val(dwarf.AttrCallLine).(int64); ok && v > 0 && v <= 1<<30 {
					n.callLine = int32(v)
				}
			}
			n.name, n.ref = directName(e)
			idx := int32(len(t.funcs))
			t.funcs = append(t.funcs, n)
			depth = append(depth, lvl)
			for _, r := range rs {
				spans = append(spans, funcSpan{lo: r[0], hi: r[1], node: idx})
			}
			if e.Children {
				scopes = append(scopes, idx)
			}
		default:
			if e.Children {
				if descend[e.Tag] {
					scopes = append(scopes, scopes[len(scopes)-1])
				} else {
					r.SkipChildren()
				}
			}
		}
	}
	t.spans = flattenSpans(spans, depth)
	t.funcs = slices.Clip(t.funcs)
	return t
}

// entryRanges returns the address ranges of e, without the empty ones and
// without those at 0 or all-ones (code the linker discarded).
func entryRanges(d *dwarf.Data, e *dwarf.Entry) [][2]uint64 {
	var rs [][2]uint64
	if e.AttrField(dwarf.AttrRanges) != nil {
		rs, _ = d.Ranges(e)
	} else if lo, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
		// The common case, decoded here: Ranges would re-read the unit's
		// DIE for every call.
		switch hf := e.AttrField(dwarf.AttrHighpc); {
		case hf == nil:
		case hf.Class == dwarf.ClassAddress:
			if hi, ok := hf.Val.(uint64); ok {
				rs = [][2]uint64{{lo, hi}}
			}
		case hf.Class == dwarf.ClassConstant:
			if n, ok := hf.Val.(int64); ok {
				rs = [][2]uint64{{lo, lo + uint64(n)}}
			}
		}
	}
	return slices.DeleteFunc(rs, func(r [2]uint64) bool {
		return r[0] == 0 || r[1] <= r[0] || r[0] == ^uint64(0)
	})
}

// directName returns e's name when e itself settles it: a linkage name,
// or a plain name with no origin or specification that could carry a
// linkage name. Otherwise it returns the DIE to resolve lazily.
func directName(e *dwarf.Entry) (string, dwarf.Offset) {
	if n := linkageName(e); n != "" {
		return n, 0
	}
	if e.AttrField(dwarf.AttrAbstractOrigin) == nil && e.AttrField(dwarf.AttrSpecification) == nil {
		if n, _ := e.Val(dwarf.AttrName).(string); n != "" {
			return n, 0
		}
	}
	return "", e.Offset
}

// flattenSpans turns the nested ranges of functions into disjoint spans,
// each naming the innermost function covering it, so a lookup is one
// binary search. depth orders nodes that start at the same address:
// the outer one opens first. Ranges that overlap without nesting (corrupt
// input) are cut to fit inside the range they start in.
func flattenSpans(spans []funcSpan, depth []int32) []funcSpan {
	slices.SortFunc(spans, func(a, b funcSpan) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		if c := cmp.Compare(depth[a.node], depth[b.node]); c != 0 {
			return c
		}
		return cmp.Compare(b.hi, a.hi)
	})
	out := make([]funcSpan, 0, len(spans))
	emit := func(lo, hi uint64, node int32) {
		if lo >= hi {
			return
		}
		if k := len(out) - 1; k >= 0 && out[k].hi == lo && out[k].node == node {
			out[k].hi = hi
			return
		}
		out = append(out, funcSpan{lo, hi, node})
	}
	var open []funcSpan // nested, innermost last; his do not increase
	pos := uint64(0)
	closeTo := func(lo uint64) {
		for len(open) > 0 && open[len(open)-1].hi <= lo {
			top := open[len(open)-1]
			emit(pos, top.hi, top.node)
			pos = max(pos, top.hi)
			open = open[:len(open)-1]
		}
	}
	for _, s := range spans {
		closeTo(s.lo)
		if len(open) > 0 {
			top := open[len(open)-1]
			emit(pos, s.lo, top.node)
			s.hi = min(s.hi, top.hi)
		}
		pos = s.lo
		if s.hi > s.lo {
			open = append(open, s)
		}
	}
	closeTo(^uint64(0))
	return slices.Clip(out)
}

// frames appends the inline chain at addr, innermost first, if a function
// of this unit covers addr and the outermost one has a name.
func (t *unitTable) frames(s *dwarfSource, addr uint64, dst []Frame) ([]Frame, bool) {
	i, _ := slices.BinarySearchFunc(t.spans, addr, func(sp funcSpan, a uint64) int {
		if sp.lo <= a {
			return -1
		}
		return 1
	})
	if i == 0 || addr >= t.spans[i-1].hi {
		return dst, false
	}
	start := len(dst)
	file, line := t.lineAt(addr)
	// Parents have smaller indexes than their children, and a node with
	// parent -1 ends the walk, so this terminates.
	n := t.spans[i-1].node
	for {
		fn := &t.funcs[n]
		name := fn.name
		if fn.parent < 0 {
			// The function itself is named by the symbol table when
			// that knows it, as everywhere else in the profile: DWARF
			// names the source function (glibc's __GI___libc_malloc),
			// the symbol table the entry point callers know (malloc),
			// which is also what probes attach to.
			if sym, ok := s.syms.lookup(addr); ok {
				name = sym
			} else if name == "" && fn.ref != 0 {
				name = s.name(fn.ref)
			}
			if name == "" {
				return dst[:start], false
			}
			return append(dst, Frame{Func: name, File: file, Line: line}), true
		}
		if name == "" && fn.ref != 0 {
			name = s.name(fn.ref)
		}
		// An inlined instance whose name cannot be found is left out;
		// its caller's frame still gets the right call site.
		if name != "" {
			dst = append(dst, Frame{Func: name, File: file, Line: line, Inlined: true})
		}
		file, line = t.file(fn.callFile), int(fn.callLine)
		n = fn.parent
	}
}
