package engine

import (
	"strings"

	"github.com/cctop/cctop/sampler"
)

// A sample whose stack needs a module not loaded yet waits here with the
// records that come after it, in the order they came, while the module
// loads on another goroutine (symbol/loads.go); the batches keep coming,
// so the rings keep being read. Order matters: a mapping record or an exec
// behind a sample would change what its addresses name. Each batch first
// takes the records whose modules are in, and the profile's end (finish)
// waits for the rest, so no sample is lost to a load.

// parkLimit is the most that waits. Past it the builder waits for the
// loads, as it would without deferral: a load slower than the samples it
// holds back is cheaper to wait for than to hold them.
const parkLimit = 256 << 20

// parking is the records waiting for modules, copied out of the batches
// whose chunks the reader reuses.
type parking struct {
	recs    []sampler.Record
	bytes   int64
	samples int // of recs, the samples
	// seen is the resolver's loads installed when the first waiting
	// record last failed: nothing can change for it before one more is.
	seen uint64
	// held: records that waited; waits: times the limit made the builder
	// wait for the loads.
	held, waits uint64
	// python: the first record waits for its Python stack's next read
	// (pyStacks.pending), not for a module: the ones behind it are not
	// unwound to start their loads early.
	python bool
}

// park copies r to the end of the waiting records. A sample that waits
// behind another is looked at too, deferred, so that every module the
// samples need starts to load now, side by side, not one after the other
// as the first waiting sample gets each.
func (b *builder) park(r *sampler.Record) {
	if len(b.parked.recs) == 0 {
		b.parked.python = b.pyPending
	}
	if len(b.parked.recs) > 0 && !b.parked.python && r.Kind == sampler.KindSample && !r.OffCPU {
		b.frameStack(r, true)
		b.res.TakeMissed()
	}
	if len(b.parked.recs) == 0 {
		b.parked.seen = b.res.LoadsInstalled()
	}
	c := cloneRecord(r)
	b.parked.recs = append(b.parked.recs, c)
	b.parked.bytes += recordBytes(&c)
	b.parked.held++
	if c.Kind == sampler.KindSample {
		b.parked.samples++
	}
	if b.parked.bytes > parkLimit {
		b.parked.waits++
		b.replay(true)
	}
}

// replay takes the waiting records, in order, up to the first sample whose
// modules are still loading; with wait, it waits for every load and takes
// them all.
func (b *builder) replay(wait bool) {
	if wait {
		b.res.WaitLoads()
	} else if b.res.Collect() > 0 && b.res.LoadsInstalled() == b.parked.seen && !b.parked.python {
		// Nothing is in that was not when the first record last failed
		// (with nothing in flight, a retry goes in or starts a load).
		return
	}
	deferLoads := b.deferLoads
	b.deferLoads = deferLoads && !wait
	defer func() { b.deferLoads = deferLoads }()
	recs := b.parked.recs
	for i := range recs {
		r := &recs[i]
		if !b.apply(r) {
			clear(recs[:i])
			b.parked.recs, b.parked.seen = recs[i:], b.res.LoadsInstalled()
			b.parked.python = b.pyPending
			return
		}
		b.parked.bytes -= recordBytes(r)
		if r.Kind == sampler.KindSample {
			b.parked.samples--
		}
	}
	clear(recs)
	b.parked.recs = recs[:0]
}

// flushParked waits for the loads the waiting records need and takes them
// all: before the profile is read whole (its end, a window's cut, a reset,
// an export).
func (b *builder) flushParked() {
	if len(b.parked.recs) > 0 {
		b.replay(true)
	}
}

// cloneRecord is r with everything it points to copied: a batch's records
// point into the reader's chunks.
func cloneRecord(r *sampler.Record) sampler.Record {
	c := *r
	c.Regs = clone(r.Regs)
	c.Stack = clone(r.Stack)
	c.Chain = clone(r.Chain)
	c.Branches = clone(r.Branches)
	c.Values = clone(r.Values)
	c.BuildID = clone(r.BuildID)
	c.Filename = strings.Clone(r.Filename)
	c.Comm = strings.Clone(r.Comm)
	return c
}

func clone[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// recordBytes is about what a copied record holds.
func recordBytes(r *sampler.Record) int64 {
	const word = 8
	return 256 + int64(len(r.Stack)+len(r.BuildID)+len(r.Filename)+len(r.Comm)) +
		word*int64(len(r.Regs)+len(r.Chain)+3*len(r.Branches)+2*len(r.Values))
}
