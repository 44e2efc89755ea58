package cct

import "strings"

// ShortName is the display form of a symbol name, computed once when a function is
// interned. It keeps what tells a person which function it is and drops what tells the
// linker which instance:
//
//   - C++ (demangled): namespaces and classes stay; template arguments, parameter lists,
//     cv/ref qualifiers, return types, ABI tags and GCC clone suffixes go:
//     "long shapes::Accumulator<long>::add(long) const" -> "shapes::Accumulator::add".
//     Operator names, "(anonymous namespace)" and lambda/closure names ({lambda(int)#1})
//     are kept whole, and a function-local entity keeps its function's name without the
//     parameters: "apply(int)::{lambda(int)#1}::operator()(int) const" ->
//     "apply::{lambda(int)#1}::operator()".
//   - Rust (demangled, legacy or v0): the "::h<16 hex>" hash, crate disambiguators and
//     generic arguments go (turbofish included); a qualified self type keeps its brackets
//     only for a trait: "<alloc::vec::Vec<u8> as core::fmt::Debug>::fmt" ->
//     "<alloc::vec::Vec as core::fmt::Debug>::fmt", "<hashbrown::raw::RawTable<T>>::insert"
//     -> "hashbrown::raw::RawTable::insert".
//   - Go: the import path goes but for the package's own element (a /vN major version
//     counts as part of the element before it): "github.com/a/b/pkg.(*T).M" ->
//     "pkg.(*T).M"; closures (main.f.func1) and generic instantiations are kept.
//   - C names, mangled names and bracketed pseudo-functions ([vdso], [truncated],
//     [libfoo.so+0x1a2b0]) are kept.
//   - A PLT stub, "name@plt", is the short name of its target followed by "@plt".
//
// Distinct functions can share a short name (overloads, template instances); they stay
// distinct rows, which the full name tells apart.
func ShortName(name string) string {
	if stem, ok := strings.CutSuffix(name, "@plt"); ok && stem != "" {
		return ShortName(stem) + "@plt"
	}
	if s := shortName(name); s != "" {
		return s
	}
	return name
}

func shortName(name string) string {
	if i := strings.Index(name, " [clone "); i > 0 {
		name = name[:i]
	}
	switch {
	case name == "":
		return name
	case strings.Contains(name, "::"):
		return cxxShort(name)
	case isGoName(name):
		return goShort(name)
	case isIdent(name[0]) && (strings.ContainsAny(name, "(<") || strings.Contains(name, "[abi:")):
		// A C++ function or variable at global scope: f(int), void g<long>(long),
		// operator new(unsigned long), table[abi:cxx11].
		return cxxShort(name)
	}
	return name
}

// isGoName says whether name reads as a Go symbol: an import path (or a bare package
// name) ending in a package element, a dot, then the rest. C++ and Rust names were taken
// out before by their "::"; what is left here with a '.' before any bracket or space is
// either Go or a C symbol with a dotted suffix (f.part.0), which goShort keeps.
func isGoName(name string) bool {
	dot := -1
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '.' {
			dot = i
			break
		}
		if !isIdent(c) && c != '/' && c != '-' && c != '~' {
			return false
		}
	}
	return dot > 0 && name[0] != '/'
}

