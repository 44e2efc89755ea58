package exporter

import (
	"testing"
)

// BenchmarkEnqueueSend is one 200 KB window through Enqueue, gzip and gRPC to
// an in-process collector and back, as the agent does every 10 s.
func BenchmarkEnqueueSend(b *testing.B) {
	c := startCollector(b, listen(b))
	e := newExporter(b, testConfig(c.addr))
	w := sizedWindow(0, 1750, 7000)
	size := sizer.ProfilesSize(w)
	if size < 190_000 || size > 210_000 {
		b.Fatalf("window is %d bytes, want about 200 KB", size)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if !e.Enqueue(w) {
			b.Fatal("not accepted")
		}
		flush(b, e)
	}
	b.StopTimer()
	if s := e.Stats(); s.Sent != s.Offered || s.Retries != 0 {
		b.Fatalf("stats %+v", s)
	}
}
