package flow

// bitset is a set of small non-negative integers: a row of a relation.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// or adds c's members to b.
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}
