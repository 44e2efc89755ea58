package exporter

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// Exporter delivers windows to one collector. Enqueue, Stats, Err and Failed
// may be called from any goroutine; Flush, Check and Close too.
type Exporter struct {
	cfg      Config
	conn     *grpc.ClientConn
	client   pprofileotlp.GRPCClient
	md       metadata.MD
	tlsWatch *watchedTLS // nil when insecure

	runCtx  context.Context // ends when Close gives up on the queue
	stop    context.CancelFunc
	wake    chan struct{} // a window was queued; capacity 1
	closing chan struct{} // closed when Close starts
	done    chan struct{} // closed when the sender has returned
	failed  chan struct{} // closed when the exporter gave up

	mu      sync.Mutex
	q       queue
	idle    chan struct{} // closed and replaced when the queue empties
	st      Stats
	fatal   error
	closed  bool
	stopped bool // the sender has returned; nothing more will be sent

	closeOnce sync.Once
	closeErr  error

	// The sender's goroutine's own.
	log      logState
	cutShort bool // Close has cut a backoff wait short
}

// Option changes how New connects.
type Option func(*options)

type options struct{ dial []grpc.DialOption }

// WithDialOptions adds gRPC dial options (a proxy dialer, keepalive) after the
// exporter's own.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dial = append(o.dial, opts...) }
}

// New checks cfg, reads the CA file, and starts the exporter's goroutine. It
// does not connect: a collector that is down at start is not an error (windows
// queue until it is up); call Check to find endpoints that can never work.
func New(cfg Config, opts ...Option) (*Exporter, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	md, err := parseHeaders(cfg.Headers)
	if err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	e := &Exporter{
		cfg:     cfg,
		md:      md,
		wake:    make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
		failed:  make(chan struct{}),
		q:       newQueue(cfg.QueueWindows),
		idle:    make(chan struct{}),
	}
	var creds credentials.TransportCredentials
	if cfg.Insecure {
		creds = insecure.NewCredentials()
	} else {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			if tc.RootCAs, err = readCA(cfg.CAFile); err != nil {
				return nil, fmt.Errorf("otlp %s: %w", cfg.Endpoint, err)
			}
		}
		e.tlsWatch = &watchedTLS{TransportCredentials: credentials.NewTLS(tc), last: new(atomic.Pointer[error])}
		creds = e.tlsWatch
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent(cfg.UserAgent),
		grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)),
		// gRPC's own reconnect schedule (up to 2 minutes by default) would
		// keep failing our retries fast after the collector is back.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  cfg.Backoff.Initial,
				Multiplier: cfg.Backoff.Multiplier,
				Jitter:     cfg.Backoff.Jitter,
				MaxDelay:   cfg.Backoff.Max,
			},
			MinConnectTimeout: cfg.Timeout,
		}),
	}
	conn, err := grpc.NewClient(cfg.Endpoint, append(dial, o.dial...)...)
	if err != nil {
		return nil, fmt.Errorf("otlp %s: %s", cfg.Endpoint, oneLine(err.Error()))
	}
	e.conn = conn
	e.client = pprofileotlp.NewGRPCClient(conn)
	e.runCtx, e.stop = context.WithCancel(context.Background())
	e.log.every = cfg.LogEvery
	go e.run()
	return e, nil
}

func readCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA file: %s", oneLine(err.Error()))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

var sizer pprofile.ProtoMarshaler

// Enqueue queues a window and never blocks. The exporter owns p from here: the
// caller must not change it. When the queue is full the oldest waiting windows
// are dropped to make room. It returns false, counting the window as dropped,
// when the exporter is closed or has given up, when p alone is over the byte
// bound, or when room could only be made by dropping the window being sent.
func (e *Exporter) Enqueue(p pprofile.Profiles) (accepted bool) {
	size := int64(sizer.ProfilesSize(p))
	e.mu.Lock()
	e.st.Offered++
	if e.closed || e.fatal != nil || size > e.cfg.QueueBytes {
		e.st.Dropped++
		e.mu.Unlock()
		return false
	}
	if e.q.busy && (len(e.q.buf) < 2 || e.q.front().size+size > e.cfg.QueueBytes) {
		// It would not fit even with every waiting window gone.
		e.st.Dropped++
		e.mu.Unlock()
		return false
	}
	for e.q.full() || e.q.bytes+size > e.cfg.QueueBytes {
		e.q.dropOldestWaiting()
		e.st.Dropped++
	}
	e.q.push(window{p: p, size: size})
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
	return true
}

