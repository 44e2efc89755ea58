package testutil

// The OpenTelemetry Collector of cctop's agent tests: the binary built from
// the nested module in collector/ (an OTLP/gRPC receiver and the cctopfile
// exporter), run as a separate process. This file imports no OpenTelemetry
// module on purpose: the main module only runs the binary and reads the
// records it wrote, so its go.mod does not grow the collector's graph.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// collectorWait bounds every wait on the collector: its start, its stop and
// its build's download. It is generous because a loaded 2-core machine can
// take seconds to start a 50 MB binary.
const collectorWait = 2 * time.Minute

var collectorBuild struct {
	once sync.Once
	bin  string
	skip string // why tests that need the collector are skipped
	err  error
}

// BuildCollector builds the collector in <repo>/collector once per test
// process and returns the binary's path. It skips t when the collector's
// modules cannot be downloaded (no network and a cold module cache), and
// fails t when the collector does not compile.
func BuildCollector(t testing.TB) string {
	t.Helper()
	collectorBuild.once.Do(buildCollector)
	if collectorBuild.skip != "" {
		t.Skip(collectorBuild.skip)
	}
	if collectorBuild.err != nil {
		t.Fatal(collectorBuild.err)
	}
	return collectorBuild.bin
}

func buildCollector() {
	src, err := collectorSource()
	if err != nil {
		collectorBuild.err = err
		return
	}
	// Downloading first tells a missing network (skip) from a broken
	// collector (fail): every error of `go mod download` is a download's.
	if out, err := exec.Command("go", "-C", src, "mod", "download").CombinedOutput(); err != nil {
		collectorBuild.skip = fmt.Sprintf("the collector's modules cannot be downloaded (go -C %s mod download: %v):\n%s", src, err, out)
		return
	}
	sweepCollectorBuilds()
	// One directory per test process, named for it, so a later process can
	// remove it once this one is gone (no TestMain is needed to clean up).
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("cctop-collector-%d", os.Getpid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		collectorBuild.err = err
		return
	}
	bin := filepath.Join(dir, "cctop-collector")
	if out, err := exec.Command("go", "build", "-C", src, "-o", bin, ".").CombinedOutput(); err != nil {
		collectorBuild.err = fmt.Errorf("go build -C %s: %v\n%s", src, err, out)
		return
	}
	collectorBuild.bin = bin
}

// collectorSource finds <repo>/collector from this file's location, or,
// when the build trimmed paths, by walking up from the working directory.
func collectorSource() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Join(filepath.Dir(file), "..", "..", "collector")
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Clean(dir), nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "collector", "go.mod")); err == nil {
			return filepath.Join(dir, "collector"), nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no collector/go.mod above %s", wd)
		}
	}
}

// sweepCollectorBuilds removes the build directories of test processes
// that have exited.
func sweepCollectorBuilds() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "cctop-collector-*"))
	for _, dir := range dirs {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "cctop-collector-"))
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(dir)
		}
	}
}

// CollectorOptions configure a collector started by StartCollector.
type CollectorOptions struct {
	// Format of the output file: "json" (the default; one JSON-encoded
	// ExportProfilesServiceRequest a line) or "proto" (each request's
	// protobuf bytes after their length as 4 bytes, big-endian).
	Format string
	// RejectFirst makes the first RejectFirst export calls of each run fail
	// (the count starts again on Restart); calls whose request has no sample
	// never reach the exporter and do not count.
	RejectFirst int
	// RejectCode is the gRPC code of a rejection: "resource_exhausted" (the
	// default) or "unavailable".
	RejectCode string
	// RetryDelay, when positive, is sent with each rejection as a
	// google.rpc.RetryInfo detail.
	RetryDelay time.Duration
	// TLSCert and TLSKey, both set, are the PEM files of the receiver's TLS.
	TLSCert, TLSKey string
	// Port is the receiver's port on 127.0.0.1; 0 picks a free one.
	Port int
}

