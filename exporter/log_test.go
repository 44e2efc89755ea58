package exporter

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// dropLine is the drops' line: the count is what had been dropped when the
// sender logged, and the drops after it wait for the next interval.
var dropLine = regexp.MustCompile(`queue full: dropped [1-8] windows`)

type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logLines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func TestADownCollectorDoesNotFloodTheLog(t *testing.T) {
	addr := downAddr(t)
	var log logLines
	cfg := testConfig(addr)
	cfg.Backoff.Initial, cfg.Backoff.Max = time.Millisecond, 2*time.Millisecond
	cfg.QueueWindows = 2
	cfg.LogEvery = time.Hour
	cfg.Logf = log.logf
	e := newExporter(t, cfg)

	for i := range int64(10) {
		e.Enqueue(testWindow(i))
	}
	waitFor(t, "50 retries", func() bool { return e.Stats().Retries >= 50 })
	lines := log.get()
	// One line for the failure and one for the drops, however many retries.
	if len(lines) != 2 || !strings.Contains(lines[0], "connection refused") || !strings.Contains(lines[0], "will retry") ||
		!dropLine.MatchString(lines[1]) {
		t.Fatalf("after %d retries and 8 drops the log has %q", e.Stats().Retries, lines)
	}

	startCollector(t, relisten(t, addr))
	flush(t, e)
	// The sender logs after the queue empties, so wait for it.
	waitFor(t, "the line after recovery", func() bool { return len(log.get()) >= 3 })
	lines = log.get()
	if len(lines) != 3 || !strings.Contains(lines[2], "delivering again") {
		t.Fatalf("after recovery the log has %q, want one more line saying so", lines)
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "\n\r") || !strings.HasPrefix(l, "otlp "+addr+": ") {
			t.Errorf("log line %q: want one line naming the endpoint", l)
		}
	}
}

func TestRepeatedFailureIsLoggedAgainAfterTheInterval(t *testing.T) {
	addr := downAddr(t)
	var log logLines
	cfg := testConfig(addr)
	cfg.Backoff.Initial, cfg.Backoff.Max = time.Millisecond, 2*time.Millisecond
	cfg.LogEvery = 50 * time.Millisecond
	cfg.Logf = log.logf
	start := time.Now()
	e := newExporter(t, cfg)
	e.Enqueue(testWindow(0))

	waitFor(t, "a repeat of the failure line", func() bool { return len(log.get()) >= 2 })
	waitFor(t, "100 retries", func() bool { return e.Stats().Retries >= 100 })
	lines := log.get()
	elapsed := time.Since(start)
	if !strings.Contains(lines[1], "failing for") || !strings.Contains(lines[1], "retries") {
		t.Errorf("repeat line %q", lines[1])
	}
	// The first line, then at most one per interval: a slower machine only
	// allows more.
	if limit := 2 + int(elapsed/cfg.LogEvery); len(lines) > limit {
		t.Errorf("%d log lines in %v at one per %v: %q", len(lines), elapsed, cfg.LogEvery, lines)
	}
}
