package engine

import (
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
)

// forgetAfter is how long an exited process's mappings are kept after its
// last sign of life. Samples of a process can come after its leader's EXIT
// (its other threads run on when the main thread calls pthread_exit); each
// such sample keeps the process another forgetAfter.
const forgetAfter = 10 * time.Second

// lifetimes forgets the processes and threads a target leaves behind. A
// target that forks (a shell loop, a build, a server running commands) would
// otherwise grow cctop for as long as it runs: the resolver keeps every
// process's mappings (1.5 KB each, measured on `while :; do /bin/true; done`,
// about 1100 processes a second here), and the thread table every thread.
type lifetimes struct {
	sampled map[uint32]bool // threads with samples: their names label the profile
	seen    int             // threads ever known, for the summary
	// exited processes in the order their leaders exited, with the time of
	// their last sign of life in last.
	queue []exitedProc
	last  map[int]uint64
	now   uint64 // the latest record time seen
}

type exitedProc struct {
	pid int
	at  uint64
}

func newLifetimes() *lifetimes {
	return &lifetimes{sampled: map[uint32]bool{}, last: map[int]uint64{}}
}

// addThread records th unless it is known, or just updates it.
func (b *builder) addThread(th cct.Thread) {
	if _, ok := b.threads[th.TID]; !ok {
		b.life.seen++
	}
	b.threads[th.TID] = th
}

// sampledBy notes that r's thread and process are alive and sampled.
func (l *lifetimes) sampledBy(r *sampler.Record) {
	l.sampled[r.TID] = true
	if _, ok := l.last[int(r.PID)]; ok {
		l.last[int(r.PID)] = r.Time
	}
}

// exited handles an EXIT record: a thread without samples is dropped at once,
// a process is queued to be forgotten.
func (b *builder) exited(r *sampler.Record) {
	l := b.life
	if !l.sampled[r.TID] {
		delete(b.threads, r.TID)
	}
	if r.PID == r.TID {
		l.last[int(r.PID)] = r.Time
		l.queue = append(l.queue, exitedProc{int(r.PID), r.Time})
	}
}

// reborn is called when pid starts a new process: an exited one of the same
// number must not take it with it.
func (l *lifetimes) reborn(pid int) { delete(l.last, pid) }

// forget drops the processes silent for forgetAfter since their exit.
func (b *builder) forget() {
	l := b.life
	n := 0
	for _, e := range l.queue {
		if l.now < e.at+uint64(forgetAfter) {
			break
		}
		n++
		at, ok := l.last[e.pid]
		switch {
		case !ok:
			// Reborn as a new process since: not this entry's to forget.
		case at > e.at:
			// Sampled since its exit: wait again from then.
			l.queue = append(l.queue, exitedProc{e.pid, at})
		default:
			b.res.Exit(e.pid)
			delete(l.last, e.pid)
		}
	}
	l.queue = append(l.queue[:0], l.queue[n:]...)
}
