package cct

import (
	"fmt"
	"strings"
)

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
	Short  string // precomputed short form (Go: package path trimmed to last element; C++ args dropped)
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

// ShortName is the display form of a symbol name: Go names lose their package path but for
// the last element (github.com/a/b/pkg.(*T).M -> pkg.(*T).M, a /vN major version counts
// as part of the element before it), C++ names lose their argument list, qualifiers and
// clone suffix (ns::f(int) const -> ns::f). C names and mangled names are kept.
func ShortName(name string) string {
	if i := strings.Index(name, " [clone "); i > 0 {
		name = name[:i]
	}
	if strings.Contains(name, "::") {
		return cppShort(name)
	}
	if s, ok := goShort(name); ok {
		return s
	}
	return cppShort(name)
}

// goShort trims the import path of a Go symbol. Only a slash before the first bracket
// counts: generic instantiations carry full paths inside [...].
func goShort(name string) (string, bool) {
	end := strings.IndexAny(name, "([ ")
	if end < 0 {
		end = len(name)
	}
	slash := strings.LastIndexByte(name[:end], '/')
	if slash < 0 {
		return "", false
	}
	rest := name[slash+1:]
	if dot := strings.IndexByte(rest, '.'); dot > 0 && isMajorVersion(rest[:dot]) {
		if prev := strings.LastIndexByte(name[:slash], '/'); prev+1 < slash {
			return name[prev+1:slash] + rest[dot:], true
		}
	}
	return rest, true
}

func isMajorVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cppShort cuts a demangled C++ name at its argument list: the last top-level "(...)" not
// followed by "::" (which would make it part of a scope, as in f()::{lambda()#1}).
// "(anonymous namespace)" and "operator()" are parts of the name, not argument lists.
func cppShort(name string) string {
	depth := 0
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '<', '[', '{':
			depth++
		case '>', ']', '}':
			if depth > 0 {
				depth--
			}
		case 'o':
			if strings.HasPrefix(name[i:], "operator") && (i == 0 || !isIdent(name[i-1])) {
				i += len("operator")
				// The operator's own symbol may contain (), <, > which must not count.
				if strings.HasPrefix(name[i:], "()") {
					i++
				} else {
					for i < len(name) && strings.IndexByte("<>=!+-*/%^&|~,[]", name[i]) >= 0 {
						i++
					}
				}
				i--
			}
		case '(':
			if depth > 0 {
				continue
			}
			if strings.HasPrefix(name[i:], "(anonymous namespace)") {
				i += len("(anonymous namespace)") - 1
				continue
			}
			if i > 0 && name[i-1] == '.' { // Go method receiver: pkg.(*T).M
				continue
			}
			end := matchParen(name, i)
			if end < 0 {
				return name[:i]
			}
			if strings.HasPrefix(name[end+1:], "::") {
				i = end
				continue
			}
			if i == 0 {
				return name
			}
			return name[:i]
		}
	}
	return name
}

func matchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
