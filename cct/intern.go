package cct

import "fmt"

// FuncID names a function interned in one Tree; IDs are dense and never reused, so views
// index slices by them. They are local to a Tree: Merge re-interns.
type FuncID uint32

// RootFunc is the function of the synthetic root node, "[root]". It is never returned by
// Intern, so that no real function can be mistaken for the root.
const RootFunc FuncID = 0

const rootName = "[root]"

// Func is one function as profiles know it. Two frames are the same function when Name,
// Module and File agree.
type Func struct {
	Name   string // full name
	Short  string // precomputed display form, see ShortName
	Module string // binary path
	File   string // source file, when known
	// System is the linkage name when Name is its demangled form (pprof's SystemName);
	// "" when they are the same. Probes and symbol tables need it.
	System string
}

// LinkName is the name the binary's symbol table has for f.
func (f Func) LinkName() string {
	if f.System != "" {
		return f.System
	}
	return f.Name
}

type funcKey struct{ name, module, file string }

// Intern returns the ID of f, adding it on first sight. Short is computed from Name when
// empty, once, so that views never re-derive it per row.
func (t *Tree) Intern(f Func) FuncID {
	k := funcKey{f.Name, f.Module, f.File}
	if t.funcIndex == nil {
		t.indexFuncs()
	}
	if id, ok := t.funcIndex[k]; ok {
		return id
	}
	if f.Short == "" {
		f.Short = ShortName(f.Name)
	}
	id := FuncID(len(t.funcs))
	t.funcs = append(t.funcs, f)
	t.funcIndex[k] = id
	return id
}

// Lookup is the ID of the function interned with that name, module and
// file, without interning it: a read, safe on a settled clone.
func (t *Tree) Lookup(name, module, file string) (FuncID, bool) {
	if t.funcIndex == nil {
		// A Clone, which has no index: it is read by the views, which
		// look a function up now and then, and making the index here
		// would be a write.
		for i := range t.funcs {
			if f := &t.funcs[i]; i != int(RootFunc) && f.Name == name && f.Module == module && f.File == file {
				return FuncID(i), true
			}
		}
		return 0, false
	}
	id, ok := t.funcIndex[funcKey{name, module, file}]
	return id, ok
}

// indexFuncs makes the index Intern finds functions by, for a Clone that
// interns.
func (t *Tree) indexFuncs() {
	t.funcIndex = make(map[funcKey]FuncID, len(t.funcs))
	for i, f := range t.funcs {
		if i != int(RootFunc) {
			t.funcIndex[funcKey{f.Name, f.Module, f.File}] = FuncID(i)
		}
	}
}

// Func returns the interned function id. It panics if id was not interned in t.
func (t *Tree) Func(id FuncID) Func { return t.funcs[id] }

// NumFuncs is the number of interned functions, RootFunc included: valid IDs are
// [0, NumFuncs()).
func (t *Tree) NumFuncs() int { return len(t.funcs) }

func (t *Tree) checkFunc(id FuncID) {
	if id == RootFunc || int(id) >= len(t.funcs) {
		panic(fmt.Sprintf("cct: FuncID %d was not interned in this tree", id))
	}
}
