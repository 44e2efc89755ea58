package workload

import "sync/atomic"

// sink receives every work function's result, so the compiler must compute
// it. It is atomic because threads of one workload store to it concurrently;
// each store happens once per call, after the loop, so it costs little next
// to the work itself.
var sink atomic.Uint64

// Every work function stores its result through a small local array. That
// gives it a stack frame, so the compiler emits the frame-pointer prologue:
// Go leaves functions with no frame without one, and a frame-pointer unwind
// sampled inside such a leaf skips its caller, losing the very call site the
// workloads exist to tell apart. (Recovering the caller of frameless leaves
// in the unwinder is a separate job; the workloads should not depend on it.)

// Every work function runs the same xorshift64* step in its own loop body
// instead of calling a shared helper: a helper would either be a call (an
// extra edge in the profile) or inlined (an inlined frame the profile would
// have to attribute). One step is a serial dependency chain of about 2 ns,
// so a loop's cost is linear in its trip count. Each function seeds the loop
// with its own odd constant so that no two have identical code for a linker
// that folds identical functions to merge.
const mixMul = 2685821657736338717
