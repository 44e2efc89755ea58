package testutil

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// These tests talk OTLP with hand-encoded protobuf, so that testutil stays
// free of OpenTelemetry's modules, as the helper itself is.

const exportProfiles = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

// rawCodec passes encoded messages through gRPC untouched. It is named
// "proto" because the server picks its codec by that name.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func pbTag(num, wire int) []byte { return binary.AppendUvarint(nil, uint64(num<<3|wire)) }

func pbBytes(num int, payload []byte) []byte {
	b := append(pbTag(num, 2), binary.AppendUvarint(nil, uint64(len(payload)))...)
	return append(b, payload...)
}

// profilesRequest is an ExportProfilesServiceRequest of one sample of value
// v; the field numbers are those of opentelemetry/proto/profiles/
// v1development (pdata v1.71.0).
func profilesRequest(v uint64) []byte {
	sample := append(pbTag(4, 0), binary.AppendUvarint(nil, v)...) // Sample.values
	profile := pbBytes(2, sample)                                  // Profile.samples
	scope := pbBytes(2, profile)                                   // ScopeProfiles.profiles
	resource := pbBytes(2, scope)                                  // ResourceProfiles.scope_profiles
	return pbBytes(1, resource)                                    // request.resource_profiles
}

// sampleValues reads back the sample values of a request that the
// exporter wrote in protobuf, following the same fields.
func sampleValues(t *testing.T, req []byte) []uint64 {
	t.Helper()
	var vals []uint64
	for _, rp := range pbFields(t, req, 1) {
		for _, sp := range pbFields(t, rp, 2) {
			for _, p := range pbFields(t, sp, 2) {
				for _, s := range pbFields(t, p, 2) {
					for _, packed := range pbFields(t, s, 4) {
						for len(packed) > 0 {
							v, n := binary.Uvarint(packed)
							if n <= 0 {
								t.Fatalf("bad varint in %x", packed)
							}
							vals, packed = append(vals, v), packed[n:]
						}
					}
				}
			}
		}
	}
	return vals
}

// pbFields returns the payloads of msg's length-delimited fields num.
func pbFields(t *testing.T, msg []byte, num int) [][]byte {
	t.Helper()
	var out [][]byte
	for len(msg) > 0 {
		key, n := binary.Uvarint(msg)
		if n <= 0 {
			t.Fatalf("bad tag in %x", msg)
		}
		msg = msg[n:]
		switch key & 7 {
		case 0:
			_, n = binary.Uvarint(msg)
		case 1:
			n = 8
		case 5:
			n = 4
		case 2:
			l, m := binary.Uvarint(msg)
			if m <= 0 || uint64(len(msg)-m) < l {
				t.Fatalf("bad length in %x", msg)
			}
			if int(key>>3) == num {
				out = append(out, msg[m:m+int(l)])
			}
			n = m + int(l)
		default:
			t.Fatalf("wire type %d in %x", key&7, msg)
		}
		if n <= 0 || n > len(msg) {
			t.Fatalf("truncated field in %x", msg)
		}
		msg = msg[n:]
	}
	return out
}

func push(t *testing.T, addr string, creds credentials.TransportCredentials, req []byte) error {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), collectorWait)
	defer cancel()
	var resp []byte
	return conn.Invoke(ctx, exportProfiles, &req, &resp, grpc.ForceCodec(rawCodec{}))
}

// wantRejection fails t unless err carries code and, when delay > 0, a
// RetryInfo of that delay (none otherwise).
func wantRejection(t *testing.T, err error, code codes.Code, delay time.Duration) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != code {
		t.Fatalf("push: %v, want code %v", err, code)
	}
	var got []time.Duration
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			got = append(got, ri.GetRetryDelay().AsDuration())
		}
	}
	want := []time.Duration{delay}
	if delay == 0 {
		want = nil
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("RetryInfo delays %v, want %v (status %v)", got, want, st)
	}
}

