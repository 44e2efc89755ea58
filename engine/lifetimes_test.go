package engine

import (
	"testing"
	"time"

	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// TestLifetimesForget: an exited child process's mappings go forgetAfter
// after its last sign of life, not before; a process whose threads are
// sampled after its leader's EXIT keeps them while they run; a new process
// that takes an exited one's PID keeps its own; a thread that exits without
// samples leaves the thread table, a sampled one stays for its label.
func TestLifetimesForget(t *testing.T) {
	b := newBuilder(symbol.NewResolver())
	sec := func(s float64) uint64 { return uint64(s * float64(time.Second)) }
	mmap := func(pid uint32, at float64) sampler.Record {
		return sampler.Record{Kind: sampler.KindMmap, PID: pid, TID: pid, Time: sec(at), Addr: 0x400000, Len: 0x1000, Filename: "/bin/x"}
	}
	fork := func(pid, tid uint32, at float64) sampler.Record {
		return sampler.Record{Kind: sampler.KindFork, PID: pid, TID: tid, PPID: 100, PTID: 100, Time: sec(at)}
	}
	exit := func(pid, tid uint32, at float64) sampler.Record {
		return sampler.Record{Kind: sampler.KindExit, PID: pid, TID: tid, PPID: 100, PTID: 100, Time: sec(at)}
	}
	sample := func(pid, tid uint32, at float64) sampler.Record {
		return sampler.Record{Kind: sampler.KindSample, PID: pid, TID: tid, Time: sec(at), IP: 0x400010}
	}
	batch := func(rs ...sampler.Record) { b.handle(&sampler.Batch{Records: rs}) }
	known := func(pid int) bool { return len(b.res.Mappings(pid)) > 0 }

	batch(mmap(100, 0),
		fork(200, 200, 0.1), mmap(200, 0.1), fork(200, 201, 0.2), sample(200, 200, 0.5), exit(200, 201, 0.9), exit(200, 200, 1),
		fork(300, 300, 0.1), mmap(300, 0.1), fork(300, 301, 0.1), exit(300, 300, 1), sample(300, 301, 5),
		fork(400, 400, 0.1), exit(400, 400, 1), fork(400, 400, 3), mmap(400, 3))
	if !known(200) || !known(300) || !known(400) {
		t.Fatal("the children's mappings are missing at once")
	}
	if _, ok := b.threads[201]; ok {
		t.Error("thread 201 exited without samples but stays in the thread table")
	}
	if _, ok := b.threads[200]; !ok {
		t.Error("sampled thread 200 left the thread table")
	}
	if b.life.seen != 6 {
		t.Errorf("%d threads seen, want 6 (200, 201, 300, 301 and 400 twice)", b.life.seen)
	}
	batch(sample(100, 100, 10.9))
	if !known(200) {
		t.Error("200 forgotten before forgetAfter")
	}
	batch(sample(100, 100, 11.1))
	if known(200) || !known(300) || !known(400) || !known(100) {
		t.Errorf("at 11.1 s: 200 known %v (want false), 300 %v, 400 %v, 100 %v (want true)", known(200), known(300), known(400), known(100))
	}
	batch(sample(100, 100, 15.1))
	if known(300) || !known(400) || !known(100) {
		t.Errorf("at 15.1 s: 300 known %v (want false: silent 10 s after its last sample), 400 %v, 100 %v", known(300), known(400), known(100))
	}
	if len(b.life.queue) != 0 || len(b.life.last) != 0 {
		t.Errorf("left queued: %v, %v", b.life.queue, b.life.last)
	}
}
