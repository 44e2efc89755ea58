package exporter

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
)

func TestCheckPassesOnACollector(t *testing.T) {
	c := startCollector(t, listen(t))
	cfg := testConfig(c.addr)
	cfg.Headers = []string{"authorization=Bearer t"}
	e := newExporter(t, cfg)
	if err := e.Check(checkCtx(t)); err != nil {
		t.Fatalf("check: %v", err)
	}
	calls := c.received()
	if len(calls) != 1 || calls[0].window != -1 || !slices.Equal(calls[0].md.Get("authorization"), []string{"Bearer t"}) {
		t.Errorf("the collector saw %+v, want one empty export with the headers", calls)
	}
	if s := e.Stats(); s.Offered != 0 || s.Sent != 0 {
		t.Errorf("check counted as a window: %+v", s)
	}
}

// A collector that is down at start is transient: the agent runs and queues.
func TestCheckOnACollectorThatIsDownIsTransient(t *testing.T) {
	addr := downAddr(t)
	e := newExporter(t, testConfig(addr))
	err := e.Check(checkCtx(t))
	if msg := oneLineErr(t, err); IsPermanent(err) || !strings.Contains(msg, "connection refused") {
		t.Errorf("check: %q (permanent %v), want a transient connection refused", msg, IsPermanent(err))
	}
	if e.Err() != nil || !e.Enqueue(testWindow(0)) {
		t.Errorf("after a transient check failure: Err %v, or Enqueue refused", e.Err())
	}
	c := startCollector(t, relisten(t, addr))
	flush(t, e)
	if got := c.delivered(); !slices.Equal(got, []int64{0}) {
		t.Errorf("collector got %v", got)
	}
}

// A gRPC server without the profiles service (a collector built without it)
// can never take a window: permanent, but the exporter itself does not give up.
func TestCheckOnAServerWithoutProfilesIsPermanent(t *testing.T) {
	lis := listen(t)
	srv := grpc.NewServer()
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	e := newExporter(t, testConfig(lis.Addr().String()))
	err := e.Check(checkCtx(t))
	if msg := oneLineErr(t, err); !IsPermanent(err) || !strings.Contains(msg, "unimplemented") {
		t.Errorf("check: %q (permanent %v)", msg, IsPermanent(err))
	}
	if e.Err() != nil {
		t.Errorf("Err() = %v: a refusal is the agent's to judge, not a TLS failure", e.Err())
	}
}