// Collector is a running collector process. Its methods are for the test
// goroutine that started it.
type Collector struct {
	// Addr is the receiver's address, 127.0.0.1:port; it stays the same
	// across Restart.
	Addr string
	// Out is the file the exporter appends records to.
	Out string
	// Log is the collector's stdout and stderr, appended across runs.
	Log string

	t      testing.TB
	bin    string
	dir    string
	opts   CollectorOptions
	config string
	run    *collectorRun // nil when not running
}

// collectorRun is one process of a Collector.
type collectorRun struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has been waited for
	err  error         // cmd.Wait's error, once done is closed
}

// StartCollector builds the collector if needed, starts it on 127.0.0.1
// with a configuration written into t.TempDir(), and returns once its
// receiver accepts connections. The process is killed when t ends.
func StartCollector(t testing.TB, o CollectorOptions) *Collector {
	t.Helper()
	bin := BuildCollector(t)
	if o.Format == "" {
		o.Format = "json"
	}
	if o.RejectCode == "" {
		o.RejectCode = "resource_exhausted"
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		t.Fatalf("StartCollector: TLSCert %q and TLSKey %q must be set together", o.TLSCert, o.TLSKey)
	}
	dir := t.TempDir()
	c := &Collector{
		Out:    filepath.Join(dir, "out."+o.Format),
		Log:    filepath.Join(dir, "collector.log"),
		t:      t,
		bin:    bin,
		dir:    dir,
		opts:   o,
		config: filepath.Join(dir, "config.yaml"),
	}
	t.Cleanup(func() {
		if c.run != nil {
			c.run.cmd.Process.Kill()
			<-c.run.done
			c.run = nil
		}
		if t.Failed() {
			t.Logf("collector log %s:\n%s", c.Log, c.tail())
		}
	})
	// A picked port can be taken by another process before the collector
	// binds it; then pick again.
	for attempt := 1; ; attempt++ {
		port := o.Port
		if port == 0 {
			port = freeCollectorPort(t)
		}
		err := c.start(port)
		if err == nil {
			return c
		}
		if o.Port != 0 || attempt == 3 {
			t.Fatalf("StartCollector: %v\ncollector log:\n%s", err, c.tail())
		}
	}
}

func freeCollectorPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// configYAML is the collector's configuration for c's options and port.
func (c *Collector) configYAML(port int) string {
	var b strings.Builder
	q := strconv.Quote // a Go-quoted path is a valid YAML double-quoted scalar
	fmt.Fprintf(&b, "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: %s\n", q(net.JoinHostPort("127.0.0.1", strconv.Itoa(port))))
	if c.opts.TLSCert != "" {
		fmt.Fprintf(&b, "        tls:\n          cert_file: %s\n          key_file: %s\n", q(c.opts.TLSCert), q(c.opts.TLSKey))
	}
	fmt.Fprintf(&b, "exporters:\n  cctopfile:\n    path: %s\n    format: %s\n", q(c.Out), q(c.opts.Format))
	fmt.Fprintf(&b, "    reject_first: %d\n    reject_code: %s\n    retry_delay: %s\n", c.opts.RejectFirst, q(c.opts.RejectCode), q(c.opts.RetryDelay.String()))
	// Metrics off: the collector's default serves them on localhost:8888,
	// which concurrent tests' collectors would fight over.
	b.WriteString("service:\n  telemetry:\n    metrics:\n      level: none\n")
	b.WriteString("  pipelines:\n    profiles:\n      receivers: [otlp]\n      exporters: [cctopfile]\n")
	return b.String()
}

