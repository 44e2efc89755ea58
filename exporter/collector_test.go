package exporter

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

// windowKey is the resource attribute that numbers a test's windows.
const windowKey = "cctop.window"

// call is one Export the test collector received, as the server saw it.
type call struct {
	window      int64 // -1 for an empty export (Check)
	md          metadata.MD
	compression string
	length      int // uncompressed payload bytes
	compressed  int // payload bytes on the wire
	ok          bool
}

// collector is a real OTLP/gRPC profiles server in the test process, serving
// the collector's own server-side type. respond decides each call's answer.
type collector struct {
	pprofileotlp.UnimplementedGRPCServer
	srv  *grpc.Server
	addr string

	mu      sync.Mutex
	calls   []call
	respond func(n int, window int64) (pprofileotlp.ExportResponse, error)
}

type rpcKey struct{}

// rpcStats gathers what gRPC's stats handler sees of one call: the encoding
// the server decoded it with and its sizes.
type rpcStats struct {
	compression        string
	length, compressed int
}

type statsHandler struct{}

func (statsHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, rpcKey{}, &rpcStats{})
}

func (statsHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	r, _ := ctx.Value(rpcKey{}).(*rpcStats)
	if r == nil {
		return
	}
	switch s := s.(type) {
	case *stats.InHeader:
		r.compression = s.Compression
	case *stats.InPayload:
		r.length, r.compressed = s.Length, s.CompressedLength
	}
}

func (statsHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (statsHandler) HandleConn(context.Context, stats.ConnStats)                       {}

// startCollector serves on lis until the test ends.
func startCollector(t testing.TB, lis net.Listener, opts ...grpc.ServerOption) *collector {
	t.Helper()
	c := &collector{addr: lis.Addr().String()}
	c.srv = grpc.NewServer(append([]grpc.ServerOption{grpc.StatsHandler(statsHandler{})}, opts...)...)
	pprofileotlp.RegisterGRPCServer(c.srv, c)
	go func() { _ = c.srv.Serve(lis) }()
	t.Cleanup(c.srv.Stop)
	return c
}

// listen listens on a loopback port of the kernel's choosing.
func listen(t testing.TB) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// downAddr is a loopback address where nothing listens (connections are
// refused) until the test listens on it again: the collector is down.
func downAddr(t testing.TB) string {
	lis := listen(t)
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// relisten brings a collector up at an address downAddr gave.
func relisten(t testing.TB, addr string) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s (taken meanwhile?): %v", addr, err)
	}
	return lis
}

func (c *collector) Export(ctx context.Context, req pprofileotlp.ExportRequest) (pprofileotlp.ExportResponse, error) {
	cl := call{window: windowOf(req.Profiles())}
	cl.md, _ = metadata.FromIncomingContext(ctx)
	if r, _ := ctx.Value(rpcKey{}).(*rpcStats); r != nil {
		cl.compression, cl.length, cl.compressed = r.compression, r.length, r.compressed
	}
	c.mu.Lock()
	n := len(c.calls)
	c.calls = append(c.calls, cl)
	respond := c.respond
	c.mu.Unlock()
	resp, err := pprofileotlp.NewExportResponse(), error(nil)
	if respond != nil {
		resp, err = respond(n, cl.window)
	}
	if err == nil {
		c.mu.Lock()
		c.calls[n].ok = true
		c.mu.Unlock()
	}
	return resp, err
}

func (c *collector) setRespond(f func(n int, window int64) (pprofileotlp.ExportResponse, error)) {
	c.mu.Lock()
	c.respond = f
	c.mu.Unlock()
}

// received returns every call so far.
func (c *collector) received() []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]call(nil), c.calls...)
}

// delivered returns the windows of the calls the server accepted, in order.
func (c *collector) delivered() []int64 {
	var ws []int64
	for _, cl := range c.received() {
		if cl.ok && cl.window >= 0 {
			ws = append(ws, cl.window)
		}
	}
	return ws
}

// attempts counts the calls that carried window w.
func (c *collector) attempts(w int64) int {
	n := 0
	for _, cl := range c.received() {
		if cl.window == w {
			n++
		}
	}
	return n
}

