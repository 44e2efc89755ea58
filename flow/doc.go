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
// the FDOM relation between basic blocks, the outflow correction over
// the call sites of one calling context, and the relations between the
// levels of a calling context tree. It knows nothing of perf, symbols
// files or the TUI: callers hand it code bytes and sampled outflows.
//
// # Relations between levels
//
// TieLevels carries FDOM's relations across the levels of a calling
// context tree (issue 29).
//
// lee2007's sampled DCG has only the edges on top of the stack, and FDOM
// relates the call sites of one method. A calling context tree has more: a
// context has exactly one caller, so its calls are the executions of one
// call site in one calling context of the caller. Two rules follow, each
// an equality of true call counts that holds on every run in which every
// call returns (the model of FDOM), less one per activation still in
// flight:
//
//   - Entry: a context C called from a direct call site s of its parent
//     context P, in a block that runs exactly once per call of P's
//     function (FDOM.OncePerCall, lemma 4 of fdom.go), is called exactly
//     as often as P: calls(C) = calls(P). This is lee2007's theorem 2 made
//     an equality per context; every call site of a function of one block
//     qualifies, which is its Dynamic INFLOW constraint.
//   - Siblings: contexts C and D of one parent P, called from direct sites
//     s and t with s FDOM t and t FDOM s, are called equally often:
//     calls(C) = calls(D) (theorem 1 both ways).
//
// A direct call site whose target is C's function starts one call of C
// each time it runs; an indirect one may start others that sampling never
// saw, so it ties nothing. Nor does a site two contexts claim, a frame
// inlined into its caller, or code that could not be followed (its FDOM
// relates nothing): a constraint is proven or dropped, never guessed.
//
// Equalities chain: a stage function's context equals its caller's through
// the caller's once-per-call site, and its own leaf's through its own, so
// the rules are closed over the whole tree (union-find) into classes of
// contexts proven to be called equally often.
//
// # The estimator
//
// Each class gets one value, the mean of its members' sampled weights: a
// class of k contexts whose weights sum to W gives each W/k. A context in
// no class keeps its sampled weight. Why the mean:
//
//   - It conserves the total: the class's members keep the share of the
//     profile the samples gave them together, as lee2007 rescales a
//     method's call sites to keep the method's outflow; timer samples
//     bias how a class's weight is split among its members (by time, not
//     calls), and without a counter nothing says the class as a whole
//     drew too much or too little. Contexts outside the class are not
//     moved by a relation that does not involve them.
//   - It never lowers the overlap with the truth over contexts, whatever
//     the samples: in the truth the members are equal, and the overlap
//     sum of min(p_i, q_i) is concave and symmetric in the members' p_i,
//     so replacing them by their mean (the average of their permutations)
//     cannot decrease it (Jensen).
//   - Every member is an estimate of the same count, biased by its own
//     time per call; pooling their samples is the estimate with the most
//     samples behind it, where the best-sampled member alone (lee2007's
//     "set to the max") would inflate the class against the rest.
//
// The contexts that weigh nothing are what the rules recover: a function
// that only calls on takes no sample of its own (a timer sample counts for
// the edge on top of the stack), so its edge, and its callers', are left
// at zero by the sampled DCG while its callees take its time. Tied to them
// it gets its share.
//
// What lee2007's per-method correction does with the rest is unchanged: a
// site whose callee is in a class is an anchor of FDOMOutflowCorrection (or
// DynamicOutflowCorrection) in its context, at the class's value, so the
// inequalities of FDOM bound the free sites against it; and counted
// functions' exact counts take precedence over both (the engine anchors
// them afterwards and carries a counted member's value to the uncounted
// members of its class).
package flow
