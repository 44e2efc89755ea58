package cct

import "testing"

// The C++ and Rust names are what github.com/ianlancetaylor/demangle (the demangler the
// pipeline uses) makes of symbols g++ 13 and rustc emitted for small test programs, plus
// the forms other tools write (c++filt's thunks, legacy Rust hashes).
func TestShortName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Go.
		{"github.com/cctop/cctop/cct.(*Tree).Add", "cct.(*Tree).Add"},
		{"github.com/a/b/pkg.(*T).Method", "pkg.(*T).Method"},
		{"github.com/a/b/pkg.Func.func1", "pkg.Func.func1"},
		{"github.com/a/pkg.Map[go.shape.int,github.com/x/y.T]", "pkg.Map[go.shape.int,github.com/x/y.T]"},
		{"example.com/mod/v2.F", "mod.F"},
		{"gopkg.in/yaml.v3.(*parser).parse", "yaml.v3.(*parser).parse"},
		{"encoding/json.Unmarshal", "json.Unmarshal"},
		{"main.main", "main.main"},
		{"main.foo.func1", "main.foo.func1"},
		{"main.(*T).M", "main.(*T).M"},
		{"runtime.goexit", "runtime.goexit"},
		{"type:.eq.main.T", "type:.eq.main.T"},

		// C++: classes, templates, qualifiers, return types.
		{"shapes::Accumulator<long>::add(long) const", "shapes::Accumulator::add"},
		{"shapes::Accumulator<long>::add(long)", "shapes::Accumulator::add"},
		{"long shapes::spin<long>(long, int)", "shapes::spin"},
		{"double shapes::spin<double>(double, int)", "shapes::spin"},
		{"ns::f(int)", "ns::f"},
		{"ns::C::get() const", "ns::C::get"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector::push_back"},
		{"int& std::vector<int, std::allocator<int> >::emplace_back<int>(int&&)", "std::vector::emplace_back"},
		{"std::remove_reference<int*&>::type&& std::move<int*&>(int*&)", "std::move"},
		{"unsigned long const& std::max<unsigned long>(unsigned long const&, unsigned long const&)", "std::max"},
		{"std::__detail::_MakeUniq<int>::__single_object std::make_unique<int, int>(int&&)", "std::make_unique"},
		{"std::_Head_base<0ul, int*, false>::_M_head(std::_Head_base<0ul, int*, false>&)", "std::_Head_base::_M_head"},
		{"std::unique_ptr<int, std::default_delete<int> >::~unique_ptr()", "std::unique_ptr::~unique_ptr"},
		{"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*, std::forward_iterator_tag)::_Guard::~_Guard()",
			"std::__cxx11::basic_string::_M_construct::_Guard::~_Guard"},
		{"std::__detail::__to_chars_10_impl<unsigned int>(char*, unsigned int, unsigned int)::__digits", "std::__detail::__to_chars_10_impl::__digits"},
		{"std::ios_base::Init::Init()", "std::ios_base::Init::Init"},
		// Operators.
		{"shapes::Accumulator<long>::operator()(long) const", "shapes::Accumulator::operator()"},
		{"shapes::Accumulator<long>::operator<(shapes::Accumulator<long> const&) const", "shapes::Accumulator::operator<"},
		{"shapes::Accumulator<long>::operator<<(long)", "shapes::Accumulator::operator<<"},
		{"shapes::Accumulator<long>::operator->()", "shapes::Accumulator::operator->"},
		{"shapes::Accumulator<long>::operator[](int) const", "shapes::Accumulator::operator[]"},
		{"shapes::Accumulator<long>::operator bool() const", "shapes::Accumulator::operator bool"},
		{"ns::C::operator std::vector<int, std::allocator<int> >() const", "ns::C::operator std::vector"},
		{"bool std::operator< <char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
			"std::operator<"},
		{"ns::operator<<(std::ostream&, ns::C const&)", "ns::operator<<"},
		{"__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >::difference_type __gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&)",
			"__gnu_cxx::operator-"},
		{"std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)", "std::operator<<"},
		{"ns::C::operator->*(int)", "ns::C::operator->*"},
		{"ns::C::operator<=>(ns::C const&) const", "ns::C::operator<=>"},
		{"ns::C::operator co_await() const", "ns::C::operator co_await"},
		{"operator new(unsigned long)", "operator new"},
		{"operator delete(void*, unsigned long)", "operator delete"},
		{"operator new[](unsigned long)", "operator new[]"},
		{`units::operator"" _km(unsigned long long)`, `units::operator"" _km`},
		// Lambdas, local entities, anonymous namespaces.
		{"mk()::{lambda(int)#1}::operator()(int) const", "mk::{lambda(int)#1}::operator()"},
		{"apply(int)::{lambda(double)#2}::operator()(double) const", "apply::{lambda(double)#2}::operator()"},
		{"mk()::{lambda(int)#1} const& std::_Any_data::_M_access<mk()::{lambda(int)#1}>() const", "std::_Any_data::_M_access"},
		{"std::function<int (int)>::function<mk()::{lambda(int)#1}, void>(mk()::{lambda(int)#1}&&)", "std::function::function"},
		{"std::_Function_base::_Base_manager<mk()::{lambda(int)#1}>::_M_manager(std::_Any_data&, std::_Any_data const&, std::_Manager_operation)",
			"std::_Function_base::_Base_manager::_M_manager"},
		{"(anonymous namespace)::helper(char*)", "(anonymous namespace)::helper"},
		{"(anonymous namespace)::Hidden::run() const", "(anonymous namespace)::Hidden::run"},
		{"foo()::{lambda(int)#1}::operator()(int) const", "foo::{lambda(int)#1}::operator()"},
		// ABI tags, clones, special symbols, globals.
		{"shapes::name[abi:cxx11](int)", "shapes::name"},
		{"table[abi:cxx11]", "table"},
		{"ns::f(int) [clone .constprop.0]", "ns::f"},
		{"ns::f(int) [clone .isra.0] [clone .cold]", "ns::f"},
		{"non-virtual thunk to ns::Derived::run(int)", "non-virtual thunk to ns::Derived::run"},
		{"typeinfo for mk()::{lambda(int)#1}", "typeinfo for mk::{lambda(int)#1}"},
		{"vtable for __cxxabiv1::__class_type_info", "vtable for __cxxabiv1::__class_type_info"},
		{"__pstl::execution::v1::par", "__pstl::execution::v1::par"},
		{"apply(int)", "apply"},
		{"foo(int)", "foo"},
		{"__static_initialization_and_destruction_0(int, int)", "__static_initialization_and_destruction_0"},
		{"void spin<long>(long)", "spin"},

		// Rust, legacy mangling (the demangler drops the hash; other tools keep it).
		{"r::Bar<T>::get", "r::Bar::get"},
		{"std::rt::lang_start::{{closure}}", "std::rt::lang_start::{{closure}}"},
		{"std::rt::lang_start::{{closure}}::h1a2b3c4d5e6f7a8b", "std::rt::lang_start::{{closure}}"},
		{"core::ptr::drop_in_place<std::collections::hash::map::HashMap<i32,alloc::vec::Vec<u8>>>::h0123456789abcdef",
			"core::ptr::drop_in_place"},
		{"<alloc::vec::Vec<T,A> as core::fmt::Debug>::fmt", "<alloc::vec::Vec as core::fmt::Debug>::fmt"},
		{"<&T as core::fmt::Debug>::fmt", "<&T as core::fmt::Debug>::fmt"},
		{"core::ops::function::FnOnce::call_once{{vtable.shim}}", "core::ops::function::FnOnce::call_once{{vtable.shim}}"},
		{"hashbrown::raw::RawTable<T,A>::reserve_rehash", "hashbrown::raw::RawTable::reserve_rehash"},
		// Rust, v0 mangling.
		{"<hashbrown::raw::RawTable<(i32, alloc::vec::Vec<u8>)>>::reserve_rehash::<hashbrown::map::make_hasher<i32, alloc::vec::Vec<u8>, std::hash::random::RandomState>::{closure#0}>",
			"hashbrown::raw::RawTable::reserve_rehash"},
		{"core::ptr::drop_in_place::<std::collections::hash::map::HashMap<i32, alloc::vec::Vec<u8>>>", "core::ptr::drop_in_place"},
		{"std::rt::lang_start::<()>::{closure#0}", "std::rt::lang_start::{closure#0}"},
		{"std::sys::backtrace::__rust_begin_short_backtrace::<fn(), ()>", "std::sys::backtrace::__rust_begin_short_backtrace"},
		{"<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::{shim:vtable#0}",
			"<std::rt::lang_start::{closure#0} as core::ops::function::FnOnce>::call_once::{shim:vtable#0}"},
		{"<r::Bar<alloc::vec::Vec<u8>> as core::fmt::Debug>::fmt", "<r::Bar as core::fmt::Debug>::fmt"},
		{"<r::Bar<alloc::vec::Vec<u8>>>::get", "r::Bar::get"},
		{"<core::fmt::Formatter>::debug_list", "core::fmt::Formatter::debug_list"},
		{"<u8 as core::fmt::Display>::fmt", "<u8 as core::fmt::Display>::fmt"},
		{"<[u8]>::to_vec", "<[u8]>::to_vec"},
		{"<dyn core::any::Any as core::fmt::Debug>::fmt", "<dyn core::any::Any as core::fmt::Debug>::fmt"},
		{"<fn() -> i32 as core::ops::function::FnOnce<()>>::call_once", "<fn() -> i32 as core::ops::function::FnOnce>::call_once"},
		{"std[8bcf1a2b3c4d5e6f]::rt::lang_start_internal", "std::rt::lang_start_internal"},
		{"__rustc::__rust_alloc", "__rustc::__rust_alloc"},

		// C, mangled and pseudo names stay.
		{"memcpy", "memcpy"},
		{"__libc_start_main", "__libc_start_main"},
		{"foo.part.0", "foo.part.0"},
		{"_GLOBAL__sub_I_a.cpp", "_GLOBAL__sub_I_a.cpp"},
		{"_ZN2ns1fEi", "_ZN2ns1fEi"},
		{"_RNvNtCs1234_3std2rt10lang_start", "_RNvNtCs1234_3std2rt10lang_start"},
		{"0x4005d0", "0x4005d0"},
		{"[vdso]", "[vdso]"},
		{"[truncated]", "[truncated]"},
		{"<module>", "<module>"},
		// Unnamed code of a file, by file offset, and PLT stubs: a stub keeps its
		// suffix, whatever shortening its target's name gets.
		{"[libfoo.so+0x1a2b0]", "[libfoo.so+0x1a2b0]"},
		{"[python3.12+0x1f00]", "[python3.12+0x1f00]"},
		{"[libcuda.so.535.104.05+0x4c0]", "[libcuda.so.535.104.05+0x4c0]"},
		{"memcpy@plt", "memcpy@plt"},
		{"PyObject_GetAttr@plt", "PyObject_GetAttr@plt"},
		{"offset_0x1040@plt", "offset_0x1040@plt"},
		{".plt", ".plt"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)@plt", "std::vector::push_back@plt"},
		{"operator delete(void*, unsigned long)@plt", "operator delete@plt"},
		{"github.com/a/b/pkg.F@plt", "pkg.F@plt"},
		{"@plt", "@plt"},
		{"", ""},
	} {
		if got := ShortName(tc.in); got != tc.want {
			t.Errorf("ShortName(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Whatever the input, ShortName returns something non-empty for a non-empty name and
// never panics: names come from the target's binaries.
func FuzzShortName(f *testing.F) {
	for _, s := range []string{"a<b(c)>::d", "operator", "<", "(", "{", "x::operator", "[abi:", "operator\"\"", "<a as b", "f()::", "a::h0123456789abcdeg", "0./"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := ShortName(s); s != "" && got == "" {
			t.Errorf("ShortName(%q) is empty", s)
		}
	})
}