func windowOf(p pprofile.Profiles) int64 {
	if p.ResourceProfiles().Len() == 0 {
		return -1
	}
	v, ok := p.ResourceProfiles().At(0).Resource().Attributes().Get(windowKey)
	if !ok {
		return -2
	}
	return v.Int()
}

// testWindow is a small valid profile numbered n: one resource, one profile of
// CPU samples over a two-frame stack.
func testWindow(n int64) pprofile.Profiles { return sizedWindow(n, 2, 20) }

// sizedWindow has funcs functions, one stack per function (down to main) and
// samples samples: enough distinct strings and stacks to make a window of a
// realistic size.
func sizedWindow(n int64, funcs, samples int) pprofile.Profiles {
	p := pprofile.NewProfiles()
	d := p.Dictionary()
	st := d.StringTable()
	st.Append("", "cpu", "nanoseconds", "samples", "count", "main.main", "main.go")
	d.FunctionTable().AppendEmpty()
	d.LocationTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	addFunc := func(name string, line int64) int32 {
		st.Append(name)
		f := d.FunctionTable().AppendEmpty()
		f.SetNameStrindex(int32(st.Len() - 1))
		f.SetFilenameStrindex(6)
		loc := d.LocationTable().AppendEmpty()
		loc.SetAddress(uint64(0x400000 + 16*d.LocationTable().Len()))
		l := loc.Lines().AppendEmpty()
		l.SetFunctionIndex(int32(d.FunctionTable().Len() - 1))
		l.SetLine(line)
		return int32(d.LocationTable().Len() - 1)
	}
	mainLoc := addFunc("main.main", 10)
	for i := range funcs {
		loc := addFunc(fmt.Sprintf("github.com/cctop/cctop/workload.busy%05d", i), int64(100+i))
		s := d.StackTable().AppendEmpty()
		s.LocationIndices().Append(loc, mainLoc)
	}

	rp := p.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutInt(windowKey, n)
	rp.Resource().Attributes().PutStr("service.name", "cctop-test")
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName("cctop")
	pr := sp.Profiles().AppendEmpty()
	pr.SampleType().SetTypeStrindex(1)
	pr.SampleType().SetUnitStrindex(2)
	pr.PeriodType().SetTypeStrindex(1)
	pr.PeriodType().SetUnitStrindex(2)
	pr.SetPeriod(10_000_000)
	pr.SetDurationNano(uint64(10 * time.Second))
	for i := range samples {
		s := pr.Samples().AppendEmpty()
		s.SetStackIndex(int32(1 + i%funcs))
		s.Values().Append(int64(10_000_000 * (1 + i%7)))
	}
	return p
}

// testConfig is DefaultConfig to addr in plaintext with waits short enough
// for tests.
func testConfig(addr string) Config {
	cfg := DefaultConfig()
	cfg.Endpoint = addr
	cfg.Insecure = true
	cfg.Timeout = time.Minute
	cfg.Backoff.Initial = 20 * time.Millisecond
	cfg.Backoff.Max = 200 * time.Millisecond
	return cfg
}

// newExporter starts an exporter closed at the end of the test, dropping
// whatever the test left queued.
func newExporter(t testing.TB, cfg Config) *Exporter {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = e.Close(ctx)
	})
	return e
}

// patience bounds every wait for something that must happen: generous, for a
// loaded machine; reaching it is a failure, never a measurement.
const patience = 60 * time.Second

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func flush(t testing.TB, e *Exporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := e.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

// checkBooks asserts that every window offered is accounted for once.
func checkBooks(t testing.TB, s Stats) {
	t.Helper()
	if got := s.Sent + s.Failed + s.Dropped + uint64(s.Queued); got != s.Offered {
		t.Errorf("books: offered %d but sent %d + failed %d + dropped %d + queued %d = %d",
			s.Offered, s.Sent, s.Failed, s.Dropped, s.Queued, got)
	}
}

func oneLineErr(t testing.TB, err error) string {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") {
		t.Errorf("error is not one line: %q", msg)
	}
	return msg
}

// seq returns lo, lo+1, …, hi-1.
func seq(lo, hi int64) []int64 {
	var s []int64
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}
