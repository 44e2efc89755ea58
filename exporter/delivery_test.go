package exporter

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

func TestDeliversEveryWindowOnceInOrderWithHeadersAndGzip(t *testing.T) {
	c := startCollector(t, listen(t))
	cfg := testConfig(c.addr)
	cfg.Headers = []string{"Authorization=Bearer s3cr3t", " x-tenant = cctop "}
	e := newExporter(t, cfg)

	const n = 20
	var bytes uint64
	for i := range int64(n) {
		w := sizedWindow(i, 50, 400)
		bytes += uint64(sizer.ProfilesSize(w))
		if !e.Enqueue(w) {
			t.Fatalf("window %d not accepted", i)
		}
	}
	flush(t, e)

	if got := c.delivered(); !slices.Equal(got, seq(0, n)) {
		t.Fatalf("collector got windows %v, want 0..%d once each in order", got, n-1)
	}
	for _, cl := range c.received() {
		for k, want := range map[string]string{
			"authorization":                       "Bearer s3cr3t",
			"x-tenant":                            "cctop",
			pprofileotlp.DevelopmentVersionHeader: pprofileotlp.DevelopmentVersion,
		} {
			if got := cl.md.Get(k); len(got) != 1 || got[0] != want {
				t.Errorf("window %d: header %s = %q, want %q", cl.window, k, got, want)
			}
		}
		if ua := strings.Join(cl.md.Get("user-agent"), " "); !strings.HasPrefix(ua, "cctop") {
			t.Errorf("window %d: user agent %q does not name cctop", cl.window, ua)
		}
		if cl.compression != "gzip" {
			t.Errorf("window %d: the server decoded it with %q, want gzip", cl.window, cl.compression)
		}
		if cl.compressed >= cl.length {
			t.Errorf("window %d: %d bytes on the wire for %d bytes of payload: not compressed", cl.window, cl.compressed, cl.length)
		}
	}

	s := e.Stats()
	checkBooks(t, s)
	if s.Offered != n || s.Sent != n || s.SentBytes != bytes || s.Dropped != 0 || s.Failed != 0 || s.Retries != 0 || s.Queued != 0 || s.QueuedBytes != 0 {
		t.Errorf("stats %+v: want %d offered and sent (%d bytes), nothing else", s, n, bytes)
	}
	if s.LastSuccess.IsZero() || s.LastError != nil {
		t.Errorf("stats: last success %v, last error %v", s.LastSuccess, s.LastError)
	}
}

func TestCollectorDownAtStartThenUp(t *testing.T) {
	addr := downAddr(t)
	e := newExporter(t, testConfig(addr))

	const n = 10
	for i := range int64(n) {
		if !e.Enqueue(testWindow(i)) {
			t.Fatalf("window %d not accepted while the collector is down", i)
		}
	}
	waitFor(t, "retries while the collector is down", func() bool { return e.Stats().Retries >= 3 })
	s := e.Stats()
	if s.Sent != 0 || s.Queued != n || s.LastError == nil || !strings.Contains(s.LastError.Error(), "connection refused") {
		t.Errorf("while down: %+v, want %d queued, nothing sent, a connection refused", s, n)
	}

	c := startCollector(t, relisten(t, addr))
	flush(t, e)
	if got := c.delivered(); !slices.Equal(got, seq(0, n)) {
		t.Fatalf("collector got windows %v, want 0..%d once each in order", got, n-1)
	}
	s = e.Stats()
	checkBooks(t, s)
	if s.Sent != n || s.Dropped != 0 || s.Failed != 0 || s.Retries < 3 {
		t.Errorf("after recovery: %+v", s)
	}
}

func TestCollectorDownLongerThanTheQueueDropsTheOldest(t *testing.T) {
	addr := downAddr(t)
	cfg := testConfig(addr)
	cfg.QueueWindows = 5
	e := newExporter(t, cfg)

	const n = 23
	for i := range int64(n) {
		if !e.Enqueue(testWindow(i)) {
			t.Fatalf("window %d not accepted: a full queue drops the oldest, not the newest", i)
		}
		if q := e.Stats().Queued; q > cfg.QueueWindows {
			t.Fatalf("queue holds %d windows, bound %d", q, cfg.QueueWindows)
		}
	}
	s := e.Stats()
	if s.Dropped != n-5 || s.Queued != 5 {
		t.Fatalf("after %d windows into a queue of 5: dropped %d, queued %d; want %d and 5", n, s.Dropped, s.Queued, n-5)
	}

	c := startCollector(t, relisten(t, addr))
	flush(t, e)
	got := c.delivered()
	// The newest arrive, in order. The one window that may be older is the
	// head that was in an attempt when its turn to be dropped came: an attempt
	// is never dropped.
	if len(got) != 5 || got[0] > n-5 || !slices.Equal(got[1:], seq(n-4, n)) {
		t.Fatalf("collector got %v, want the newest windows %v (the first may be an older one that was in flight)", got, seq(n-5, n))
	}
	for _, w := range got {
		if a := c.attempts(w); a != 1 {
			t.Errorf("window %d arrived %d times", w, a)
		}
	}
	s = e.Stats()
	checkBooks(t, s)
	if s.Sent != 5 || s.Dropped != n-5 {
		t.Errorf("stats %+v: want 5 sent, %d dropped", s, n-5)
	}
}

func TestQueueBoundByBytes(t *testing.T) {
	addr := downAddr(t)
	size := int64(sizer.ProfilesSize(testWindow(0)))
	cfg := testConfig(addr)
	cfg.QueueBytes = 3*size + size/2
	e := newExporter(t, cfg)

	for i := range int64(10) {
		if !e.Enqueue(testWindow(i)) {
			t.Fatalf("window %d not accepted", i)
		}
		if s := e.Stats(); s.QueuedBytes > cfg.QueueBytes || s.Queued > 3 {
			t.Fatalf("queue holds %d windows, %d bytes; bound %d bytes (3 windows)", s.Queued, s.QueuedBytes, cfg.QueueBytes)
		}
	}
	if s := e.Stats(); s.Dropped != 7 || s.Queued != 3 || s.QueuedBytes != 3*size {
		t.Errorf("stats %+v: want 7 dropped, 3 queued (%d bytes)", s, 3*size)
	}

	// A window bigger than the whole queue is refused outright, and counted.
	big := sizedWindow(99, 2000, 2000)
	if int64(sizer.ProfilesSize(big)) <= cfg.QueueBytes {
		t.Fatal("test window is not bigger than the queue")
	}
	if e.Enqueue(big) {
		t.Error("a window bigger than the queue's byte bound was accepted")
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Dropped != 8 || s.Queued != 3 {
		t.Errorf("after the big window: %+v", s)
	}
}

func TestEnqueueAfterCloseIsRefused(t *testing.T) {
	c := startCollector(t, listen(t))
	e := newExporter(t, testConfig(c.addr))
	e.Enqueue(testWindow(0))
	if err := e.Close(t.Context()); err != nil {
		t.Fatalf("close: %v", err)
	}
	if e.Enqueue(testWindow(1)) {
		t.Error("Enqueue after Close accepted a window")
	}
	if got := c.delivered(); !slices.Equal(got, []int64{0}) {
		t.Errorf("collector got %v, want [0]: Close flushes", got)
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Sent != 1 || s.Dropped != 1 {
		t.Errorf("stats %+v", s)
	}
	if err := e.Close(t.Context()); err != nil {
		t.Errorf("second close: %v", err)
	}
}
