package python

// history is what was read of one thread's Python stack, by time: a ring of
// reads, oldest first, each with the frames read and when. Consecutive reads
// of the same stack of a thread that waits are one entry whose span grows.
type history struct {
	entries []entry
	head    int // where the next entry goes
	n       int // entries in use
}

type entry struct {
	t0, t1 uint64 // the span of the reads (ns, CLOCK_MONOTONIC)
	frames []Frame
}

// histLen is how many reads a thread keeps: two seconds at 1 kHz, so that
// samples the engine takes late (a module loading holds them back) still
// find the reads of their time.
const histLen = 2048

// add records a read of frames made between t0 and t1; with extend, as
// the last entry's span if that read the same frames.
func (h *history) add(t0, t1 uint64, frames []Frame, extend bool) {
	if extend && h.n > 0 {
		last := &h.entries[(h.head+len(h.entries)-1)%len(h.entries)]
		if sameFrames(last.frames, frames) && t0 >= last.t0 {
			last.t1 = t1
			return
		}
	}
	if len(h.entries) < histLen && h.n == len(h.entries) {
		// Grow while young: most threads never fill the ring.
		h.entries = append(h.entries, entry{})
		h.head = len(h.entries) - 1
	}
	e := &h.entries[h.head]
	e.t0, e.t1 = t0, t1
	e.frames = append(e.frames[:0], frames...)
	h.head = (h.head + 1) % len(h.entries)
	if h.n < len(h.entries) {
		h.n++
	}
}

// last is the newest entry, nil if none.
func (h *history) last() *entry {
	if h.n == 0 {
		return nil
	}
	return &h.entries[(h.head+len(h.entries)-1)%len(h.entries)]
}

// at is the entry nearest in time to t and how far it is (0 inside its
// span), nil if there is none.
func (h *history) at(t uint64) (*entry, uint64) {
	if h.n == 0 {
		return nil, 0
	}
	first := (h.head - h.n + len(h.entries)) % len(h.entries)
	get := func(i int) *entry { return &h.entries[(first+i)%len(h.entries)] }
	// The first entry whose span ends at or after t.
	lo, hi := 0, h.n
	for lo < hi {
		mid := (lo + hi) / 2
		if get(mid).t1 < t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var best *entry
	var dist uint64
	for _, i := range [2]int{lo - 1, lo} {
		if i < 0 || i >= h.n {
			continue
		}
		e := get(i)
		var d uint64
		switch {
		case t < e.t0:
			d = e.t0 - t
		case t > e.t1:
			d = t - e.t1
		}
		if best == nil || d < dist {
			best, dist = e, d
		}
	}
	return best, dist
}

func sameFrames(a, b []Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
