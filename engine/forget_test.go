package engine

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// TestForkLoopForgotten: a target that starts short-lived processes all
// the time (a shell loop) does not grow the engine: each child's mappings
// go once it has ended and its records are read, and the thread table keeps
// only the threads that have samples or are alive.
func TestForkLoopForgotten(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	cfg, plan := clockPlan(t, false, "/bin/sh", "-c", "while :; do /bin/true; done")
	sess, b, err := startSession(cfg, plan, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	defer sess.Stop(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	arm := newArmer(plan, sess)
	for {
		if _, err := readNext(ctx, sess, b, arm); err != nil {
			break
		}
	}
	// With sampling paused, three more drains hand on the records of the
	// children that ended in the last ones.
	if err := sess.Pause(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		batch, _ := sess.Next(ctx)
		b.handle(batch)
	}
	// Records behind a sample whose modules still load (libc's debug
	// info takes seconds under -race) wait, the processes' ends with them.
	b.flushParked()
	started := sess.Target().Processes
	kept, threads := b.res.Processes(), len(sess.Threads())
	sampled := 0
	for _, th := range sess.Threads() {
		if th.Samples > 0 {
			sampled++
		}
	}
	t.Logf("%d processes started, mappings kept of %d; %d threads in the table, %d of them sampled; %d seen; %d records lost", started, kept, threads, sampled, sess.ThreadsSeen(), sess.Stats().Lost)
	if started < 100 {
		t.Fatalf("only %d processes started in 2 s", started)
	}
	// The shell, and the child running when sampling paused.
	if kept > 3 {
		t.Errorf("mappings of %d processes kept after %d started and ended", kept, started)
	}
	if threads > sampled+10 {
		t.Errorf("%d threads in the table, %d of them sampled: exited threads without samples stay", threads, sampled)
	}
}
