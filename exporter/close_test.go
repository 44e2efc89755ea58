package exporter

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A collector back up while the exporter waits out a long backoff still gets
// the queue at Close: Close cuts that wait short for one more try.
func TestCloseTriesAgainRatherThanWaitOutTheBackoff(t *testing.T) {
	addr := downAddr(t)
	cfg := testConfig(addr)
	cfg.Backoff.Initial, cfg.Backoff.Max = time.Hour, time.Hour
	e := newExporter(t, cfg)
	e.Enqueue(testWindow(0))
	e.Enqueue(testWindow(1))
	waitFor(t, "the first attempt to fail", func() bool { return e.Stats().Retries == 1 })

	c := startCollector(t, relisten(t, addr))
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got := c.delivered(); !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("collector got %v", got)
	}
}