// start runs the collector on port and waits until the port accepts
// connections; on an error the process is gone.
func (c *Collector) start(port int) error {
	if err := os.WriteFile(c.config, []byte(c.configYAML(port)), 0o644); err != nil {
		return err
	}
	log, err := os.OpenFile(c.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(c.bin, "--config", c.config)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	run := &collectorRun{cmd: cmd, done: make(chan struct{})}
	go func() {
		run.err = cmd.Wait()
		close(run.done)
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(collectorWait)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case <-run.done:
			return fmt.Errorf("collector exited before listening on %s: %v", addr, run.err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-run.done
			return fmt.Errorf("collector not listening on %s after %v: %v", addr, collectorWait, err)
		}
	}
	c.Addr, c.run = addr, run
	return nil
}

// Stop ends the collector with SIGTERM, as a service manager would, and
// waits for it; the test fails if it does not exit cleanly. It does nothing
// if the collector is not running.
func (c *Collector) Stop() {
	c.t.Helper()
	if c.run == nil {
		return
	}
	run := c.run
	c.run = nil
	if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatalf("collector: SIGTERM: %v", err)
	}
	select {
	case <-run.done:
	case <-time.After(collectorWait):
		run.cmd.Process.Kill()
		<-run.done
		c.t.Fatalf("collector did not exit within %v of SIGTERM\n%s", collectorWait, c.tail())
	}
	if run.err != nil {
		c.t.Errorf("collector after SIGTERM: %v\n%s", run.err, c.tail())
	}
}

// Kill ends the collector with SIGKILL, as a crash would, and waits for
// it. It does nothing if the collector is not running.
func (c *Collector) Kill() {
	c.t.Helper()
	if c.run == nil {
		return
	}
	c.run.cmd.Process.Kill()
	<-c.run.done
	c.run = nil
}

// Restart stops the collector if it runs (SIGTERM) and starts it again on
// the same address, appending to the same output file. Its reject_first
// count starts again.
func (c *Collector) Restart() {
	c.t.Helper()
	c.Stop()
	_, portStr, _ := net.SplitHostPort(c.Addr)
	port, _ := strconv.Atoi(portStr)
	if err := c.start(port); err != nil {
		c.t.Fatalf("collector restart: %v\n%s", err, c.tail())
	}
}

// Lines returns the records of a "json" collector: its output file's lines
// without their newlines.
func (c *Collector) Lines() [][]byte {
	c.t.Helper()
	if c.opts.Format != "json" {
		c.t.Fatalf("Lines of a %q collector; use Records", c.opts.Format)
	}
	return c.Records()
}

// Records returns the records in the output file, each one exporter call's
// request: a JSON line without its newline, or the protobuf bytes after
// their length prefix. A partial record at the end, a write still under
// way, is left out while the collector runs, and fails the test once it
// has stopped.
func (c *Collector) Records() [][]byte {
	c.t.Helper()
	data, err := os.ReadFile(c.Out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	split := splitJSONLines
	if c.opts.Format == "proto" {
		split = splitFramed
	}
	recs, rest := split(data)
	if rest != 0 && c.run == nil {
		c.t.Fatalf("%s ends in a partial record of %d bytes", c.Out, rest)
	}
	return recs
}

// splitJSONLines splits data into its newline-terminated lines and returns
// how many bytes follow the last newline.
func splitJSONLines(data []byte) (lines [][]byte, rest int) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return lines, len(data)
		}
		lines = append(lines, data[:i])
		data = data[i+1:]
	}
}

// splitFramed splits data into its records of a 4-byte big-endian length
// and that many bytes, and returns how many bytes follow the last whole
// record.
func splitFramed(data []byte) (recs [][]byte, rest int) {
	for len(data) >= 4 {
		n := uint64(binary.BigEndian.Uint32(data))
		if uint64(len(data)-4) < n {
			break
		}
		end := 4 + int(n)
		recs = append(recs, data[4:end])
		data = data[end:]
	}
	return recs, len(data)
}

// tail is the end of the collector's log, for failure messages.
func (c *Collector) tail() string {
	data, err := os.ReadFile(c.Log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	const keep = 8 << 10
	if len(data) > keep {
		data = append([]byte("..."), data[len(data)-keep:]...)
	}
	return string(data)
}
