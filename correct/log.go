package correct

// Entry is one sample in the log: where it landed and the interval it stands for (a DCG
// edge's weight is its callee node's, read from the tree). The log keeps only the fields
// that are not their usual value (logblock.go). float32 is enough: weights are estimates, and float32 holds counts exactly up to
// 2^24 and to 7 digits beyond.
type Entry struct {
	Node    int32   // context id (CCT node) the sample landed in; < 0: none (skipped by Reweight)
	Thread  int32   // dense thread index (caller-assigned)
	Calls   float32 // calls_i, -1 unknown
	Lambda  float32 // lambda_i, <= 0 unknown
	Latency float32 // latency_i, -1 when the interval is unknown (Weight treats it as 0)
}

// EntryOf packs a sample's interval into a log entry. An interval without a measured delta
// gets Latency -1, so that Latencies can leave it out of the statistics while weights treat
// it as no latency.
func EntryOf(node, thread int32, iv Interval) Entry {
	e := Entry{Node: node, Thread: thread,
		Calls: float32(iv.Calls), Lambda: float32(iv.Lambda), Latency: float32(iv.Latency)}
	if !iv.HasDelta {
		e.Latency = -1
	}
	if !(iv.Calls >= 0) {
		e.Calls = -1
	}
	return e
}

// Log is the append-only per-sample log that lets the toggles and alpha re-weight a whole
// profile in place: the CCT keeps node ids stable, so summing weights per Node rebuilds the
// weighted metric for any Params. With a cap it keeps the newest Cap entries (a ring) and
// counts the rest as Dropped; the profile then re-weights only the retained window, which the
// caller should say.
//
// An entry is kept as small as what it carries needs (logblock.go): a block of entries holds
// a column per field, and the columns of calls, lambda and latency exist only once an entry
// of the block has a value there other than the usual one, and the node and thread columns are
// two bytes an entry while the block's ids are under 65,535: a log of timer samples without call
// counters holds 8 bytes a sample, not 20.
type Log struct {
	// blocks hold the entries in order, logBlock each but the last:
	// grown a block at a time, a log at its cap of millions never holds
	// the old and a doubled copy at once.
	blocks  []*logBlockCols
	n       int    // entries retained
	cap     int    // 0: unbounded
	head    int    // with a full ring: index of the oldest entry
	dropped uint64 // entries overwritten
	maxNode int32  // largest Node ever appended, -1 none
	// placed and counted are the retained entries with a node, and of
	// those the ones that carry a call count, weighed those whose count is
	// not 0: the coverage that decides whether density weights speak for
	// the profile (Coverage).
	placed, counted, weighed int

	// appended counts every Append, epoch every Reset and Remap; grave
	// keeps the entries overwritten last, once a Reweighed asked
	// (keepGrave): ReweightInto takes what changed since its last update
	// from them (reweighed.go).
	appended, epoch uint64
	keepGrave       bool
	grave           []Entry

	mem *logMem // the blocks' columns (logmem.go)
}

// NewLog makes a log keeping at most cap entries; cap <= 0: unbounded. The ring grows on
// demand, so a large cap costs nothing until it is used.
func NewLog(cap int) *Log {
	if cap < 0 {
		cap = 0
	}
	l := &Log{cap: cap, maxNode: -1}
	l.mem = newLogMem(l)
	return l
}

// logShift sizes the log's blocks: 64Ki entries.
const (
	logShift = 16
	logBlock = 1 << logShift
	logMask  = logBlock - 1
)

// Append adds e, overwriting the oldest entry when the ring is full.
func (l *Log) Append(e Entry) {
	if e.Node > l.maxNode {
		l.maxNode = e.Node
	}
	l.tally(e, 1)
	l.appended++
	if l.cap == 0 || l.n < l.cap {
		l.room().push(e)
		l.n++
		return
	}
	b, i := l.blocks[l.head>>logShift], l.head&logMask
	old := b.at(i)
	l.tally(old, -1)
	if l.keepGrave {
		l.bury(old)
	}
	b.set(i, e)
	l.head++
	if l.head == l.n {
		l.head = 0
	}
	l.dropped++
}

// tally adds d to the coverage counts of e.
func (l *Log) tally(e Entry, d int) {
	if e.Node >= 0 {
		l.placed += d
		if e.Calls >= 0 {
			l.counted += d
		}
		if e.Calls > 0 {
			l.weighed += d
		}
	}
}

// Coverage is how many retained samples landed in a context and how many
// of those carry a call count.
func (l *Log) Coverage() Coverage {
	return Coverage{Counted: l.counted, Samples: l.placed, Weighed: l.weighed}
}

