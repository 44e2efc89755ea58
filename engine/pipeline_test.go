package engine

import (
	"testing"

	"github.com/cctop/cctop/symbol"
)

// TestInternNames: the tree's functions for PLT stubs and unnamed code.
// A stub of a C++ function is shown demangled with its "@plt", as perf
// shows it, and keeps its linkage name; "[module+0xOFFSET]" names pass
// unchanged and group by name; code with no file keeps its pseudo-module
// name.
func TestInternNames(t *testing.T) {
	b := newBuilder(nil)
	for _, c := range []struct {
		f                 symbol.Frame
		name, short, link string
	}{
		{symbol.Frame{Func: "memcpy@plt", Module: "/lib/libpython3.11.so.1.0"}, "memcpy@plt", "memcpy@plt", "memcpy@plt"},
		{symbol.Frame{Func: "_ZNSt6vectorIiSaIiEE9push_backERKi@plt", Module: "/prog"},
			"std::vector<int, std::allocator<int> >::push_back(int const&)@plt", "std::vector::push_back@plt",
			"_ZNSt6vectorIiSaIiEE9push_backERKi@plt"},
		{symbol.Frame{Func: "[libcuda.so.1+0x1a2b0]", Module: "/usr/lib/libcuda.so.1", Unnamed: true},
			"[libcuda.so.1+0x1a2b0]", "[libcuda.so.1+0x1a2b0]", "[libcuda.so.1+0x1a2b0]"},
		{symbol.Frame{Module: "[vdso]"}, "[vdso]", "[vdso]", "[vdso]"},
		{symbol.Frame{}, "[unknown]", "[unknown]", "[unknown]"},
	} {
		fn := b.tree.Func(b.intern(c.f))
		if fn.Name != c.name || fn.Short != c.short || fn.LinkName() != c.link || fn.Module != c.f.Module {
			t.Errorf("intern(%+v) = %+v, want name %q, short %q, link %q", c.f, fn, c.name, c.short, c.link)
		}
	}
	a := symbol.Frame{Func: "[prog+0x1130]", Module: "/prog", Addr: 0x1130, Unnamed: true}
	c := a
	c.Addr = 0x1177
	if b.intern(a) != b.intern(c) {
		t.Error("two pcs of one unnamed function are two functions")
	}
	c.Func = "[prog+0x2000]"
	if b.intern(a) == b.intern(c) {
		t.Error("two unnamed functions are one")
	}
}
