package exporter

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxServerDelay caps a server's RetryInfo: a broken collector asking for a
// day's wait would otherwise hold the queue's head that long.
const maxServerDelay = 5 * time.Minute

// verdict is what a failed export means for the window.
type verdict int

const (
	retryable verdict = iota // send it again after a wait
	refused                  // drop it, counted as failed
	fatal                    // give up on the endpoint: nothing sent to it can succeed
)

// failure is a classified export error.
type failure struct {
	verdict verdict
	err     error         // one line, naming the endpoint
	delay   time.Duration // the server's RetryInfo delay, 0 if none
}

// permanentError marks an error that retrying cannot cure.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// IsPermanent reports whether err (from Check, Err, Flush or Close) means the
// endpoint cannot work as configured: the agent should print it and exit.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// classify turns an export error into what to do with the window, following
// the OTLP/gRPC spec's table of retryable codes.
func (e *Exporter) classify(err error) failure {
	st, ok := status.FromError(err)
	if !ok {
		// Not from the server: the client could not encode the window.
		return failure{verdict: refused, err: e.errorf("%s", oneLine(err.Error()))}
	}
	var delay time.Duration
	hasRetryInfo := false
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			hasRetryInfo = true
			if ri.GetRetryDelay() != nil {
				delay = min(max(ri.GetRetryDelay().AsDuration(), 0), maxServerDelay)
			}
		}
	}
	msg := st.Message()
	switch st.Code() {
	case codes.Unavailable:
		if msg, bad := e.tlsFailure(msg); bad {
			return failure{verdict: fatal, err: &permanentError{e.errorf("%s", msg).Error()}}
		}
		return failure{verdict: retryable, delay: delay, err: e.statusError(st)}
	case codes.Canceled, codes.DeadlineExceeded, codes.Aborted, codes.OutOfRange, codes.DataLoss:
		return failure{verdict: retryable, delay: delay, err: e.statusError(st)}
	case codes.ResourceExhausted:
		// Only the server's RetryInfo says it can recover; without it this is
		// e.g. a window over the collector's message size limit, which no retry
		// will shrink.
		if hasRetryInfo {
			return failure{verdict: retryable, delay: delay, err: e.statusError(st)}
		}
	}
	return failure{verdict: refused, err: e.statusError(st)}
}

func (e *Exporter) errorf(format string, args ...any) error {
	return errors.New("otlp " + e.cfg.Endpoint + ": " + oneLine(fmt.Sprintf(format, args...)))
}

// statusError is a status in one short line: the code in words, then the
// message without gRPC's nested "desc =" wrapping.
func (e *Exporter) statusError(st *status.Status) error {
	msg := st.Message()
	for _, p := range []string{"connection error: desc = ", "transport: ", "Error while dialing: ", "error while dialing: "} {
		msg = strings.TrimPrefix(strings.Trim(msg, `"`), p)
	}
	msg = strings.Trim(msg, `"`)
	code := codeName(st.Code())
	if msg == "" {
		return e.errorf("%s", code)
	}
	if strings.HasSuffix(msg, "connection refused") {
		msg += " (collector down?)"
	} else if e.cfg.Insecure && strings.Contains(msg, "server preface") {
		// A TLS server hangs up on a plaintext client's preface.
		msg += " (a TLS collector? " + hintInsecure + ")"
	}
	return e.errorf("%s: %s", code, msg)
}

// codeName is a code in words: DeadlineExceeded → deadline exceeded.
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// oneLine flattens and shortens a message from a server or a library: it ends
// up in a status line and a log line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const maxLen = 300
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && s[cut]&0xc0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
