package exporter

import "go.opentelemetry.io/collector/pdata/pprofile"

// window is one queued profile window and its size in the queue's bytes.
type window struct {
	p    pprofile.Profiles
	size int64
}

// queue is a ring of windows, oldest first. The head may be in an RPC attempt
// (busy); it is then never dropped, because the attempt cannot be recalled and
// dropping what is being sent would starve a slow collector of every window.
type queue struct {
	buf   []window
	head  int
	n     int
	bytes int64
	busy  bool
}

func newQueue(capacity int) queue { return queue{buf: make([]window, capacity)} }

func (q *queue) full() bool { return q.n == len(q.buf) }

func (q *queue) push(w window) {
	q.buf[(q.head+q.n)%len(q.buf)] = w
	q.n++
	q.bytes += w.size
}

// front is the oldest window.
func (q *queue) front() window { return q.buf[q.head] }

// pop removes the oldest window.
func (q *queue) pop() window {
	w := q.buf[q.head]
	q.buf[q.head] = window{}
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.bytes -= w.size
	q.busy = false
	return w
}

// dropOldestWaiting removes the oldest window not in an attempt, and reports
// whether there was one.
func (q *queue) dropOldestWaiting() bool {
	if !q.busy {
		if q.n == 0 {
			return false
		}
		q.pop()
		return true
	}
	if q.n < 2 {
		return false
	}
	// Drop the second: the busy head moves into its slot, keeping the order.
	second := (q.head + 1) % len(q.buf)
	q.bytes -= q.buf[second].size
	q.buf[second] = q.buf[q.head]
	q.buf[q.head] = window{}
	q.head = second
	q.n--
	return true
}

// clear empties the queue and returns how many windows it held.
func (q *queue) clear() int {
	n := q.n
	for q.n > 0 {
		q.pop()
	}
	return n
}
