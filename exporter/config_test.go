package exporter

import (
	"strings"
	"testing"
	"time"
)

func TestNewRejectsBadConfigInOneLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no endpoint", func(c *Config) { c.Endpoint = "" }, "no endpoint"},
		{"no port", func(c *Config) { c.Endpoint = "collector" }, "want HOST:PORT"},
		{"scheme", func(c *Config) { c.Endpoint = "http://collector:4317" }, "without a scheme"},
		{"port 0", func(c *Config) { c.Endpoint = "collector:0" }, "bad port"},
		{"port too big", func(c *Config) { c.Endpoint = "collector:99999" }, "bad port"},
		{"no host", func(c *Config) { c.Endpoint = ":4317" }, "want HOST:PORT"},
		{"insecure and CA", func(c *Config) { c.CAFile = "ca.pem" }, "exclude each other"},
		{"timeout", func(c *Config) { c.Timeout = 0 }, "timeout"},
		{"queue windows", func(c *Config) { c.QueueWindows = 0 }, "at least 1 window"},
		{"queue bytes", func(c *Config) { c.QueueBytes = 0 }, "queue bytes"},
		{"log interval", func(c *Config) { c.LogEvery = 0 }, "log interval"},
		{"backoff initial", func(c *Config) { c.Backoff.Initial = 0 }, "initial"},
		{"backoff max", func(c *Config) { c.Backoff.Max = c.Backoff.Initial / 2 }, "max"},
		{"backoff multiplier", func(c *Config) { c.Backoff.Multiplier = 0.5 }, "multiplier"},
		{"backoff jitter", func(c *Config) { c.Backoff.Jitter = 1 }, "jitter"},
		{"header without =", func(c *Config) { c.Headers = []string{"a=b", "token"} }, "header 2: want KEY=VALUE"},
		{"header without key", func(c *Config) { c.Headers = []string{"=s3cr3t"} }, "want KEY=VALUE"},
		{"header key", func(c *Config) { c.Headers = []string{"x y=s3cr3t"} }, "key may hold only"},
		{"reserved header", func(c *Config) { c.Headers = []string{"grpc-timeout=s3cr3t"} }, "reserved"},
		{"binary header", func(c *Config) { c.Headers = []string{"x-bin=s3cr3t"} }, "binary"},
		{"version header", func(c *Config) { c.Headers = []string{"otlp-profiles-development-version=s3cr3t"} }, "set by the exporter"},
		{"header value", func(c *Config) { c.Headers = []string{"authorization=s3cr3t\x00"} }, "printable ASCII"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig("127.0.0.1:4317")
			tc.mod(&cfg)
			e, err := New(cfg)
			if err == nil {
				e.Close(t.Context())
				t.Fatal("New accepted it")
			}
			msg := oneLineErr(t, err)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want it to say %q", msg, tc.want)
			}
			if strings.Contains(msg, "s3cr3t") {
				t.Errorf("error %q shows a header's value", msg)
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	want := Backoff{Initial: time.Second, Max: 30 * time.Second, Multiplier: 2, Jitter: 0.2}
	if cfg.Backoff != want || cfg.QueueWindows != 60 || cfg.QueueBytes != 64<<20 || cfg.Timeout != 10*time.Second ||
		!strings.Contains(cfg.UserAgent, "cctop") || cfg.LogEvery != time.Minute {
		t.Errorf("DefaultConfig() = %+v", cfg)
	}
	cfg.Endpoint = "collector.example:4317"
	e, err := New(cfg) // TLS with the system roots; does not connect
	if err != nil {
		t.Fatalf("New(DefaultConfig()): %v", err)
	}
	if err := e.Close(t.Context()); err != nil {
		t.Errorf("close with nothing queued: %v", err)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := DefaultConfig().Backoff
	prev := time.Duration(0)
	for n := range 12 {
		base := min(time.Duration(float64(b.Initial)*float64(int64(1)<<n)), b.Max)
		mid := b.Delay(n, 0.5)
		if mid != base {
			t.Errorf("Delay(%d, 0.5) = %v, want %v", n, mid, base)
		}
		lo, hi := b.Delay(n, 0), b.Delay(n, 0.999999)
		if lo != time.Duration(0.8*float64(base)) || hi > time.Duration(1.2*float64(base)) || hi < time.Duration(1.199*float64(base)) {
			t.Errorf("Delay(%d) spans [%v, %v], want ±20%% of %v", n, lo, hi, base)
		}
		if mid < prev {
			t.Errorf("Delay(%d) = %v shrank from %v", n, mid, prev)
		}
		prev = mid
	}
	if got := b.Delay(maxBackoffStep, 0.5); got != b.Max {
		t.Errorf("Delay after many retries = %v, want the max %v", got, b.Max)
	}
}

func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"authorization=Bearer abc", "X-Tenant = a=b", "=", "k=", "grpc-x=1", "a b=c", "k=\x7f", "ÿ=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		md, err := parseHeaders([]string{h})
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if len(md) != 1 {
			t.Fatalf("%q gave %d keys", h, len(md))
		}
		for k, vs := range md {
			if k == "" || k != strings.ToLower(k) || strings.HasPrefix(k, "grpc-") || len(vs) != 1 {
				t.Fatalf("%q gave %q: %q", h, k, vs)
			}
			for _, r := range vs[0] {
				if r < 0x20 || r > 0x7e {
					t.Fatalf("%q gave a value with %q", h, r)
				}
			}
		}
	})
}
