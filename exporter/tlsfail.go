package exporter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc/credentials"
)

// The agent's flags that fix the two TLS mistakes; named in the errors so the
// line the agent prints says what to change.
const (
	hintCA       = "check --otlp-ca"
	hintInsecure = "check --otlp-insecure"
)

// tlsFailure reports whether an UNAVAILABLE message is a failed TLS handshake
// that no retry can cure, and says it in the agent's words. gRPC flattens the
// handshake's error into the status text; the typed error is kept by
// watchedTLS, and both must agree so that a stale handshake error never turns a
// later "connection refused" into a permanent failure.
func (e *Exporter) tlsFailure(msg string) (string, bool) {
	if e.tlsWatch == nil || !strings.Contains(msg, "authentication handshake failed") {
		return "", false
	}
	p := e.tlsWatch.last.Load()
	if p == nil {
		return "", false
	}
	return describeTLS(*p)
}

// describeTLS words a handshake error, and says whether it is permanent:
// certificate verification, a server that does not speak TLS, or a TLS alert
// (the server refused our TLS). EOFs, resets and timeouts are not.
func describeTLS(err error) (string, bool) {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &unknown):
		return "tls: certificate signed by unknown authority (" + hintCA + ")", true
	case errors.As(err, &host):
		return "tls: " + strings.TrimPrefix(host.Error(), "x509: ") + " (" + hintCA + ")", true
	case errors.As(err, &invalid):
		return "tls: " + strings.TrimPrefix(invalid.Error(), "x509: ") + " (" + hintCA + ")", true
	case errors.As(err, &verify):
		return "tls: certificate verification failed: " + oneLine(verify.Err.Error()) + " (" + hintCA + ")", true
	case errors.As(err, &header):
		return "tls: the server does not speak TLS (a plaintext collector? " + hintInsecure + ")", true
	case errors.As(err, &alert):
		return "tls: the server refused the handshake: " + alert.Error(), true
	}
	return "", false
}

// watchedTLS is the client's TLS credentials, keeping the last handshake's
// typed error: gRPC passes on only its text.
type watchedTLS struct {
	credentials.TransportCredentials
	last *atomic.Pointer[error]
}

func (c *watchedTLS) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		c.last.Store(&err)
	} else {
		c.last.Store(nil)
	}
	return conn, info, err
}

func (c *watchedTLS) Clone() credentials.TransportCredentials {
	return &watchedTLS{TransportCredentials: c.TransportCredentials.Clone(), last: c.last}
}
