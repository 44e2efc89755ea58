package flow

// CFG is the control-flow graph of one function. Blocks[0] is the entry.
// A function whose control flow cannot be followed (an indirect jump, a
// jump out of its bounds other than a tail call, bytes that do not decode)
// is Conservative: no FDOM relation is derived in it, and Why says what
// stopped it.
type CFG struct {
	Start, End   uint64 // the function's bounds [Start, End), addresses as given to Decode
	Blocks       []Block
	Conservative bool
	Why          string
}

// Block is a basic block: straight-line code entered at Start only, left
// at its end for Succs (indices into CFG.Blocks). A block ends at a branch,
// a return, a call that does not return, or where another block starts.
type Block struct {
	Start, End uint64 // [Start, End)
	Succs      []int
	Calls      []CallSite // in address order
	// Exit: the function may leave from this block (a return, a tail
	// call, a call that does not return).
	Exit bool
	// Unreached: no path of Succs from the entry leads here. Decode keeps
	// such blocks (code only an indirect jump reaches, or data a linear
	// sweep read as code) but draws no conclusion from them: relations
	// between blocks hold among the reached ones.
	Unreached bool
}

// CallSite is one call instruction.
type CallSite struct {
	Addr   uint64 // the call instruction
	Ret    uint64 // the address after it: the return address a stack holds
	Target uint64 // the direct target, 0 for an indirect call
	Block  int    // index of the block that holds it
}

// reached sets seen[i] (seen has a place per block, all false) for every
// block a path of Succs from the entry leads to. stack is scratch space,
// returned for reuse.
func reached(g *CFG, seen []bool, stack []int) []int {
	if len(g.Blocks) == 0 {
		return stack
	}
	seen[0] = true
	stack = append(stack[:0], 0)
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, n := range g.Blocks[b].Succs {
			if !seen[n] {
				seen[n] = true
				stack = append(stack, n)
			}
		}
	}
	return stack
}
