package symbol

const (
	pcdataInlTreeIndex = 2 // abi.PCDATA_InlTreeIndex
	funcdataInlTree    = 3 // abi.FUNCDATA_InlTree

	// inlinedCall120 is the size of a Go 1.20+ inline tree entry
	// (runtime.inlinedCall): funcID uint8, 3 bytes pad, nameOff int32,
	// parentPc int32, startLine int32.
	inlinedCall120 = 16

	// inlinedCall118 is the size of a Go 1.18 and 1.19 entry: parent
	// int16, funcID uint8, pad, file int32, line int32, nameOff int32,
	// parentPc int32.
	inlinedCall118 = 20

	// maxInlineDepth bounds an inline chain. The compiler's inlining
	// budget keeps real chains to a few dozen; the bound turns a corrupt
	// tree with a cycle into a truncated chain.
	maxInlineDepth = 128
)

// frames appends the logical frames at pc, innermost first: the functions
// inlined there (Inlined), then the physical function, each with the
// file:line of pc in it, the call sites' lines for the callers. This is
// the runtime's inlineUnwinder: the InlTreeIndex pcdata at pc selects an
// inline tree entry, which names the inlined function and, by parentPc,
// an instruction whose position is the call site; the walk repeats from
// there until the index is -1. The tree has no length, so every index is
// checked against the end of gofunc.
func (t *pclntab) frames(pc uint64, dst []Frame) ([]Frame, bool) {
	f, ok := t.findFunc(pc)
	if !ok {
		return dst, false
	}
	name, ok := t.funcName(t.nameOff(f))
	if !ok {
		return dst, false
	}
	size, nameAt, parentAt := t.inlinedCallLayout()
	tree := t.funcdata(f, funcdataInlTree)
	for depth := 0; tree != nil && depth < maxInlineDepth; depth++ {
		idx, ok := t.pcdata(f, pcdataInlTreeIndex, pc)
		if !ok || idx < 0 || uint64(idx) >= uint64(len(tree)/size) {
			break
		}
		call := tree[size*int(idx):]
		callee, ok := t.funcName(t.bo.Uint32(call[nameAt:]))
		if !ok {
			break
		}
		parentPc := int32(t.bo.Uint32(call[parentAt:]))
		parent := f.entry + uint64(parentPc)
		if parentPc < 0 || parent < f.entry || parent >= f.end {
			break
		}
		file, line := t.fileLine(f, pc)
		dst = append(dst, Frame{Func: callee, File: file, Line: line, Inlined: true})
		pc = parent
	}
	file, line := t.fileLine(f, pc)
	return append(dst, Frame{Func: name, File: file, Line: line}), true
}

// inlinedCallLayout returns the size of an inline tree entry and where its
// nameOff and parentPc are.
func (t *pclntab) inlinedCallLayout() (size, nameAt, parentAt int) {
	if t.magic == pclntabMagic118 {
		return inlinedCall118, 12, 16
	}
	return inlinedCall120, 4, 8
}
