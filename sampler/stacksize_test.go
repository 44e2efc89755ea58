//go:build linux

package sampler

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestSetUserStacks: attached to a target of three workers (a fourth
// started 700 ms in by its main thread, so sampled by events it
// inherited), one worker's copies go from 512 bytes to 4 KiB and back at
// once, each worker's own events reopened alone; the fourth's change waits
// until a reopen of every event is allowed. Every other thread keeps 512
// bytes throughout, each sample says the size its event asked for, and
// nothing stays open after Close.
func TestSetUserStacks(t *testing.T) {
	tg := startStackTarget(t, "3", "700", "4000")
	tids := tg.waitWorkers(t, 3)
	before := openFDs(t)
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true, UserStack: 512})
	if err != nil {
		t.Fatal(err)
	}
	w1 := tids["worker 0"]
	// sizes[tid][size]: samples in the phase under way.
	type phase map[int]map[uint32]int
	var phases []phase
	cur := phase{}
	next := func() {
		phases = append(phases, cur)
		cur = phase{}
	}
	take := func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind != KindSample || r.StackSize == 0 {
				continue
			}
			if cur[int(r.TID)] == nil {
				cur[int(r.TID)] = map[uint32]int{}
			}
			cur[int(r.TID)][r.StackSize]++
		}
	}
	read := func(d time.Duration) {
		t.Helper()
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			b, err := s.Next(context.Background())
			take(b)
			if errors.Is(err, io.EOF) {
				t.Fatal("the target exited early")
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	// settle reads the records in flight from before a change, then
	// starts a phase.
	settle := func() { read(150 * time.Millisecond); cur = phase{} }

	read(300 * time.Millisecond)
	next() // 0: all 512
	c, err := s.SetUserStacks(map[int]int{w1: 4096}, false)
	if err != nil || c.Reopened || len(c.Changed) != 1 || len(c.Pending) != 0 {
		t.Fatalf("worker 1 to 4 KiB: %+v, %v; want it changed alone", c, err)
	}
	if s.UserStackOf(w1) != 4096 {
		t.Errorf("UserStackOf(worker 1) = %d, want 4096", s.UserStackOf(w1))
	}
	settle()
	read(400 * time.Millisecond)
	next() // 1: worker 1 at 4 KiB
	all := tg.waitWorkers(t, 4)
	w4 := all["worker 3"]
	read(100 * time.Millisecond) // its FORK record
	c, err = s.SetUserStacks(map[int]int{w1: 0, w4: 2048}, false)
	if err != nil || c.Reopened || len(c.Changed) != 1 || c.Changed[0] != w1 || len(c.Pending) != 1 || c.Pending[0] != w4 {
		t.Fatalf("worker 1 back, worker 4 (inherited) to 2 KiB without a reopen: %+v, %v", c, err)
	}
	settle()
	read(300 * time.Millisecond)
	next() // 2: all 512 again, worker 4 too
	c, err = s.SetUserStacks(map[int]int{w4: 2048}, true)
	if err != nil || !c.Reopened || len(c.Changed) != 1 || c.Batch == nil {
		t.Fatalf("worker 4 with a reopen: %+v, %v", c, err)
	}
	take(c.Batch)
	settle()
	read(400 * time.Millisecond)
	next() // 3: worker 4 at 2 KiB, now on its own events
	c, err = s.SetUserStacks(map[int]int{w4: 512}, false)
	if err != nil || c.Reopened || len(c.Changed) != 1 {
		t.Fatalf("worker 4 back, its own events now: %+v, %v", c, err)
	}
	settle()
	read(300 * time.Millisecond)
	next() // 4: all 512
	for {
		b, err := s.Next(context.Background())
		take(b)
		if err != nil {
			break
		}
	}
	s.Close()

	want := func(p int, tid int) uint32 {
		switch {
		case p == 1 && tid == w1:
			return 4096
		case p == 3 && tid == w4:
			return 2048
		}
		return 512
	}
	for p, ph := range phases {
		for _, name := range []string{"worker 0", "worker 1", "worker 2", "worker 3"} {
			tid := all[name]
			if p < 2 && name == "worker 3" {
				continue // not started in every one
			}
			got := ph[tid]
			w := want(p, tid)
			n := 0
			for _, v := range got {
				n += v
			}
			if n < 20 {
				t.Errorf("phase %d: %s has %d samples: %v", p, name, n, got)
				continue
			}
			if got[w] != n {
				t.Errorf("phase %d: %s's samples by copy size %v, want all of %d", p, name, got, w)
			}
		}
	}
	if after := openFDs(t); after != before {
		t.Errorf("descriptors: %d before, %d after Close", before, after)
	}
}

// TestSetUserStacksManyCPUs: on 64 CPUs (at the kernel boundary), one
// thread's new copy size opens its sampling group once per CPU, whatever
// the other threads: 64 events, not threads x CPUs.
func TestSetUserStacksManyCPUs(t *testing.T) {
	tg := startStackTarget(t, "3", "100000", "3000")
	tids := tg.waitWorkers(t, 3)
	fake, k := newFakeCPUs(t, 64)
	s, err := openWith(Config{PID: tg.pid, Freq: 99, UserOnly: true, UserStack: 8192}, k)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := len(fake.calls)
	if before < 4*64 {
		t.Fatalf("%d events opened for 4 threads on 64 CPUs", before)
	}
	c, err := s.SetUserStacks(map[int]int{tids["worker 1"]: 512}, false)
	if err != nil || len(c.Changed) != 1 {
		t.Fatalf("%+v, %v", c, err)
	}
	fake.mu.Lock()
	opened := fake.calls[before:]
	fake.mu.Unlock()
	if len(opened) != 64 {
		t.Errorf("%d events opened for one thread's change, want 64", len(opened))
	}
	for _, call := range opened {
		if call.pid != tids["worker 1"] || call.attr.Sample_stack_user != 512 {
			t.Errorf("opened on %d with a %d-byte copy, want worker 1's with 512", call.pid, call.attr.Sample_stack_user)
			break
		}
	}
}

// startStackTarget starts testdata/attach.c with args where user stack
// copies can be taken, and skips the test elsewhere.
func startStackTarget(t *testing.T, args ...string) *target {
	t.Helper()
	skipIfNoPerf(t)
	if !UnwindSupported {
		t.Skip("no user stack copies on this architecture")
	}
	return startTarget(t, buildAttachTarget(t), args...)
}
