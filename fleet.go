package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/engine"
	"github.com/cctop/cctop/exporter"
	"github.com/cctop/cctop/otlp"
)

// otlpFlags are the flags of the commands that push profiles to an
// OpenTelemetry collector: agent, and record and top for one-off pushes.
type otlpFlags struct {
	endpoint string
	insecure bool
	ca       string
	headers  headerFlag
	service  string
}

func addOTLPFlags(fs *flag.FlagSet) *otlpFlags {
	f := &otlpFlags{}
	fs.StringVar(&f.endpoint, "otlp", "", "push profiles to the OpenTelemetry collector at `HOST:PORT` (OTLP/gRPC, TLS unless --otlp-insecure)")
	fs.BoolVar(&f.insecure, "otlp-insecure", false, "talk to the collector without TLS (loopback, trusted networks)")
	fs.StringVar(&f.ca, "otlp-ca", "", "trust the collector's certificate if signed by the CA in `FILE` (PEM)")
	fs.Var(&f.headers, "otlp-header", "send `K=V` with every push, e.g. an auth token (repeatable)")
	fs.StringVar(&f.service, "service-name", "", "the service.name of the profiles (default: the executable's name)")
	return f
}

// headerFlag is a repeatable K=V flag; the exporter checks its entries.
type headerFlag []string

func (h *headerFlag) String() string { return strings.Join(*h, ",") }

func (h *headerFlag) Set(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("bad header (use K=V)")
	}
	*h = append(*h, s)
	return nil
}

// fleet pushes windows to a collector; a nil fleet pushes nothing.
type fleet struct {
	exp     *exporter.Exporter
	host    string
	service string
	addr    string
	// checking: the first check of the collector is going on; checkErr
	// is what it found wrong, if anything (top shows both).
	checking atomic.Bool
	checkErr atomic.Pointer[error]
	logf     func(string, ...any) // the command's log lines
}

// open starts the exporter of --otlp (nil without it) and checks the
// collector before it returns: see start.
func (f *otlpFlags) open(logf func(string, ...any)) (*fleet, error) {
	return f.start(logf, true)
}

// start starts the exporter of --otlp; nil without it. With wait, it
// checks the collector first (at most 5 s), and a wrong CA or a server
// that is no collector is its error; without, the check goes on behind
// (top's UI must not wait for the network) and brief tells its outcome.
func (f *otlpFlags) start(logf func(string, ...any), wait bool) (*fleet, error) {
	if f.endpoint == "" {
		if f.insecure || f.ca != "" || len(f.headers) > 0 {
			return nil, usageError("--otlp-insecure, --otlp-ca and --otlp-header need --otlp HOST:PORT")
		}
		return nil, nil
	}
	if f.insecure && f.ca != "" {
		return nil, usageError("--otlp-insecure and --otlp-ca are exclusive")
	}
	cfg := exporter.DefaultConfig()
	cfg.Endpoint = f.endpoint
	cfg.Insecure = f.insecure
	cfg.CAFile = f.ca
	cfg.Headers = f.headers
	// The check below is reported by its error alone: the exporter's own
	// line about giving up would say it twice.
	var checked atomic.Bool
	cfg.Logf = func(format string, args ...any) {
		if checked.Load() {
			logf(format, args...)
		}
	}
	exp, err := exporter.New(cfg)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	fl := &fleet{exp: exp, host: host, service: f.service, addr: f.endpoint, logf: logf}
	fl.checking.Store(true)
	check := func() error {
		// A wrong CA or a server that is no collector ends the run; a
		// collector that is away is waited for, the windows queued.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := exp.Check(ctx)
		if err != nil {
			fl.checkErr.Store(&err)
		}
		fl.checking.Store(false)
		return err
	}
	if !wait {
		checked.Store(true)
		go check()
		return fl, nil
	}
	err = check()
	if exporter.IsPermanent(err) {
		exp.Close(context.Background())
		return nil, err
	}
	checked.Store(true)
	if err != nil {
		logf("%v; profiles are queued until it answers", err)
	}
	return fl, nil
}

// brief is the fleet's state for top's header, and whether it is failing.
func (fl *fleet) brief() (string, bool) {
	if fl == nil {
		return "", false
	}
	s := "otlp " + fl.addr + ": push at quit"
	switch st := fl.exp.Stats(); {
	case fl.checking.Load():
		return s + ", checking the collector", false
	case fl.exp.Err() != nil:
		return s + ", " + fl.exp.Err().Error(), true
	case fl.checkErr.Load() != nil:
		return s + ", " + (*fl.checkErr.Load()).Error(), true
	case st.Sent > 0:
		return fmt.Sprintf("otlp %s: sent %d", fl.addr, st.Sent), false
	}
	return s + ", the collector answers", false
}

// err is why the exporter gave up (a TLS failure while running), if it did.
func (fl *fleet) err() error {
	if fl == nil {
		return nil
	}
	return fl.exp.Err()
}

// push converts a window and queues it; it never waits for the network.
func (fl *fleet) push(win *engine.Window) {
	if fl == nil || len(win.Processes) == 0 {
		return
	}
	ps := pprofile.NewProfiles()
	procs := make([]otlp.Process, 0, len(win.Processes))
	for _, p := range win.Processes {
		procs = append(procs, otlp.Process{Resource: fl.resource(p.Process), Tree: p.Tree, Meta: p.Meta})
	}
	if err := otlp.Append(ps, procs...); err != nil {
		fl.logf("window not sent: %v", err)
		return
	}
	fl.exp.Enqueue(ps)
}

func (fl *fleet) resource(p engine.Process) otlp.Resource {
	service := fl.service
	if service == "" {
		service = p.Name
		if p.Exe != "" {
			service = filepath.Base(p.Exe)
		}
	}
	return otlp.Resource{
		HostName: fl.host, PID: int64(p.PID), ExecutableName: p.Name, ExecutablePath: p.Exe,
		ContainerID: p.ContainerID, ServiceName: service,
	}
}

// where is the destination for the agent's first line.
func (fl *fleet) where() string {
	if fl == nil {
		return ""
	}
	return ", to " + fl.addr
}

// status is the delivery counts for status lines.
func (fl *fleet) status() string {
	if fl == nil {
		return "not sending (no --otlp)"
	}
	st := fl.exp.Stats()
	s := fmt.Sprintf("otlp: sent %d, retried %d, dropped %d, failed %d, queued %d", st.Sent, st.Retries, st.Dropped, st.Failed, st.Queued)
	if st.LastError != nil && st.LastErrorTime.After(st.LastSuccess) {
		s += " (failing: " + st.LastError.Error() + ")"
	}
	return s
}

// close sends what is queued until ctx ends.
func (fl *fleet) close(ctx context.Context) error {
	if fl == nil {
		return nil
	}
	return fl.exp.Close(ctx)
}

// undelivered is an error when a one-off push did not arrive: record and
// top exit non-zero for it (their profile file, if any, is written).
func (fl *fleet) undelivered() error {
	if fl == nil {
		return nil
	}
	if st := fl.exp.Stats(); st.Sent == 0 || st.Failed+st.Dropped > 0 {
		msg := "the profile was not delivered to " + fl.addr
		if st.LastError != nil {
			msg += ": " + st.LastError.Error()
		}
		return errors.New(msg)
	}
	return nil
}
