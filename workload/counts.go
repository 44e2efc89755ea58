package workload

import (
	"reflect"
	"runtime"
)

// edge is one caller -> callee pair whose calls a workload counts exactly.
// Counting happens in the caller, in a plain per-goroutine counter, and the
// edges are built from the sums at exit, so the hot path pays one increment.
type edge struct {
	caller, callee any // function values; named when printed
	n              uint64
}

// funcName names a function the way a profile of this binary will: derived
// from the function value rather than spelled out, so a rename or a module
// path change cannot make the truth disagree with the samples.
func funcName(f any) string {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Func {
		panic("workload: funcName of a non-function")
	}
	fn := runtime.FuncForPC(v.Pointer())
	if fn == nil {
		panic("workload: no runtime.Func for a function value")
	}
	return fn.Name()
}

// calls prints one `calls` line per edge, in the order given.
func (e *errWriter) calls(edges []edge) {
	for _, ed := range edges {
		e.printf("calls %s -> %s %d\n", funcName(ed.caller), funcName(ed.callee), ed.n)
	}
}
