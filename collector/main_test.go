package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// wait bounds every wait for the collector; generous for a loaded machine.
const wait = 2 * time.Minute

func TestMain(m *testing.M) {
	if err := enableProfiles(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// testProfiles is a small but complete batch: one profile of CPU samples
// with one stack of two frames and one sample of value 42.
func testProfiles() pprofile.Profiles {
	pd := pprofile.NewProfiles()
	dict := pd.Dictionary()
	for _, s := range []string{"", "cpu", "nanoseconds", "main", "work", "work.go"} {
		dict.StringTable().Append(s)
	}
	dict.FunctionTable().AppendEmpty()
	dict.LocationTable().AppendEmpty()
	dict.StackTable().AppendEmpty()
	dict.MappingTable().AppendEmpty()
	dict.AttributeTable().AppendEmpty()
	dict.LinkTable().AppendEmpty()
	for i, name := range []int32{4, 3} { // leaf first: work, main
		fn := dict.FunctionTable().AppendEmpty()
		fn.SetNameStrindex(name)
		fn.SetFilenameStrindex(5)
		loc := dict.LocationTable().AppendEmpty()
		loc.SetAddress(uint64(0x1000 + 0x10*i))
		line := loc.Lines().AppendEmpty()
		line.SetFunctionIndex(int32(dict.FunctionTable().Len() - 1))
		line.SetLine(int64(10 + i))
	}
	stack := dict.StackTable().AppendEmpty()
	stack.LocationIndices().FromRaw([]int32{1, 2})

	rp := pd.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr("service.name", "cctop-test")
	prof := rp.ScopeProfiles().AppendEmpty().Profiles().AppendEmpty()
	prof.SampleType().SetTypeStrindex(1)
	prof.SampleType().SetUnitStrindex(2)
	prof.SetTime(1_700_000_000_000_000_000)
	prof.SetDurationNano(1_000_000_000)
	s := prof.Samples().AppendEmpty()
	s.SetStackIndex(1)
	s.Values().Append(42)
	return pd
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// config is a collector configuration with the OTLP/gRPC receiver on addr
// and the cctopfile exporter; exporter and tls are YAML lines indented
// under their keys.
func config(addr string, exporter, tls []string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: %q\n", addr)
	if len(tls) > 0 {
		b.WriteString("        tls:\n")
		for _, l := range tls {
			fmt.Fprintf(&b, "          %s\n", l)
		}
	}
	b.WriteString("exporters:\n  cctopfile:\n")
	for _, l := range exporter {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	b.WriteString("service:\n  pipelines:\n    profiles:\n      receivers: [otlp]\n      exporters: [cctopfile]\n")
	return b.String()
}

// startInProcess runs a collector built from this binary's settings in the
// test process and returns the receiver's address; it is shut down when t
// ends.
func startInProcess(t *testing.T, exporter, tls []string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config(addr, exporter, tls)), 0o644); err != nil {
		t.Fatal(err)
	}
	set := settings()
	set.ConfigProviderSettings.ResolverSettings.URIs = []string{path}
	set.ConfigProviderSettings.ResolverSettings.DefaultScheme = "env"
	// The collector would replace grpc's global logger while this process's
	// clients use it: a data race that only an in-process collector has.
	set.SkipSettingGRPCLogger = true
	col, err := otelcol.NewCollector(set)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	t.Cleanup(func() {
		col.Shutdown()
		if err := <-done; err != nil {
			t.Errorf("collector: %v", err)
		}
	})
	waitListening(t, addr, done)
	return addr
}

// waitListening waits until addr accepts connections, failing if the
// collector's run ends first.
func waitListening(t *testing.T, addr string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case runErr := <-done:
			t.Fatalf("collector ended before listening on %s: %v", addr, runErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not listening on %s after %v: %v", addr, wait, err)
		}
	}
}

func dial(t *testing.T, addr string, creds credentials.TransportCredentials) pprofileotlp.GRPCClient {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pprofileotlp.NewGRPCClient(conn)
}

func export(client pprofileotlp.GRPCClient, pd pprofile.Profiles) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err := client.Export(ctx, pprofileotlp.NewExportRequestFromProfiles(pd))
	return err
}

// record is pd as the contrib fileexporter frames it in format.
func record(t *testing.T, format string, pd pprofile.Profiles) []byte {
	t.Helper()
	if format == "proto" {
		msg, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(pd)
		if err != nil {
			t.Fatal(err)
		}
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
	}
	msg, err := (&pprofile.JSONMarshaler{}).MarshalProfiles(pd)
	if err != nil {
		t.Fatal(err)
	}
	return append(msg, '\n')
}