func TestCollectorRejectsRestartsAndAppends(t *testing.T) {
	c := StartCollector(t, CollectorOptions{RejectFirst: 1, RetryDelay: 1500 * time.Millisecond})
	wantRejection(t, push(t, c.Addr, nil, profilesRequest(41)), codes.ResourceExhausted, 1500*time.Millisecond)
	if got := c.Lines(); len(got) != 0 {
		t.Fatalf("after a rejection the file holds %q", got)
	}
	if err := push(t, c.Addr, nil, profilesRequest(42)); err != nil {
		t.Fatalf("second push: %v", err)
	}
	if got := c.Lines(); len(got) != 1 {
		t.Fatalf("after one accepted push the file holds %d lines: %q", len(got), got)
	}

	addr := c.Addr
	c.Restart()
	if c.Addr != addr {
		t.Fatalf("restarted on %s, was %s", c.Addr, addr)
	}
	// The rejection count starts again with the new process.
	wantRejection(t, push(t, c.Addr, nil, profilesRequest(43)), codes.ResourceExhausted, 1500*time.Millisecond)
	if err := push(t, c.Addr, nil, profilesRequest(44)); err != nil {
		t.Fatalf("push after restart: %v", err)
	}
	c.Stop()

	lines := c.Lines()
	if len(lines) != 2 {
		t.Fatalf("file holds %d lines, want 2 (42 before the restart, 44 after): %q", len(lines), lines)
	}
	for i, v := range []string{"42", "44"} {
		if !json.Valid(lines[i]) {
			t.Fatalf("line %d is not JSON: %q", i, lines[i])
		}
		// OTLP JSON writes int64 values as strings.
		if want := `"values":["` + v + `"]`; !bytes.Contains(lines[i], []byte(want)) {
			t.Fatalf("line %d lacks %s: %q", i, want, lines[i])
		}
	}
}

func TestCollectorTLSProtoKill(t *testing.T) {
	dir := t.TempDir()
	cert, key, pool := writeTestCert(t, dir)
	port := freeCollectorPort(t)
	c := StartCollector(t, CollectorOptions{
		Format: "proto", RejectFirst: 1, RejectCode: "unavailable",
		TLSCert: cert, TLSKey: key, Port: port,
	})
	if c.Addr != net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) {
		t.Fatalf("collector on %s, asked for port %d", c.Addr, port)
	}
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool})
	wantRejection(t, push(t, c.Addr, creds, profilesRequest(6)), codes.Unavailable, 0)
	if err := push(t, c.Addr, creds, profilesRequest(7)); err != nil {
		t.Fatalf("push over TLS: %v", err)
	}
	if err := push(t, c.Addr, nil, profilesRequest(8)); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext push to a TLS receiver: %v, want code Unavailable", err)
	}
	c.Kill()
	recs := c.Records()
	if len(recs) != 1 {
		t.Fatalf("file holds %d records, want 1", len(recs))
	}
	if got := sampleValues(t, recs[0]); fmt.Sprint(got) != "[7]" {
		t.Fatalf("record's sample values %v, want [7]", got)
	}
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir.
func writeTestCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	c := SelfSignedCert(t, dir, "cctop-test", net.IPv4(127, 0, 0, 1))
	parsed, err := x509.ParseCertificate(c.DER)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return c.CertFile, c.KeyFile, pool
}

func TestSplitRecords(t *testing.T) {
	lines, rest := splitJSONLines([]byte("{\"a\":1}\n{}\n{\"b\""))
	if fmt.Sprintf("%q %d", lines, rest) != `["{\"a\":1}" "{}"] 4` {
		t.Errorf("splitJSONLines: %q, rest %d", lines, rest)
	}
	if lines, rest := splitJSONLines(nil); lines != nil || rest != 0 {
		t.Errorf("splitJSONLines(nil): %q, rest %d", lines, rest)
	}
	framed := []byte{0, 0, 0, 2, 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 5, 'x'}
	recs, rest := splitFramed(framed)
	if fmt.Sprintf("%q %d", recs, rest) != `["ab" ""] 5` {
		t.Errorf("splitFramed: %q, rest %d", recs, rest)
	}
	if recs, rest := splitFramed([]byte{0xff, 0xff, 0xff, 0xff, 1}); recs != nil || rest != 5 {
		t.Errorf("splitFramed of a 4 GiB claim: %q, rest %d", recs, rest)
	}
}

// FuzzSplitFramed checks that the records and the rest account for every
// byte of any input, in order, and that the rest is not a whole record.
func FuzzSplitFramed(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 'x', 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, rest := splitFramed(data)
		var again []byte
		for _, r := range recs {
			again = binary.BigEndian.AppendUint32(again, uint32(len(r)))
			again = append(again, r...)
		}
		if !bytes.Equal(again, data[:len(data)-rest]) {
			t.Fatalf("records %q do not re-frame to the input's head", recs)
		}
		tail := data[len(data)-rest:]
		if len(tail) >= 4 && uint64(binary.BigEndian.Uint32(tail)) <= uint64(len(tail)-4) {
			t.Fatalf("rest %x holds a whole record", tail)
		}
	})
}
