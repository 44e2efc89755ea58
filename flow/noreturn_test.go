package flow

import "testing"

func TestNoReturnName(t *testing.T) {
	for name, want := range map[string]bool{
		"exit": true, "abort@plt": true, "exit@@GLIBC_2.2.5": true, "__stack_chk_fail": true,
		"_Unwind_Resume": true, "__cxa_throw": true, "_ZSt20__throw_length_errorPKc": true,
		"runtime.throw": true, "runtime.panicIndex": true, "runtime.panicdivide": true,
		"runtime.goPanicSliceB": true, "runtime.gopanic": true, "runtime.exit.abi0": true,
		"runtime.panicBounds": true,
		// They return.
		"runtime.panicCheck1": false, "runtime.morestack_noctxt": false, "atexit": false,
		"exit_group": false, "runtime.panicwrap.func1": false, "printf": false, "": false, "@plt": false, "runtime.printpanics": false,
	} {
		if got := NoReturnName(name); got != want {
			t.Errorf("NoReturnName(%q) = %v, want %v", name, got, want)
		}
	}
}
