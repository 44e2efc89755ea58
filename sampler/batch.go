package sampler

import (
	"cmp"
	"slices"
)

// Batch is what one drain of the rings yields: records of all rings in time
// order. A Batch and the slices inside it are reused by the next drain, so a
// consumer that keeps data must copy it.
type Batch struct {
	Records  []Record
	chains   []uint64
	values   []Value
	regs     []uint64
	stacks   []byte
	branches []Branch
	spans    []span // per record: where its Chain, Values, Regs, Stack and Branches live
	// borrowStacks: add keeps a record's Stack where it is, in memory
	// that lives as long as the batch (a chunk the session holds).
	borrowStacks bool
	// order is seal's scratch, kept for the next batch.
	order []recKey
}

// recKey is a record's place in time order: its time, then where it came.
type recKey struct {
	time uint64
	i    int32
}

type span struct {
	chainOff, chainLen, valOff, valLen int32
	regOff, regLen, stackOff, stackLen int32
	brOff, brLen                       int32
	stackBorrowed                      bool // Stack is not in stacks
}

func (b *Batch) reset() {
	b.Records = b.Records[:0]
	b.chains = b.chains[:0]
	b.values = b.values[:0]
	b.regs = b.regs[:0]
	b.stacks = b.stacks[:0]
	b.branches = b.branches[:0]
	b.spans = b.spans[:0]
}

// add copies r, whose slices alias the decoder's buffers, into the batch.
func (b *Batch) add(r *Record) {
	sp := span{chainOff: int32(len(b.chains)), chainLen: int32(len(r.Chain)), valOff: int32(len(b.values)), valLen: int32(len(r.Values)),
		regOff: int32(len(b.regs)), regLen: int32(len(r.Regs)), stackOff: int32(len(b.stacks)), stackLen: int32(len(r.Stack)),
		brOff: int32(len(b.branches)), brLen: int32(len(r.Branches))}
	b.chains = append(b.chains, r.Chain...)
	b.values = append(b.values, r.Values...)
	b.regs = append(b.regs, r.Regs...)
	if b.borrowStacks {
		sp.stackOff, sp.stackLen, sp.stackBorrowed = 0, 0, true
	} else {
		b.stacks = append(b.stacks, r.Stack...)
	}
	b.branches = append(b.branches, r.Branches...)
	b.Records = append(b.Records, *r)
	b.spans = append(b.spans, sp)
}

// seal points each record's slices into the batch's final buffers (they may
// have moved while growing) and orders records by time, since records of one
// task can land in the rings of different CPUs.
func (b *Batch) seal() {
	for i := range b.Records {
		sp := b.spans[i]
		r := &b.Records[i]
		r.Chain = b.chains[sp.chainOff : sp.chainOff+sp.chainLen : sp.chainOff+sp.chainLen]
		r.Values = b.values[sp.valOff : sp.valOff+sp.valLen : sp.valOff+sp.valLen]
		r.Regs = b.regs[sp.regOff : sp.regOff+sp.regLen : sp.regOff+sp.regLen]
		if sp.stackLen > 0 && !sp.stackBorrowed {
			r.Stack = b.stacks[sp.stackOff : sp.stackOff+sp.stackLen : sp.stackOff+sp.stackLen]
		}
		if sp.brLen > 0 {
			r.Branches = b.branches[sp.brOff : sp.brOff+sp.brLen : sp.brOff+sp.brLen]
		}
	}
	b.sortByTime()
}

// sortByTime orders the records by time, those of one time as they came.
// The rings' runs come one after another, each in time order: sorting
// keys of 16 bytes and moving each record once costs a fraction of what
// a stable sort of the records themselves (a few hundred bytes each) did,
// which moved them again and again (a twentieth of the live view's CPU).
func (b *Batch) sortByTime() {
	rs := b.Records
	order := b.order[:0]
	sorted := true
	for i := range rs {
		order = append(order, recKey{rs[i].Time, int32(i)})
		if i > 0 && rs[i].Time < rs[i-1].Time {
			sorted = false
		}
	}
	b.order = order
	if sorted {
		return
	}
	slices.SortFunc(order, func(x, y recKey) int {
		if c := cmp.Compare(x.time, y.time); c != 0 {
			return c
		}
		return cmp.Compare(x.i, y.i)
	})
	// Each record moves once, to where it goes, cycle by cycle: no
	// second array of records, which a large host's batch would double.
	for j := range order {
		if order[j].i < 0 || int(order[j].i) == j {
			continue
		}
		held := rs[j]
		for k := j; ; {
			from := int(order[k].i)
			order[k].i = -1
			if from == j {
				rs[k] = held
				break
			}
			rs[k] = rs[from]
			k = from
		}
	}
}
