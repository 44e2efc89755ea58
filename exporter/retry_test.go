package exporter

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// rejectFor makes the collector answer every call with err for period after
// its first call, then accept. It returns the count of calls rejected.
func rejectFor(c *collector, period time.Duration, err error) func() int {
	var mu sync.Mutex
	var until time.Time
	rejected := 0
	c.setRespond(func(int, int64) (pprofileotlp.ExportResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if until.IsZero() {
			until = now.Add(period)
		}
		if now.Before(until) {
			rejected++
			return pprofileotlp.NewExportResponse(), err
		}
		return pprofileotlp.NewExportResponse(), nil
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return rejected
	}
}

func withRetryInfo(t *testing.T, code codes.Code, delay time.Duration) error {
	st, err := status.New(code, "collector busy").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func TestResourceExhaustedWaitsForRetryInfo(t *testing.T) {
	c := startCollector(t, listen(t))
	const period, delay = time.Second, 200 * time.Millisecond
	rejected := rejectFor(c, period, withRetryInfo(t, codes.ResourceExhausted, delay))
	cfg := testConfig(c.addr)
	// Our own backoff alone would retry every ~10 ms: ~100 times in the period.
	cfg.Backoff.Initial, cfg.Backoff.Max = 5*time.Millisecond, 10*time.Millisecond
	e := newExporter(t, cfg)

	e.Enqueue(testWindow(0))
	flush(t, e)

	// Calls at least delay apart, all inside the period: load only spaces them more.
	r := rejected()
	if limit := int(period/delay) + 1; r > limit {
		t.Errorf("%d calls rejected in %v with a retry delay of %v: more than %d, the delay was not honored", r, period, delay, limit)
	}
	if got := c.delivered(); !slices.Equal(got, []int64{0}) {
		t.Errorf("collector got %v, want [0]", got)
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Retries != uint64(r) || r < 1 || s.Sent != 1 || s.Failed != 0 {
		t.Errorf("stats %+v: want %d retries and the window sent", s, r)
	}
	if s.LastError == nil || !strings.Contains(s.LastError.Error(), "resource exhausted: collector busy") {
		t.Errorf("last error %v", s.LastError)
	}
}

func TestUnavailableBacksOffExponentially(t *testing.T) {
	c := startCollector(t, listen(t))
	const period = 1500 * time.Millisecond
	rejected := rejectFor(c, period, status.Error(codes.Unavailable, "restarting"))
	cfg := testConfig(c.addr)
	cfg.Backoff.Initial, cfg.Backoff.Max = 20*time.Millisecond, 10*time.Second
	e := newExporter(t, cfg)

	e.Enqueue(testWindow(0))
	flush(t, e)

	// The shortest waits jitter allows, growing by the multiplier: how many
	// calls fit in the period at most. A constant 16 ms would fit ~90.
	limit, elapsed := 1, time.Duration(0)
	for i := 0; ; i++ {
		elapsed += cfg.Backoff.Delay(i, 0)
		if elapsed >= period {
			break
		}
		limit++
	}
	r := rejected()
	if r > limit {
		t.Errorf("%d calls rejected in %v: more than the %d exponential backoff allows", r, period, limit)
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Retries != uint64(r) || r < 1 || s.Sent != 1 {
		t.Errorf("stats %+v: want %d retries and the window sent", s, r)
	}
	if got := c.delivered(); !slices.Equal(got, []int64{0}) {
		t.Errorf("collector got %v, want [0]", got)
	}
}

func TestNonRetryableCodeDropsTheWindowAsFailed(t *testing.T) {
	c := startCollector(t, listen(t))
	c.setRespond(func(_ int, w int64) (pprofileotlp.ExportResponse, error) {
		if w == 1 {
			return pprofileotlp.NewExportResponse(), status.Error(codes.InvalidArgument, "window 1 is\nmalformed")
		}
		return pprofileotlp.NewExportResponse(), nil
	})
	e := newExporter(t, testConfig(c.addr))
	for i := range int64(3) {
		e.Enqueue(testWindow(i))
	}
	flush(t, e)

	if got := c.delivered(); !slices.Equal(got, []int64{0, 2}) {
		t.Errorf("collector accepted %v, want [0 2]", got)
	}
	if a := c.attempts(1); a != 1 {
		t.Errorf("the refused window was sent %d times, want once", a)
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Failed != 1 || s.Sent != 2 || s.Retries != 0 || s.Dropped != 0 {
		t.Errorf("stats %+v: want 1 failed, 2 sent, no retry", s)
	}
	if msg := oneLineErr(t, s.LastError); !strings.Contains(msg, "invalid argument: window 1 is malformed") || !strings.Contains(msg, c.addr) {
		t.Errorf("last error %q", msg)
	}
}

// The spec: RESOURCE_EXHAUSTED without RetryInfo is not retryable (a window
// over the collector's size limit stays over it).
func TestResourceExhaustedWithoutRetryInfoIsNotRetried(t *testing.T) {
	c := startCollector(t, listen(t))
	c.setRespond(func(_ int, w int64) (pprofileotlp.ExportResponse, error) {
		if w == 0 {
			return pprofileotlp.NewExportResponse(), status.Error(codes.ResourceExhausted, "message larger than max")
		}
		return pprofileotlp.NewExportResponse(), nil
	})
	e := newExporter(t, testConfig(c.addr))
	e.Enqueue(testWindow(0))
	e.Enqueue(testWindow(1))
	flush(t, e)
	if a := c.attempts(0); a != 1 {
		t.Errorf("window 0 sent %d times, want once", a)
	}
	if s := e.Stats(); s.Failed != 1 || s.Sent != 1 || s.Retries != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestPartialSuccessIsCountedAndKept(t *testing.T) {
	c := startCollector(t, listen(t))
	c.setRespond(func(int, int64) (pprofileotlp.ExportResponse, error) {
		resp := pprofileotlp.NewExportResponse()
		resp.PartialSuccess().SetRejectedProfiles(2)
		resp.PartialSuccess().SetErrorMessage("2 profiles had no sample type")
		return resp, nil
	})
	var log logLines
	cfg := testConfig(c.addr)
	cfg.Logf = log.logf
	e := newExporter(t, cfg)
	for i := range int64(3) {
		e.Enqueue(testWindow(i))
	}
	flush(t, e)
	if a := len(c.received()); a != 3 {
		t.Errorf("%d calls for 3 windows: a partial success must not be retried", a)
	}
	s := e.Stats()
	checkBooks(t, s)
	if s.Sent != 3 || s.RejectedProfiles != 6 || s.PartialMessage != "2 profiles had no sample type" || s.Retries != 0 {
		t.Errorf("stats %+v: want 3 sent, 6 profiles rejected and the message", s)
	}
	// The sender logs after the queue empties, so wait for it.
	waitFor(t, "the partial success's log line", func() bool { return len(log.get()) > 0 })
	if lines := log.get(); len(lines) != 1 || !strings.Contains(lines[0], "rejected 2 profiles: 2 profiles had no sample type") {
		t.Errorf("log %q: want one line for the partial successes (rate-limited)", lines)
	}
}
