package exporter

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// selfSigned makes a certificate for 127.0.0.1 that is its own CA, and
// returns it and its PEM file.
func selfSigned(t *testing.T, name string) (tls.Certificate, string) {
	return selfSignedFor(t, name, net.IPv4(127, 0, 0, 1))
}

func selfSignedFor(t *testing.T, name string, ip net.IP) (tls.Certificate, string) {
	c := testutil.SelfSignedCert(t, t.TempDir(), name, ip)
	return tls.Certificate{Certificate: [][]byte{c.DER}, PrivateKey: c.Key}, c.CertFile
}

func tlsCollector(t *testing.T, cert tls.Certificate) *collector {
	return startCollector(t, listen(t), grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
}

func tlsConfig(addr, caFile string) Config {
	cfg := testConfig(addr)
	cfg.Insecure = false
	cfg.CAFile = caFile
	return cfg
}

func checkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

func TestTLSWithTheRightCADelivers(t *testing.T) {
	cert, caFile := selfSigned(t, "collector")
	c := tlsCollector(t, cert)
	e := newExporter(t, tlsConfig(c.addr, caFile))
	if err := e.Check(checkCtx(t)); err != nil {
		t.Fatalf("check: %v", err)
	}
	for i := range int64(3) {
		e.Enqueue(testWindow(i))
	}
	flush(t, e)
	if got := c.delivered(); !slices.Equal(got, seq(0, 3)) {
		t.Errorf("collector got %v", got)
	}
	if s := e.Stats(); s.Sent != 3 || e.Err() != nil {
		t.Errorf("stats %+v, err %v", s, e.Err())
	}
}

func TestTLSWithAWrongCAFailsForGood(t *testing.T) {
	cert, _ := selfSigned(t, "collector")
	_, otherCA := selfSigned(t, "other")
	c := tlsCollector(t, cert)

	t.Run("check", func(t *testing.T) {
		e := newExporter(t, tlsConfig(c.addr, otherCA))
		err := e.Check(checkCtx(t))
		msg := oneLineErr(t, err)
		t.Log(msg)
		if !IsPermanent(err) || !strings.Contains(msg, "certificate signed by unknown authority") || !strings.Contains(msg, c.addr) {
			t.Errorf("check: %q (permanent %v): want a permanent one-line certificate error naming the endpoint", msg, IsPermanent(err))
		}
		select {
		case <-e.Failed():
		default:
			t.Error("Failed() not closed after a permanent check failure")
		}
		if e.Err() == nil || e.Enqueue(testWindow(0)) {
			t.Errorf("after giving up: Err %v, and Enqueue still accepts", e.Err())
		}
	})

	t.Run("sending", func(t *testing.T) {
		e := newExporter(t, tlsConfig(c.addr, otherCA))
		for i := range int64(4) {
			e.Enqueue(testWindow(i))
		}
		select {
		case <-e.Failed():
		case <-time.After(patience):
			t.Fatal("the exporter keeps retrying a certificate that cannot verify")
		}
		msg := oneLineErr(t, e.Err())
		if !IsPermanent(e.Err()) || !strings.Contains(msg, "certificate") || !strings.Contains(msg, "--otlp-ca") {
			t.Errorf("Err() = %q", msg)
		}
		s := e.Stats()
		checkBooks(t, s)
		if s.Dropped != 4 || s.Queued != 0 || s.Sent != 0 {
			t.Errorf("stats %+v: want the 4 windows dropped", s)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := e.Close(ctx); err == nil || err.Error() != msg {
			t.Errorf("close: %v, want the permanent error", err)
		}
	})
	if n := len(c.received()); n != 0 {
		t.Errorf("the collector got %d calls through a TLS handshake that failed", n)
	}
}

func TestTLSWithACertificateForAnotherHostFailsForGood(t *testing.T) {
	cert, caFile := selfSignedFor(t, "elsewhere", net.IPv4(192, 0, 2, 7))
	c := tlsCollector(t, cert)
	e := newExporter(t, tlsConfig(c.addr, caFile))
	err := e.Check(checkCtx(t))
	msg := oneLineErr(t, err)
	if !IsPermanent(err) || !strings.Contains(msg, "certificate is valid for 192.0.2.7, not 127.0.0.1") {
		t.Errorf("check: %q (permanent %v)", msg, IsPermanent(err))
	}
}

func TestTLSAgainstAPlaintextCollectorFailsClearly(t *testing.T) {
	_, caFile := selfSigned(t, "collector")
	c := startCollector(t, listen(t))
	e := newExporter(t, tlsConfig(c.addr, caFile))
	err := e.Check(checkCtx(t))
	msg := oneLineErr(t, err)
	if !IsPermanent(err) || !strings.Contains(msg, "does not speak TLS") || !strings.Contains(msg, "--otlp-insecure") {
		t.Errorf("check: %q (permanent %v)", msg, IsPermanent(err))
	}
}

func TestPlaintextAgainstATLSCollectorFailsClearly(t *testing.T) {
	cert, _ := selfSigned(t, "collector")
	c := tlsCollector(t, cert)
	e := newExporter(t, testConfig(c.addr))
	err := e.Check(checkCtx(t))
	msg := oneLineErr(t, err)
	if strings.Contains(msg, "deadline exceeded") || !strings.Contains(msg, "--otlp-insecure") {
		t.Errorf("check: %q: want a failure of its own, not a timeout, with a hint", msg)
	}
	// A proxy in front of a collector that is down hangs up the same way, so
	// this stays transient: the agent runs and the status line shows the hint.
	if IsPermanent(err) {
		t.Errorf("check: %q is permanent", msg)
	}
}

func TestBadCAFileIsAnErrorFromNew(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(t.TempDir(), "missing.pem"), "no such file"},
		{garbage, "no PEM certificate"},
	} {
		_, err := New(tlsConfig("127.0.0.1:4317", tc.file))
		if msg := oneLineErr(t, err); !strings.Contains(msg, tc.want) || !strings.Contains(msg, "127.0.0.1:4317") {
			t.Errorf("New with CA file %s: %q, want %q", tc.file, msg, tc.want)
		}
	}
}
