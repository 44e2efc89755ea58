package cct

import "unsafe"

// mapBytes estimates what a Go map of n entries of kv bytes (key and value)
// holds: its slots are filled to between 7/16 and 7/8 of a power of two,
// about 5/8 on average, and each carries a control byte.
func mapBytes(n int, kv uintptr) int64 {
	return int64(n) * int64(kv+1) * 8 / 5
}

// Bytes estimates the memory the tree holds: its nodes, per-thread selves,
// indexes, Add's stack cache and the functions' names. Names shared with
// the symbol tables are counted here too, so it errs high.
func (t *Tree) Bytes() int64 {
	n := int64(cap(t.nodes))*int64(unsafe.Sizeof(node{})) +
		int64(cap(t.threads))*int64(unsafe.Sizeof(threadSelf{})) +
		int64(cap(t.funcs))*int64(unsafe.Sizeof(Func{})) +
		mapBytes(len(t.children), unsafe.Sizeof(childKey{})+unsafe.Sizeof(NodeID(0))) +
		mapBytes(len(t.threadIndex), unsafe.Sizeof(threadKey{})+4) +
		mapBytes(len(t.stacks), 8+unsafe.Sizeof(cachedStack{})) +
		mapBytes(len(t.funcIndex), unsafe.Sizeof(funcKey{})+unsafe.Sizeof(FuncID(0))) +
		t.addrBytes()
	for _, f := range t.funcs {
		n += int64(len(f.Name) + len(f.System))
		if len(f.Short) > 0 && unsafe.StringData(f.Short) != unsafe.StringData(f.Name) {
			n += int64(len(f.Short))
		}
	}
	return n
}
