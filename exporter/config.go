package exporter

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// Config says where and how windows are delivered. Start from DefaultConfig:
// New rejects zero values rather than guessing what was meant.
type Config struct {
	// Endpoint is the collector's OTLP/gRPC receiver, HOST:PORT.
	Endpoint string
	// Insecure sends in plaintext (a collector on loopback); otherwise TLS
	// verifies the collector against the system roots or CAFile.
	Insecure bool
	// CAFile is a PEM file whose certificates replace the system roots.
	CAFile string
	// Headers are KEY=VALUE pairs sent as metadata on every call (auth tokens).
	Headers []string
	// Timeout bounds one export call.
	Timeout time.Duration
	// UserAgent names the sender; gRPC appends its own version.
	UserAgent string

	// QueueWindows and QueueBytes bound the windows waiting to be sent,
	// including the one in an RPC attempt. A window's bytes are its
	// pprofile.ProtoMarshaler size.
	QueueWindows int
	QueueBytes   int64

	Backoff Backoff

	// Logf, if set, gets the exporter's log lines: the first failure, the
	// recovery, drops, refusals, giving up; repeats at most once per LogEvery.
	// It is called from the exporter's goroutine, never from Enqueue.
	Logf     func(format string, args ...any)
	LogEvery time.Duration
}

// Backoff is the wait between retries of a window: Initial×Multiplier^n up to
// Max, each scaled by a random factor in [1-Jitter, 1+Jitter]. Tests shorten it
// here; the network is never faked.
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64
	Jitter     float64
}

// DefaultConfig is the agent's configuration without an endpoint: 60 windows
// (ten minutes of 10 s windows) or 64 MiB queued, retries from 1 s to 30 s.
func DefaultConfig() Config {
	return Config{
		Timeout:      10 * time.Second,
		UserAgent:    "cctop",
		QueueWindows: 60,
		QueueBytes:   64 << 20,
		Backoff: Backoff{
			Initial:    time.Second,
			Max:        30 * time.Second,
			Multiplier: 2,
			Jitter:     0.2,
		},
		LogEvery: time.Minute,
	}
}

// Delay is the wait before retry number n (0 for the first retry) given a
// uniform random r in [0, 1).
func (b Backoff) Delay(n int, r float64) time.Duration {
	d := float64(b.Initial)
	for i := 0; i < n && d < float64(b.Max); i++ {
		d *= b.Multiplier
	}
	d = min(d, float64(b.Max))
	d *= 1 + b.Jitter*(2*r-1)
	return time.Duration(d)
}

func (b Backoff) validate() error {
	switch {
	case b.Initial <= 0:
		return errors.New("otlp: backoff initial must be > 0")
	case b.Max < b.Initial:
		return errors.New("otlp: backoff max must be ≥ initial")
	case b.Multiplier < 1:
		return errors.New("otlp: backoff multiplier must be ≥ 1")
	case b.Jitter < 0 || b.Jitter >= 1:
		return errors.New("otlp: backoff jitter must be in [0, 1)")
	}
	return nil
}

func (c Config) validate() error {
	if err := validateEndpoint(c.Endpoint); err != nil {
		return err
	}
	switch {
	case c.Insecure && c.CAFile != "":
		return fmt.Errorf("otlp %s: a CA file and insecure (plaintext) exclude each other", c.Endpoint)
	case c.Timeout <= 0:
		return errors.New("otlp: timeout must be > 0")
	case c.QueueWindows < 1:
		return errors.New("otlp: queue must hold at least 1 window")
	case c.QueueBytes < 1:
		return errors.New("otlp: queue bytes must be > 0")
	case c.LogEvery <= 0:
		return errors.New("otlp: log interval must be > 0")
	}
	return c.Backoff.validate()
}

func validateEndpoint(ep string) error {
	if ep == "" {
		return errors.New("otlp: no endpoint (want HOST:PORT)")
	}
	if strings.Contains(ep, "://") {
		return fmt.Errorf("otlp endpoint %q: want HOST:PORT, without a scheme", ep)
	}
	host, port, err := net.SplitHostPort(ep)
	if err != nil || host == "" {
		return fmt.Errorf("otlp endpoint %q: want HOST:PORT", ep)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("otlp endpoint %q: bad port %q", ep, port)
	}
	return nil
}

// parseHeaders turns KEY=VALUE pairs into gRPC metadata. Errors name the key or
// the pair's position, never the value: values are often secrets.
func parseHeaders(pairs []string) (metadata.MD, error) {
	md := metadata.MD{}
	for i, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("otlp header %d: want KEY=VALUE", i+1)
		}
		if bad := strings.IndexFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
		}); bad >= 0 {
			return nil, fmt.Errorf("otlp header %d: key may hold only letters, digits, '-', '_' and '.'", i+1)
		}
		switch {
		case strings.HasPrefix(k, "grpc-"):
			return nil, fmt.Errorf("otlp header %q: grpc- keys are reserved", k)
		case strings.HasSuffix(k, "-bin"):
			return nil, fmt.Errorf("otlp header %q: binary (-bin) headers are not supported", k)
		case k == pprofileotlp.DevelopmentVersionHeader:
			return nil, fmt.Errorf("otlp header %q: set by the exporter", k)
		}
		if strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
			return nil, fmt.Errorf("otlp header %q: value must be printable ASCII", k)
		}
		md.Append(k, v)
	}
	return md, nil
}
