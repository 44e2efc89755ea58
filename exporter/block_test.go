package exporter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

func TestEnqueueNeverBlocksOnAHungCollector(t *testing.T) {
	c := startCollector(t, listen(t))
	released := make(chan struct{})
	t.Cleanup(func() { close(released) })
	c.setRespond(func(int, int64) (pprofileotlp.ExportResponse, error) {
		<-released
		return pprofileotlp.NewExportResponse(), errors.New("released")
	})
	cfg := testConfig(c.addr)
	cfg.QueueWindows = 8
	e := newExporter(t, cfg)

	e.Enqueue(testWindow(0))
	waitFor(t, "the first call to reach the hung collector", func() bool { return len(c.received()) == 1 })

	const n = 500
	done := make(chan int)
	go func() {
		accepted := 0
		for i := range int64(n) {
			if e.Enqueue(testWindow(1 + i)) {
				accepted++
			}
		}
		done <- accepted
	}()
	select {
	case accepted := <-done:
		if accepted != n {
			t.Errorf("%d of %d windows accepted: a full queue drops the oldest, not the new", accepted, n)
		}
	case <-time.After(patience):
		t.Fatal("Enqueue blocked behind a collector that does not answer")
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Queued != cfg.QueueWindows || s.Dropped != n+1-uint64(cfg.QueueWindows) || s.Sent != 0 {
		t.Errorf("stats %+v: want the queue full at %d and the rest dropped", s, cfg.QueueWindows)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := e.Flush(ctx)
	if msg := oneLineErr(t, err); !strings.Contains(msg, "8 windows unsent") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("flush: %q", msg)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	closed := make(chan error)
	go func() { closed <- e.Close(ctx) }()
	select {
	case err = <-closed:
	case <-time.After(patience):
		t.Fatal("Close did not return after its deadline")
	}
	if ctx.Err() == nil {
		t.Error("Close returned before its deadline with windows still queued")
	}
	if msg := oneLineErr(t, err); !strings.Contains(msg, "8 windows") || !strings.Contains(msg, "left unsent") {
		t.Errorf("close: %q, want the count of windows left unsent", msg)
	}
	s = e.Stats()
	checkBooks(t, s)
	if s.Dropped != n+1 || s.Queued != 0 || s.Sent != 0 {
		t.Errorf("after close: %+v, want all %d dropped", s, n+1)
	}
	if len(c.received()) != 1 {
		t.Errorf("the collector got %d calls, want the one that hung", len(c.received()))
	}
}
