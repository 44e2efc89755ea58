package flow

import "strings"

// NoReturnName says whether a function of this symbol name never returns
// to its caller, for Decode's noReturn: the code a compiler places after
// a call to it belongs to other paths, and taking it for the call's
// continuation would invent edges (and with them frequency relations).
// A version or PLT suffix (exit@@GLIBC_2.2.5, abort@plt) is ignored.
//
// The list errs on the side of missing a function rather than naming one
// that returns: a missed one leaves an edge that is never taken, a wrong
// one cuts a path that is.
func NoReturnName(name string) bool {
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	// Go's assembly functions: runtime.exit.abi0.
	name = strings.TrimSuffix(name, ".abi0")
	if noReturnNames[name] {
		return true
	}
	switch {
	case strings.Contains(name, ".func"):
		// A closure inside one of them returns as any function does.
		return false
	case strings.HasPrefix(name, "runtime.panic"):
		// panicCheck1 and panicCheck2 return unless the panic is in the runtime.
		return !strings.HasPrefix(name, "runtime.panicCheck")
	case strings.HasPrefix(name, "runtime.goPanic"):
		return true
	case strings.HasPrefix(name, "_ZSt") && strings.Contains(name, "__throw_"),
		strings.HasPrefix(name, "std::__throw_"):
		// libstdc++'s std::__throw_length_error and kin, mangled or not.
		return true
	}
	return false
}

var noReturnNames = map[string]bool{
	// C library
	"exit": true, "_exit": true, "_Exit": true, "quick_exit": true, "abort": true,
	"__stack_chk_fail": true, "__stack_chk_fail_local": true,
	"__fortify_fail": true, "__chk_fail": true, "__libc_fatal": true,
	"__assert_fail": true, "__assert_perror_fail": true, "__assert": true,
	"longjmp": true, "_longjmp": true, "siglongjmp": true, "__longjmp_chk": true,
	"pthread_exit": true, "err": true, "errx": true, "verr": true, "verrx": true,
	// C++ runtime and unwinder
	"_Unwind_Resume": true, "__cxa_throw": true, "__cxa_rethrow": true,
	"__cxa_bad_cast": true, "__cxa_bad_typeid": true, "__cxa_throw_bad_array_new_length": true,
	"__cxa_pure_virtual": true, "__cxa_deleted_virtual": true, "__cxa_call_terminate": true,
	"_ZSt9terminatev": true, "std::terminate()": true,
	// Go
	"runtime.throw": true, "runtime.fatal": true, "runtime.fatalthrow": true,
	"runtime.fatalpanic": true, "runtime.gopanic": true, "runtime.Goexit": true,
	"runtime.exit": true, "os.Exit": true, "syscall.Exit": true,
}