// decodeOne decodes the file's only record with a decoder written from the
// format's definition, independent of the exporter's framing code.
func decodeOne(t *testing.T, format string, data []byte) pprofile.Profiles {
	t.Helper()
	var (
		pd  pprofile.Profiles
		err error
	)
	if format == "proto" {
		if len(data) < 4 || int(binary.BigEndian.Uint32(data)) != len(data)-4 {
			t.Fatalf("file is not one length-prefixed record: %d bytes, prefix %x", len(data), data[:min(4, len(data))])
		}
		pd, err = (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(data[4:])
	} else {
		if bytes.IndexByte(data, '\n') != len(data)-1 {
			t.Fatalf("file is not one JSON line: %q", data)
		}
		pd, err = (&pprofile.JSONUnmarshaler{}).UnmarshalProfiles(data[:len(data)-1])
	}
	if err != nil {
		t.Fatal(err)
	}
	return pd
}

func TestExportWritesTheBatch(t *testing.T) {
	for _, format := range []string{"json", "proto"} {
		t.Run(format, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			addr := startInProcess(t, []string{"path: " + strconv.Quote(out), "format: " + format}, nil)
			sent := testProfiles()
			if err := export(dial(t, addr, nil), sent); err != nil {
				t.Fatalf("export: %v", err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := record(t, format, sent); !bytes.Equal(data, want) {
				t.Fatalf("file holds\n%q\nwant\n%q", data, want)
			}
			got := decodeOne(t, format, data)
			if got.SampleCount() != 1 {
				t.Fatalf("decoded %d samples, want 1", got.SampleCount())
			}
			v := got.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0).Samples().At(0).Values().At(0)
			if v != 42 {
				t.Fatalf("decoded sample value %d, want 42", v)
			}
		})
	}
}

// rejected checks that err is the status the exporter's reject_* settings
// ask for, as the client sees it.
func rejected(t *testing.T, err error, code codes.Code, delay time.Duration) {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("export error %v: want code %v", err, code)
	}
	var infos []*errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			infos = append(infos, ri)
		}
	}
	switch {
	case delay == 0 && len(infos) != 0:
		t.Fatalf("status %v has RetryInfo %v, want none", st, infos)
	case delay > 0 && len(infos) != 1:
		t.Fatalf("status %v details %v: want one RetryInfo", st, st.Details())
	case delay > 0 && infos[0].GetRetryDelay().AsDuration() != delay:
		t.Fatalf("RetryInfo delay %v, want %v", infos[0].GetRetryDelay().AsDuration(), delay)
	}
}

func TestRejectFirst(t *testing.T) {
	cases := []struct {
		name  string
		code  string
		want  codes.Code
		delay time.Duration
	}{
		{"resource_exhausted with delay", "resource_exhausted", codes.ResourceExhausted, 1500 * time.Millisecond},
		{"unavailable without delay", "unavailable", codes.Unavailable, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			addr := startInProcess(t, []string{
				"path: " + strconv.Quote(out),
				"reject_first: 2",
				"reject_code: " + c.code,
				"retry_delay: " + c.delay.String(),
			}, nil)
			client := dial(t, addr, nil)
			sent := testProfiles()
			for i := range 2 {
				err := export(client, sent)
				rejected(t, err, c.want, c.delay)
				if data, _ := os.ReadFile(out); len(data) != 0 {
					t.Fatalf("after rejection %d the file holds %q, want nothing", i+1, data)
				}
			}
			if err := export(client, sent); err != nil {
				t.Fatalf("third export: %v", err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := record(t, "json", sent); !bytes.Equal(data, want) {
				t.Fatalf("file holds\n%q\nwant\n%q", data, want)
			}
		})
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cctop-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	out := filepath.Join(dir, "out")
	addr := startInProcess(t, []string{"path: " + strconv.Quote(out)},
		[]string{"cert_file: " + strconv.Quote(certFile), "key_file: " + strconv.Quote(keyFile)})

	sent := testProfiles()
	if err := export(dial(t, addr, credentials.NewTLS(&tls.Config{RootCAs: pool})), sent); err != nil {
		t.Fatalf("export over TLS: %v", err)
	}
	// A plaintext client must not get through a TLS receiver.
	if err := export(dial(t, addr, nil), sent); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext export to a TLS receiver: %v, want code Unavailable", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := record(t, "json", sent); !bytes.Equal(data, want) {
		t.Fatalf("file holds\n%q\nwant\n%q", data, want)
	}
}

// TestBinary builds the command and runs it as the main module's tests do,
// with no feature-gate flag and no telemetry section: main must enable the
// profiles gate itself, the run must bind nothing but the receiver, a
// second run must append to the first's file, and SIGTERM must end it
// cleanly.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the collector binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cctop-collector")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(config(addr, []string{"path: " + strconv.Quote(out), "format: proto"}, nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	sent := testProfiles()
	for run := 1; run <= 2; run++ {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "--config", cfg)
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		ended := false
		t.Cleanup(func() {
			if !ended {
				cmd.Process.Kill()
				<-done
			}
		})
		waitListening(t, addr, done)
		if err := export(dial(t, addr, nil), sent); err != nil {
			t.Fatalf("run %d: export: %v\n%s", run, err, stderr.Bytes())
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := <-done
		ended = true
		if err != nil {
			t.Fatalf("run %d: collector after SIGTERM: %v\n%s", run, err, stderr.Bytes())
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.Repeat(record(t, "proto", sent), run); !bytes.Equal(data, want) {
			t.Fatalf("after run %d the file holds %d bytes, want %d (%d records)", run, len(data), len(want), run)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		exporter []string
		want     string
	}{
		{nil, "path is required"},
		{[]string{"path: x", "format: xml"}, `format "xml"`},
		{[]string{"path: x", "reject_code: aborted"}, `reject_code "aborted"`},
		{[]string{"path: x", "reject_first: -1"}, "reject_first -1"},
		{[]string{"path: x", "retry_delay: -1s"}, "retry_delay -1s"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(config("127.0.0.1:0", c.exporter, nil)), 0o644); err != nil {
			t.Fatal(err)
		}
		set := settings()
		set.ConfigProviderSettings.ResolverSettings.URIs = []string{path}
		set.SkipSettingGRPCLogger = true
		col, err := otelcol.NewCollector(set)
		if err != nil {
			t.Fatal(err)
		}
		err = col.DryRun(context.Background())
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("exporter config %q: error %v, want one containing %q", c.exporter, err, c.want)
		}
	}
}