// Stats is a snapshot of the exporter's counts. At any moment
// Offered = Sent + Failed + Dropped + Queued.
type Stats struct {
	Offered   uint64 // windows given to Enqueue
	Sent      uint64 // windows the collector accepted, partial successes included
	SentBytes uint64 // their bytes (pprofile.ProtoMarshaler size, before gzip)
	Retries   uint64 // failed attempts that were retried
	Dropped   uint64 // windows never sent: pushed out by newer ones, refused by Enqueue, left at Close or when giving up
	Failed    uint64 // windows the collector refused with a non-retryable code

	RejectedProfiles int64  // profiles refused inside partial successes
	PartialMessage   string // the last partial success's message

	Queued      int   // windows waiting, including the one being sent
	QueuedBytes int64 // their bytes

	LastError     error     // the last failed export, one line; nil if none
	LastErrorTime time.Time // when it failed
	LastSuccess   time.Time // when the collector last accepted a window; zero if never
}

// Stats returns the counts so far.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.statsLocked()
}

// Err returns the permanent failure the exporter gave up on, or nil. It is
// never a collector that is merely down.
func (e *Exporter) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fatal
}

// Failed is closed when the exporter gives up (then Err is not nil), so the
// agent can select on it beside its signals.
func (e *Exporter) Failed() <-chan struct{} { return e.failed }

// Flush waits until every queued window is sent, refused or dropped, or ctx
// ends. It returns Err if the exporter gave up, and an error counting the
// windows still queued if ctx ended first.
func (e *Exporter) Flush(ctx context.Context) error {
	for {
		e.mu.Lock()
		n, idle, fatal, stopped := e.q.n, e.idle, e.fatal, e.stopped
		e.mu.Unlock()
		switch {
		case fatal != nil:
			return fatal
		case n == 0:
			return nil
		case stopped:
			return fmt.Errorf("otlp %s: %d windows unsent: exporter closed", e.cfg.Endpoint, n)
		}
		select {
		case <-idle:
		case <-e.done:
		case <-ctx.Done():
			e.mu.Lock()
			n = e.q.n
			e.mu.Unlock()
			return fmt.Errorf("otlp %s: %d windows unsent: %w", e.cfg.Endpoint, n, context.Cause(ctx))
		}
	}
}

// Close sends what is queued until ctx ends, then stops the attempt in progress,
// drops and counts what is left and closes the connection. Its error says how
// many windows were left unsent, or is Err if the exporter had given up. Enqueue
// refuses windows from the moment Close starts. Only the first call does the
// work; later calls return its result.
func (e *Exporter) Close(ctx context.Context) error {
	e.closeOnce.Do(func() { e.closeErr = e.close(ctx) })
	return e.closeErr
}

func (e *Exporter) close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	close(e.closing)
	_ = e.Flush(ctx) // what it leaves is counted below
	e.stop()
	<-e.done

	e.mu.Lock()
	n, bytes := e.q.n, e.q.bytes
	e.q.clear()
	e.st.Dropped += uint64(n)
	fatal, last := e.fatal, e.st.LastError
	e.mu.Unlock()
	_ = e.conn.Close()

	if fatal != nil {
		return fatal
	}
	if n == 0 {
		return nil
	}
	why := "closed"
	if c := context.Cause(ctx); c != nil {
		why = c.Error()
	}
	if last != nil {
		why += "; last error: " + last.Error()
	}
	err := fmt.Errorf("otlp %s: %d windows (%d bytes) left unsent at close (%s)", e.cfg.Endpoint, n, bytes, oneLine(why))
	e.logf("%v", err)
	return err
}

// Check sends one empty export to find, at start, an endpoint that cannot work
// as configured. It returns nil if the collector accepted it; an error for
// which IsPermanent is true if the TLS handshake failed for good (the exporter
// then gives up: Err and Failed) or the collector refused it with a
// non-retryable code (no profiles service, a bad token); otherwise a transient
// error, e.g. the collector is down: the agent logs it and runs, and windows
// queue until the collector is up. Check does not touch the queue or Stats.
func (e *Exporter) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, e.md), e.cfg.Timeout)
	defer cancel()
	_, err := e.client.Export(ctx, pprofileotlp.NewExportRequestFromProfiles(pprofile.NewProfiles()))
	if err == nil {
		return nil
	}
	f := e.classify(err)
	switch f.verdict {
	case fatal:
		e.giveUp(f.err)
		return f.err
	case refused:
		return &permanentError{f.err.Error()}
	}
	return f.err
}