// room makes room for one more entry at the end and returns the block it
// goes in. A block grows as append would, up to logBlock, and never past the
// ring: its memory is the bound.
func (l *Log) room() *logBlockCols {
	last := len(l.blocks) - 1
	if last < 0 || l.blocks[last].len() == logBlock {
		l.blocks = append(l.blocks, &logBlockCols{mem: l.mem})
		last++
	}
	b := l.blocks[last]
	if n := b.len(); n == b.size {
		c := min(max(2*n, 1024), logBlock)
		if l.cap > 0 {
			c = min(c, n+l.cap-l.n)
		}
		b.grow(c)
	}
	return b
}

// Len is the number of retained entries.
func (l *Log) Len() int { return l.n }

// Cap is the ring size, 0 if unbounded.
func (l *Log) Cap() int { return l.cap }

// Dropped counts entries overwritten by newer ones.
func (l *Log) Dropped() uint64 { return l.dropped }

// At is the i-th retained entry, oldest first.
func (l *Log) At(i int) Entry {
	if i < 0 || i >= l.n {
		panic("correct: Log.At index out of range")
	}
	i += l.head
	if i >= l.n {
		i -= l.n
	}
	return l.blocks[i>>logShift].at(i & logMask)
}

// Remap moves every entry to node to(Node) (entries with no node stay so): the contexts
// were renumbered, some merged, when a capped tree folded its cold nodes.
func (l *Log) Remap(to func(node int32) int32) {
	l.renumbered()
	l.maxNode = -1
	l.placed, l.counted, l.weighed = 0, 0, 0
	for _, b := range l.blocks {
		for i := range b.len() {
			v := b.node.get(i)
			if v >= 0 {
				v = to(v)
				b.node.set(b.mem, i, v)
			}
			l.maxNode = max(l.maxNode, v)
			l.tally(b.at(i), 1)
		}
	}
}

// renumbered says the entries changed other than by Append (Remap,
// Reset): a Reweighed weighs the log anew, and the entries overwritten
// before no longer match its sums.
func (l *Log) renumbered() {
	l.epoch++
	l.grave = l.grave[:0]
}

// Reset empties the log (the profile was reset), keeping its cap and its first block.
func (l *Log) Reset() {
	if len(l.blocks) > 0 {
		for _, b := range l.blocks[1:] {
			b.release()
		}
		clear(l.blocks[1:])
		l.blocks = l.blocks[:1]
		l.blocks[0].truncate()
	}
	l.n, l.head, l.dropped = 0, 0, 0
	l.renumbered()
	l.placed, l.counted, l.weighed = 0, 0, 0
	l.maxNode = -1
}

// Reweight sums the weights of all entries per node into dst, grown (reusing its capacity)
// and zeroed to one past the largest Node ever appended — ids stay aligned with the CCT even
// after the ring dropped a node's last entry. It returns dst and the total weight.
func (l *Log) Reweight(p Params, dst []float64) ([]float64, float64) {
	dst = zeroed(dst, int(l.maxNode)+1)
	return dst, l.reweight(p, dst, byNode, 0)
}

// ReweightThread is Reweight over one thread's entries only (the TUI's thread filter); dst
// has the same length as Reweight's.
func (l *Log) ReweightThread(p Params, thread int32, dst []float64) ([]float64, float64) {
	dst = zeroed(dst, int(l.maxNode)+1)
	return dst, l.reweight(p, dst, byNodeOfThread, thread)
}

// Latencies appends to dst[:0] the latency of every entry whose interval is known, for
// Summarize.
func (l *Log) Latencies(dst []float64) []float64 {
	dst = dst[:0]
	for _, b := range l.blocks {
		if b.latency == nil {
			continue // none known
		}
		for _, lat := range b.latency {
			if lat != lat16Unknown {
				dst = append(dst, lat.float())
			}
		}
	}
	return dst
}

// zeroed is dst with n elements, all 0, in its room if it has enough.
func zeroed[T float64 | int32](dst []T, n int) []T {
	if cap(dst) < n {
		return make([]T, n)
	}
	dst = dst[:n]
	clear(dst)
	return dst
}

type keyMode uint8

const (
	byNode keyMode = iota
	byNodeOfThread
)

// reweight sums the entries' weights, block by block.
func (l *Log) reweight(p Params, dst []float64, m keyMode, thread int32) float64 {
	var total float64
	for _, b := range l.blocks {
		total += b.reweight(p, dst, m, thread)
	}
	return total
}

// slots is the room of the log's blocks, in entries.
func (l *Log) slots() int {
	n := 0
	for _, b := range l.blocks {
		n += b.size
	}
	return n
}

// Bytes is the memory the log's entries hold.
func (l *Log) Bytes() int64 {
	var n int64
	for _, b := range l.blocks {
		n += b.bytes()
	}
	return n
}
