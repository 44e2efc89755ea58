// Package flow corrects the call frequencies timer sampling biases, from
// the control flow of the machine code alone (lee2007): a function's call
// sites that must execute at least as often as others (the frequency
// dominator relation, FDOM) bound their edges' frequencies, and a violated
// bound is repaired by raising the lower one and rescaling the function's
// outflow.
//
// It owns the control-flow graph of a function decoded from its machine
// code (basic blocks, call sites and their direct targets, and why a
// function's constraints are dropped when its code cannot be followed),
// the FDOM relation between basic blocks, and the outflow correction over
// the call sites of one calling context. It knows nothing of perf, symbols
// files or the TUI: callers hand it code bytes and sampled outflows.
package flow