// goShort trims the import path of a Go symbol. Only a slash before the first bracket
// counts: generic instantiations carry full paths inside [...].
func goShort(name string) string {
	end := strings.IndexAny(name, "([ ")
	if end < 0 {
		end = len(name)
	}
	slash := strings.LastIndexByte(name[:end], '/')
	if slash < 0 {
		return name
	}
	rest := name[slash+1:]
	if dot := strings.IndexByte(rest, '.'); dot > 0 && isMajorVersion(rest[:dot]) {
		if prev := strings.LastIndexByte(name[:slash], '/'); prev+1 < slash {
			return name[prev+1:slash] + rest[dot:]
		}
	}
	return rest
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

// cxxPrefixes are the phrases the Itanium demangler puts before a name that is not a
// function's own: they say what the symbol is, so they stay in front of the short name.
var cxxPrefixes = []string{
	"non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to ",
	"construction vtable for ", "vtable for ", "VTT for ", "typeinfo name for ", "typeinfo for ",
	"guard variable for ", "TLS init function for ", "TLS wrapper function for ",
	"transaction clone for ",
}

// cxxShort shortens a demangled C++ or Rust name (see ShortName). A name it cannot make
// sense of comes back whole rather than as an empty or misleading fragment.
func cxxShort(name string) string {
	prefix, rest := "", name
	for _, p := range cxxPrefixes {
		if strings.HasPrefix(name, p) {
			prefix, rest = p, name[len(p):]
			break
		}
	}
	rest = trimRustHash(rest)
	s := scanShort(rest)
	if s == "" {
		return name
	}
	return prefix + s
}

// trimRustHash drops the "::h0123456789abcdef" that legacy Rust mangling appends (the
// demangler keeps it unless asked not to).
func trimRustHash(s string) string {
	const n = len("::h") + 16
	if len(s) <= n || !strings.HasPrefix(s[len(s)-n:], "::h") {
		return s
	}
	for _, c := range []byte(s[len(s)-16:]) {
		if !isHex(c) {
			return s
		}
	}
	return s[:len(s)-n]
}

// scanShort is one left-to-right pass over a C++/Rust name that copies the parts of the
// name and skips the bracketed parts that are not. It tracks no more than the brackets:
// demangler output is regular enough that a full parser would buy nothing here.
func scanShort(name string) string {
	var b strings.Builder
	convOp := false // inside "operator <type>": spaces belong to the name
	for i := 0; i < len(name); {
		c := name[i]
		switch {
		case c == '<' && i == 0:
			// A Rust qualified path: <T as Trait>::f, or <T>::f for an inherent method.
			end := matchClose(name, i)
			if end < 0 {
				return ""
			}
			b.WriteString(qualifiedSelf(name[1:end]))
			i = end + 1
		case c == '<':
			// Template or generic arguments. Rust writes them after "::" (a turbofish),
			// which goes with them.
			end := matchClose(name, i)
			if end < 0 {
				return strings.TrimSpace(b.String())
			}
			if s := b.String(); strings.HasSuffix(s, "::") {
				b.Reset()
				b.WriteString(s[:len(s)-2])
			}
			i = end + 1
		case c == '(':
			if strings.HasPrefix(name[i:], "(anonymous namespace)") {
				b.WriteString("(anonymous namespace)")
				i += len("(anonymous namespace)")
				continue
			}
			end := matchClose(name, i)
			if end >= 0 && strings.HasPrefix(name[end+1:], "::") {
				// The parameters of the function a local entity is in: f(int)::{lambda()#1}.
				i = end + 1
				convOp = false
				continue
			}
			// The parameter list: what follows is qualifiers (const, &&, noexcept).
			return strings.TrimSpace(b.String())
		case c == '{':
			// {lambda(int)#1}, {unnamed type#1}, Rust's {closure#0}, {{closure}}: a name.
			end := matchClose(name, i)
			if end < 0 {
				end = len(name) - 1
			}
			b.WriteString(name[i : end+1])
			i = end + 1
		case c == '[':
			// ABI tags ([abi:cxx11]) and Rust crate disambiguators (std[8bcf]) qualify
			// a name without being part of it.
			end := strings.IndexByte(name[i:], ']')
			if end > 0 && (strings.HasPrefix(name[i:], "[abi:") || i > 0 && isIdent(name[i-1]) && allHex(name[i+1:i+end])) {
				i += end + 1
				continue
			}
			b.WriteByte(c)
			i++
		case c == ' ' && !convOp:
			// A space outside brackets ends a return type: "long f<long>(long)".
			b.Reset()
			i++
		case c == 'o' && strings.HasPrefix(name[i:], "operator") && (i == 0 || !isIdent(name[i-1])) &&
			(i+len("operator") == len(name) || !isIdent(name[i+len("operator")])):
			var n int
			n, convOp = operatorName(name[i:])
			b.WriteString(name[i : i+n])
			i += n
			if strings.HasPrefix(name[i:], " <") {
				i++ // "operator< <char>": the space only keeps the two '<' apart
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return strings.TrimSpace(b.String())
}

// operatorName is the length of the operator name at the start of s ("operator" and its
// symbol), and whether a type name follows ("operator bool", "operator new"), in which
// spaces up to the parameter list are part of the name.
func operatorName(s string) (int, bool) {
	i := len("operator")
	switch {
	case strings.HasPrefix(s[i:], "()"):
		return i + 2, false
	case strings.HasPrefix(s[i:], `""`):
		// A literal operator: operator"" _km.
		i += 2
		if strings.HasPrefix(s[i:], " ") {
			i++
		}
		for i < len(s) && isIdent(s[i]) {
			i++
		}
		return i, false
	case strings.HasPrefix(s[i:], " "):
		return i, true
	}
	for _, op := range cxxOperators {
		if strings.HasPrefix(s[i:], op) {
			return i + len(op), false
		}
	}
	return i, false
}

// cxxOperators are the operator symbols, longest first: the longest that matches is the
// operator, and what follows is not ("operator-<int*>" is operator- with template
// arguments).
var cxxOperators = []string{
	"<=>", "<<=", ">>=", "->*",
	"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "->", "+=", "-=", "*=", "/=",
	"%=", "^=", "&=", "|=", "[]",
	"+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
}

// qualifiedSelf shortens the inside of a Rust "<...>" qualified path: "T as Trait" keeps
// its brackets, a bare path type loses them.
func qualifiedSelf(inner string) string {
	if ty, trait, ok := splitAs(inner); ok {
		return "<" + shortType(ty) + " as " + shortType(trait) + ">"
	}
	s := shortType(inner)
	if s != "" && isIdent(s[0]) {
		return s
	}
	return "<" + s + ">"
}

// splitAs splits "T as Trait" at its top-level " as ".
func splitAs(s string) (string, string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '(', '[', '{':
			depth++
		case '>':
			if i > 0 && s[i-1] == '-' {
				continue
			}
			depth--
		case ')', ']', '}':
			depth--
		case ' ':
			if depth == 0 && strings.HasPrefix(s[i:], " as ") {
				return s[:i], s[i+len(" as "):], true
			}
		}
	}
	return "", "", false
}

// shortType shortens a Rust type or trait path in a qualified path, after its reference
// or pointer sigils; a type that is not a path ([u8], (A, B), fn()) is kept.
func shortType(s string) string {
	i := 0
	for {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "&"), strings.HasPrefix(rest, "*"):
			i++
		case strings.HasPrefix(rest, "mut "), strings.HasPrefix(rest, "dyn "):
			i += 4
		case strings.HasPrefix(rest, "const "):
			i += 6
		default:
			if rest == "" || !(isIdent(rest[0]) || rest[0] == '<') ||
				strings.HasPrefix(rest, "fn(") || strings.HasPrefix(rest, "unsafe ") || strings.HasPrefix(rest, "extern ") {
				return s
			}
			t := scanShort(rest)
			if t == "" {
				return s
			}
			return s[:i] + t
		}
	}
}

// matchClose returns the index of the bracket closing the one at s[open], or -1 if the
// name ends first. Brackets nest by kind: a '>' closes only a '<' (so that a comparison in
// parentheses or a Rust "-> T" does not end a template), and a closing parenthesis drops
// any '<' left open inside it.
func matchClose(s string, open int) int {
	var stack []byte
	for i := open; i < len(s); i++ {
		switch c := s[i]; c {
		case '<', '(', '[', '{':
			stack = append(stack, c)
		case '>':
			if len(stack) == 0 || stack[len(stack)-1] != '<' || i > open && s[i-1] == '-' {
				continue
			}
			stack = stack[:len(stack)-1]
		case ')', ']', '}':
			opener := byte('(')
			switch c {
			case ']':
				opener = '['
			case '}':
				opener = '{'
			}
			for len(stack) > 0 && stack[len(stack)-1] == '<' {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 || stack[len(stack)-1] != opener {
				continue
			}
			stack = stack[:len(stack)-1]
		default:
			continue
		}
		if len(stack) == 0 {
			return i
		}
	}
	return -1
}

func allHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
