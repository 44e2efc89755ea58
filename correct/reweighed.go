package correct

// Reweighing a live profile once a second. The live view shows the calls
// of the whole log under the parameters in force, and a log at its cap
// holds millions of entries, of which a second changes a few thousand: the
// newest appended, the oldest overwritten. A Reweighed keeps one Params'
// sums and takes only those (ReweightInto), which makes the second's work
// follow the sampling rate instead of the log's length.

// graveCap bounds the overwritten entries a log keeps for the Reweigheds
// that have not taken them yet (320 KiB): seconds of a busy target's
// samples. A Reweighed that falls further behind weighs the log anew.
const graveCap = 16 << 10

// reweighAnew is how many updates a Reweighed takes by difference before
// it weighs the whole log again, which bounds what the sums' rounding can
// add up to.
const reweighAnew = 64

// Reweighed is Reweight's answer for one Params, brought up to date by
// ReweightInto. Its zero value is ready.
type Reweighed struct {
	p        Params
	w        []float64
	n        []int32 // per node, its entries that weigh something: at 0 its weight is 0, not what rounding leaves
	total    float64
	valid    bool
	epoch    uint64 // the log's, at the last update
	appended uint64 // the log's appended count, likewise
	dropped  uint64 // its dropped count
	updates  int    // by difference since the whole log was weighed
}

// ReweightInto brings r up to date with l under p and returns its weights
// per node and their total, as Reweight would. The slice is r's, changed
// by its next update: a caller that keeps it copies it.
func (l *Log) ReweightInto(p Params, r *Reweighed) ([]float64, float64) {
	l.keepGrave = true
	fresh := l.appended - r.appended
	if !r.valid || r.p != p || r.epoch != l.epoch || r.updates >= reweighAnew ||
		fresh > uint64(l.n) || r.dropped > l.dropped || l.dropped-r.dropped > uint64(len(l.grave)) {
		r.w, r.total = l.Reweight(p, r.w)
		r.n = zeroed(r.n, len(r.w))
		for _, b := range l.blocks {
			b.countNodes(r.n, p.Density)
		}
		r.p, r.valid, r.epoch, r.updates = p, true, l.epoch, 0
		r.appended, r.dropped = l.appended, l.dropped
		return r.w, r.total
	}
	if want := int(l.maxNode) + 1; len(r.w) < want {
		r.w = append(r.w, make([]float64, want-len(r.w))...)
		r.n = append(r.n, make([]int32, want-len(r.n))...)
	}
	// The grave holds the entries overwritten last, the newest at its end.
	for _, e := range l.grave[uint64(len(l.grave))-(l.dropped-r.dropped):] {
		r.take(p, e, -1)
	}
	for i := l.n - int(fresh); i < l.n; i++ {
		r.take(p, l.At(i), 1)
	}
	r.appended, r.dropped = l.appended, l.dropped
	r.updates++
	return r.w, r.total
}

// take adds (sign 1) or removes (-1) e's weight.
func (r *Reweighed) take(p Params, e Entry, sign float64) {
	if e.Node < 0 || int(e.Node) >= len(r.w) {
		return
	}
	// 0 exactly for the entries countNodes leaves out: an unknown or
	// zero count under density.
	w := Weight(p, float64(e.Calls), float64(e.Lambda), float64(e.Latency))
	if w == 0 {
		return
	}
	r.total += sign * w
	if r.n[e.Node] += int32(sign); r.n[e.Node] <= 0 {
		r.n[e.Node], r.w[e.Node] = 0, 0
		return
	}
	r.w[e.Node] += sign * w
}

// bury keeps e, overwritten, for the Reweigheds behind.
func (l *Log) bury(e Entry) {
	if len(l.grave) == graveCap {
		// The older half goes: a Reweighed that needs it weighs anew.
		l.grave = l.grave[:copy(l.grave, l.grave[graveCap/2:])]
	}
	l.grave = append(l.grave, e)
}
