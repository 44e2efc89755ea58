//go:build linux

package sampler

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cctop/cctop/symbol"
)

// buildCalls compiles testdata/calls.c at -O1: gcc then gives leaf no frame
// of its own, the case where the caller must come from the stack word.
func buildCalls(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(t.TempDir(), "calls")
	if out, err := exec.Command("gcc", "-O1", "-fno-omit-frame-pointer", "-o", bin, "../testdata/calls.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func skipIfNoUprobes(t *testing.T, bin string) {
	t.Helper()
	off, err := symbol.FuncOffset(bin, "leaf")
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenUprobeCounter(bin, off, 0)
	if err != nil {
		t.Skipf("uprobes not permitted here: %v", err)
	}
	c.Close()
}

func uprobeSpec(t *testing.T, bin, fn string) EventSpec {
	t.Helper()
	off, err := symbol.FuncOffset(bin, fn)
	if err != nil {
		t.Fatal(err)
	}
	return EventSpec{Name: "uprobe:" + fn, UprobePath: bin, UprobeOffset: off}
}

// TestUprobeMembers: uprobes counted in the clock's group arrive with every
// sample, per thread, and add up to the program's true call counts.
func TestUprobeMembers(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildCalls(t)
	skipIfNoUprobes(t, bin)
	s, err := Open(Config{
		Argv:     []string{bin, "100", "2000", "300"},
		UserOnly: true,
		Members:  []EventSpec{uprobeSpec(t, bin, "leaf"), uprobeSpec(t, bin, "site_c")},
		Stdout:   new(nopWriter),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Events are per (thread, CPU): each CPU's copy counts while the
	// thread runs there, so values rise per CPU and add up across CPUs.
	last := map[uint32]*[3]uint64{}
	samples := 0
	s.Run(context.Background(), func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind != KindSample {
				continue
			}
			samples++
			if len(r.Values) != 3 {
				t.Fatalf("group read has %d values, want 3", len(r.Values))
			}
			l := last[r.CPU]
			if l == nil {
				l = new([3]uint64)
				last[r.CPU] = l
			}
			for _, v := range r.Values {
				ref, ok := s.Event(v.ID)
				if !ok || ref.Group != 0 {
					t.Fatalf("value id %d unknown", v.ID)
				}
				if v.Value < l[ref.Member] {
					t.Fatalf("member %d on CPU %d went backwards: %d < %d", ref.Member, r.CPU, v.Value, l[ref.Member])
				}
				l[ref.Member] = v.Value
			}
		}
	})
	if samples < 50 {
		t.Fatalf("%d samples", samples)
	}
	// 400,000 leaf calls (from both sites) and 100 site_c calls in all;
	// the last samples on each CPU saw nearly all of them (the tail after
	// each is about a millisecond of work).
	var leaf, siteC uint64
	for _, l := range last {
		leaf += l[1]
		siteC += l[2]
	}
	if leaf > 400000 || leaf < 390000 {
		t.Errorf("leaf count at the last samples: %d, want just under 400000", leaf)
	}
	if siteC > 100 || siteC < 97 {
		t.Errorf("site_c count at the last samples: %d, want just under 100", siteC)
	}
}

// TestUprobeExact: uprobe leaders with period 1 record every call, and the
// callchain names the caller even though the probe sits before the
// callee's frame exists.
func TestUprobeExact(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildCalls(t)
	skipIfNoUprobes(t, bin)
	leaf := uprobeSpec(t, bin, "leaf")
	siteC := uprobeSpec(t, bin, "site_c")
	siteD := uprobeSpec(t, bin, "site_d")
	s, err := Open(Config{
		Argv:     []string{bin, "20", "500", "50"},
		UserOnly: true,
		Leader:   leaf,
		Period:   1,
		Extra:    []Group{{Leader: siteC, Period: 1}, {Leader: siteD, Period: 1}},
		// 8 MiB a CPU holds all 20,040 records, even on a CPU that
		// got them all: on a loaded machine the reader may not run
		// while the target makes them, and the test is of the
		// records, not of the reader's pace.
		RingPages: 2048,
		Stdout:    new(nopWriter),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := symbol.NewResolver()
	if err := res.LoadProc(s.PID()); err != nil {
		t.Fatal(err)
	}
	edges := map[[2]string]int{}
	s.Run(context.Background(), func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind == KindMmap {
				res.AddMapping(int(r.PID), symbol.Mapping{Start: r.Addr, Limit: r.Addr + r.Len, Offset: r.PgOff, Path: r.Filename})
			}
			if r.Kind != KindSample {
				continue
			}
			_, user := SplitChain(r.Chain)
			if len(user) < 2 {
				t.Fatalf("user chain %x too short", user)
			}
			callee := res.Lookup(int(r.PID), user[0], nil)[0].Func
			caller := res.Lookup(int(r.PID), user[1]-1, nil)[0].Func
			edges[[2]string{caller, callee}]++
		}
	})
	if st := s.Stats(); st.Lost != 0 {
		t.Fatalf("%d records lost", st.Lost)
	}
	want := map[[2]string]int{
		{"main", "site_c"}: 20, {"main", "site_d"}: 20,
		{"site_c", "leaf"}: 10000, {"site_d", "leaf"}: 10000,
	}
	for e, n := range want {
		if edges[e] != n {
			t.Errorf("edge %s -> %s: %d calls, want %d", e[0], e[1], edges[e], n)
		}
	}
	if len(edges) != len(want) {
		t.Errorf("edges %v, want only %v", edges, want)
	}
}

type nopWriter struct{}

func (*nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// TestReconfigure arms a uprobe counter on a running target: samples before
// carry no counter, samples after do, and the target never stops.
func TestReconfigure(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildCalls(t)
	skipIfNoUprobes(t, bin)
	s, err := Open(Config{Argv: []string{bin, "900", "200", "3000"}, UserOnly: true, Stdout: new(nopWriter)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	counts := map[int]int{} // values per sample -> samples
	var maxLeaf uint64
	fn := func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind != KindSample {
				continue
			}
			counts[len(r.Values)]++
			for _, v := range r.Values {
				if ref, _ := s.Event(v.ID); ref.Member == 1 && v.Value > maxLeaf {
					maxLeaf = v.Value
				}
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	s.Run(ctx, fn)
	cancel()
	if s.Exited() {
		t.Fatal("target finished before the counter was armed")
	}
	before := counts[1]
	drained, err := s.Reconfigure([]EventSpec{uprobeSpec(t, bin, "leaf")})
	fn(drained)
	if err != nil {
		t.Fatal(err)
	}
	if s.Generation() != 1 {
		t.Errorf("generation %d", s.Generation())
	}
	s.Run(context.Background(), fn)
	// Generous floors: other tests may share the two CPUs.
	if before < 50 || counts[2] < 50 {
		t.Fatalf("samples without counter %d, with counter %d", before, counts[2])
	}
	// The counter started at zero when armed: it saw some of the 360,000 leaf
	// calls, not all.
	if maxLeaf == 0 || maxLeaf >= 360000 {
		t.Errorf("leaf count %d", maxLeaf)
	}
}
