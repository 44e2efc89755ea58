package correct

import "math"

// logBlockCols is one block of the log, a column per field of Entry. The
// columns of calls, lambda and latency are nil while every entry of the
// block has the usual value there: -1 (unknown) for calls and latency, the
// block's first lambda for lambda. Latencies are 2 bytes (latency16.go).
// Timer samples without call counters then cost node, thread and latency,
// 6 bytes with ids under 65,535;
// samples on a call event node, thread and calls; a block that meets an
// entry with something else makes that column then, filled with the usual
// value before it.
type logBlockCols struct {
	node, thread  ids // logids.go: 2 bytes an entry under 65,535
	calls, lambda []float32
	latency       []lat16 // latency16.go
	lambda0       float32 // the first entry's lambda
	size          int     // the capacity of every column there is
	mem           *logMem // where the columns live
}

// unknown is calls' and latency's usual value.
const unknown = float32(-1)

func (b *logBlockCols) len() int { return b.node.len() }

// grow gives every column there is room for c entries.
func (b *logBlockCols) grow(c int) {
	b.size = c
	b.node.grow(b.mem, c)
	b.thread.grow(b.mem, c)
	for _, col := range []*[]float32{&b.calls, &b.lambda} {
		if *col != nil {
			*col = regrow(b.mem, *col, c)
		}
	}
	if b.latency != nil {
		b.latency = regrow(b.mem, b.latency, c)
	}
}

// regrow moves s into a column of capacity c.
func regrow[T colType](m *logMem, s []T, c int) []T {
	g := column[T](m, len(s), c)
	copy(g, s)
	free(m, s)
	return g
}

// push appends e; the block has room (Log.room).
func (b *logBlockCols) push(e Entry) {
	n := b.len()
	if n == 0 {
		b.lambda0 = e.Lambda
	}
	b.node.push(b.mem, e.Node)
	b.thread.push(b.mem, e.Thread)
	if b.calls != nil {
		b.calls = append(b.calls, 0)
	}
	if b.lambda != nil {
		b.lambda = append(b.lambda, 0)
	}
	if b.latency != nil {
		b.latency = append(b.latency, 0)
	}
	b.set(n, e)
}

// set overwrites entry i with e (the ring's oldest).
func (b *logBlockCols) set(i int, e Entry) {
	b.node.set(b.mem, i, e.Node)
	b.thread.set(b.mem, i, e.Thread)
	b.calls = put(b, b.calls, i, e.Calls, same(e.Calls, unknown), unknown)
	b.lambda = put(b, b.lambda, i, e.Lambda, same(e.Lambda, b.lambda0), b.lambda0)
	lat := toLat16(e.Latency)
	b.latency = put(b, b.latency, i, lat, lat == lat16Unknown, lat16Unknown)
}

// put sets entry i of the optional column col to v, making the column,
// filled with usual, when v is not its usual value.
func put[T float32 | lat16](b *logBlockCols, col []T, i int, v T, isUsual bool, usual T) []T {
	if col == nil {
		if isUsual {
			return nil
		}
		col = column[T](b.mem, b.len(), b.size)
		for j := range col {
			col[j] = usual
		}
	}
	col[i] = v
	return col
}

// same compares bit patterns, so that a NaN is kept as it came.
func same(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// at is entry i.
func (b *logBlockCols) at(i int) Entry {
	e := Entry{Node: b.node.get(i), Thread: b.thread.get(i), Calls: unknown, Lambda: b.lambda0, Latency: unknown}
	if b.calls != nil {
		e.Calls = b.calls[i]
	}
	if b.lambda != nil {
		e.Lambda = b.lambda[i]
	}
	if b.latency != nil {
		e.Latency = b.latency[i].value()
	}
	return e
}

// truncate empties the block, keeping the room of the columns every block
// has.
func (b *logBlockCols) truncate() {
	b.node.truncate()
	b.thread.truncate()
	b.dropOptional()
}

func (b *logBlockCols) dropOptional() {
	free(b.mem, b.calls)
	free(b.mem, b.lambda)
	free(b.mem, b.latency)
	b.calls, b.lambda, b.latency = nil, nil, nil
}

// release returns every column's memory.
func (b *logBlockCols) release() {
	b.dropOptional()
	b.node.release(b.mem)
	b.thread.release(b.mem)
	b.size = 0
}

// bytes is what the block's columns hold.
func (b *logBlockCols) bytes() int64 {
	n := b.node.bytes(b.size) + b.thread.bytes(b.size)
	for _, c := range [][]float32{b.calls, b.lambda} {
		if c != nil {
			n += 4 * int64(b.size)
		}
	}
	if b.latency != nil {
		n += 2 * int64(b.size)
	}
	return n
}

// reweight adds the weights of the block's entries under p to dst by
// node (of one thread's entries with byNodeOfThread) and returns their
// sum. Each weight is what Weight computes: a block without a calls
// column weighs nothing under density, one without latencies has no
// latency factor.
func (b *logBlockCols) reweight(p Params, dst []float64, m keyMode, thread int32) float64 {
	if b.node.isWide() {
		return reweightNodes(b, b.node.wide, p, dst, m, thread)
	}
	return reweightNodes(b, b.node.small, p, dst, m, thread)
}

// countNodes adds to n, per node, the block's entries that weigh
// something under density or not: under density those whose call count
// is above 0, else all.
func (b *logBlockCols) countNodes(n []int32, density bool) {
	var calls []float32
	if density {
		if b.calls == nil {
			return // none known: all weigh 0
		}
		calls = b.calls
	}
	if b.node.isWide() {
		countIDs(b.node.wide, calls, n)
	} else {
		countIDs(b.node.small, calls, n)
	}
}

func countIDs[K uint16 | int32](node []K, calls []float32, n []int32) {
	for i, k := range node {
		if uint(k) < uint(len(n)) && (calls == nil || calls[i] > 0) {
			n[k]++
		}
	}
}

// reweightNodes is reweight over the block's node column, of either kind.
func reweightNodes[K uint16 | int32](b *logBlockCols, node []K, p Params, dst []float64, m keyMode, thread int32) float64 {
	a := p.alpha()
	calls, lat := b.calls, b.latency
	if p.Density && calls == nil {
		return 0
	}
	if !p.Density {
		calls = nil
	}
	if !p.Latency || a == 0 {
		lat = nil
	}
	if m == byNodeOfThread {
		if b.thread.isWide() {
			return reweightOf(b, node, b.thread.wide, thread, dst, calls, lat, a)
		}
		if !fitsSmall(thread) {
			return 0
		}
		return reweightOf(b, node, b.thread.small, uint16(thread), dst, calls, lat, a)
	}
	if calls == nil && lat == nil {
		// One per sample: the raw profile, and every toggle's over a
		// block of samples that carry nothing.
		var total float64
		for _, k := range node {
			if uint(k) < uint(len(dst)) {
				dst[k]++
				total++
			}
		}
		return total
	}
	return reweightAll(b, node, dst, calls, lat, a)
}

// reweightOf is reweight's loop for one thread's entries, any columns.
func reweightOf[K, T uint16 | int32](b *logBlockCols, node []K, threads []T, thread T, dst []float64, calls []float32, lat []lat16, a float64) float64 {
	var total float64
	threads = threads[:len(node)]
	for i, k := range node {
		if threads[i] != thread || uint(k) >= uint(len(dst)) {
			continue
		}
		if w, ok := b.weight(i, calls, lat, a); ok {
			dst[k] += w
			total += w
		}
	}
	return total
}

// reweightEach is reweightAll's loop for any columns.
func reweightEach[K uint16 | int32](b *logBlockCols, node []K, dst []float64, calls []float32, lat []lat16, a float64) float64 {
	var total float64
	for i, k := range node {
		if uint(k) >= uint(len(dst)) {
			continue
		}
		if w, ok := b.weight(i, calls, lat, a); ok {
			dst[k] += w
			total += w
		}
	}
	return total
}

// weight is entry i's weight under the columns the weights read (nil for
// those they do not), false for an entry without the call count density
// asks for.
func (b *logBlockCols) weight(i int, calls []float32, lat []lat16, a float64) (float64, bool) {
	w := 1.0
	if calls != nil {
		c := calls[i]
		if !(c >= 0) {
			return 0, false
		}
		w = float64(c)
	}
	if lat != nil {
		w *= b.factor(i, lat, a)
	}
	return w, true
}

// factor is entry i's latency factor, lambda/(lambda+a*latency), 1 where
// either is not known.
func (b *logBlockCols) factor(i int, lat []lat16, a float64) float64 {
	if !lat[i].positive() {
		return 1
	}
	l := lat[i].pos()
	lam := float64(b.lambda0)
	if b.lambda != nil {
		lam = float64(b.lambda[i])
	}
	if !(lam > 0) {
		return 1
	}
	return lam / (lam + a*l)
}

// reweightAll is reweight over every thread, with a loop for each set of
// columns the weights read, so that the per-entry work is only theirs.
func reweightAll[K uint16 | int32](b *logBlockCols, node []K, dst []float64, calls []float32, lat []lat16, a float64) float64 {
	var total float64
	switch {
	case lat == nil:
		calls = calls[:len(node)]
		for i, k := range node {
			if c := calls[i]; c >= 0 && uint(k) < uint(len(dst)) {
				w := float64(c)
				dst[k] += w
				total += w
			}
		}
	case calls == nil && b.lambda == nil:
		lat = lat[:len(node)]
		lam := float64(b.lambda0)
		for i, k := range node {
			if uint(k) >= uint(len(dst)) {
				continue
			}
			w := 1.0
			if c := lat[i]; c.positive() && lam > 0 {
				l := c.pos()
				w = lam / (lam + a*l)
			}
			dst[k] += w
			total += w
		}
	case calls != nil && b.lambda == nil:
		lat, calls = lat[:len(node)], calls[:len(node)]
		lam := float64(b.lambda0)
		for i, k := range node {
			c := calls[i]
			if !(c >= 0) || uint(k) >= uint(len(dst)) {
				continue
			}
			w := float64(c)
			if c := lat[i]; c.positive() && lam > 0 {
				l := c.pos()
				w *= lam / (lam + a*l)
			}
			dst[k] += w
			total += w
		}
	default:
		return reweightEach(b, node, dst, calls, lat, a)
	}
	return total
}
