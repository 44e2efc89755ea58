//go:build linux

package sampler

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildC compiles testdata/NAME.c like the attach target.
func buildC(t *testing.T, name string) string {
	return gccBuild(t, "../testdata/"+name+".c", "-O0", "-fno-omit-frame-pointer", "-pthread")
}

// gccBuild compiles the C file src with flags into the test's directory,
// skipping the test without gcc.
func gccBuild(t *testing.T, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	bin := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	out, err := exec.Command("gcc", append(append(flags, "-o", bin), src)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// perfMaps counts this process's perf ring mappings.
func perfMaps(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "[perf_event]")
}

// TestInheritedOutliveCreator: a thread created after the attach by a thread
// that then exits is sampled to its end. Its events are inherited from its
// creator's; closing those when the creator exited ended its sampling.
func TestInheritedOutliveCreator(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildC(t, "relay")
	tg := startTarget(t, bin, "500", "1000")
	time.Sleep(100 * time.Millisecond) // main and relay exist, the worker not yet
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Followed() {
		t.Skip("this kernel makes cctop follow threads one by one")
	}
	perTID := map[int]int{}
	if err := s.Run(context.Background(), func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind == KindSample {
				perTID[int(r.TID)]++
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	<-tg.done
	worker := perTID[tg.waitWorkers(t, 1)["worker 1"]]
	// relay_worker spins for 1 s: hundreds of samples, fewer on a busy
	// machine; none at all before the fix.
	t.Logf("%d samples in relay_worker, stats %+v", worker, s.Stats())
	if worker < 50 {
		t.Errorf("%d samples of the thread whose creator exited, want >= 50", worker)
	}
}

// TestLostRecords: a ring that fills while nobody consumes it loses
// records; the kernel says how many, Stats counts them, and every record
// read is whole. The reader goroutine copies a one-page ring out a few
// dozen records at a time, so its queue of chunks is full within a fraction
// of the second Run is not called, and the ring overflows after it.
func TestLostRecords(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildAttachTarget(t)
	tg := startTarget(t, bin, "2", "100000", "4000")
	tg.waitWorkers(t, 2)
	// One page per CPU holds a few dozen samples.
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true, RingPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	time.Sleep(time.Second)
	var lost, lostRecs, samples uint64
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := s.Run(ctx, func(b *Batch) {
		for _, r := range b.Records {
			switch r.Kind {
			case KindLost:
				lost += r.Lost
				lostRecs++
			case KindSample:
				samples++
				if int(r.PID) != tg.pid || len(r.Chain) == 0 {
					t.Errorf("bad sample: pid %d, %d frames", r.PID, len(r.Chain))
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("%d samples, %d lost in %d LOST records; stats %+v", samples, lost, lostRecs, st)
	if lost == 0 {
		t.Error("no records lost from a one-page ring left unread for a second")
	}
	if st.Lost != lost || st.Samples != samples {
		t.Errorf("stats %d samples %d lost, batches had %d and %d", st.Samples, st.Lost, samples, lost)
	}
	if st.Corrupt != 0 {
		t.Errorf("%d corrupt ring reads", st.Corrupt)
	}
}

// TestTargetStop: a stopped target is noticed, sampling resumes when it
// continues, and the stop's length is kept.
func TestTargetStop(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildAttachTarget(t)
	s, err := Open(Config{Argv: []string{bin, "2", "100000", "30000"}, UserOnly: true, Stdout: &nopWriter{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pid := s.PID()
	var after int // samples read after SIGCONT
	var stoppedSeen bool
	var cont time.Time
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	for done := false; !done; {
		b, err := s.Next(ctx)
		if done = errors.Is(err, io.EOF); err != nil && !done {
			t.Fatal(err)
		}
		if !cont.IsZero() && time.Since(cont) >= 300*time.Millisecond {
			for _, r := range b.Records {
				if r.Kind == KindSample {
					after++
				}
			}
		}
		// Between batches, as a UI takes its requests.
		el := time.Since(start)
		switch {
		case el > 500*time.Millisecond && el < 1500*time.Millisecond:
			syscall.Kill(pid, syscall.SIGSTOP)
			if s.Target().Stopped {
				stoppedSeen = true
			}
		case el >= 1500*time.Millisecond && cont.IsZero():
			syscall.Kill(pid, syscall.SIGCONT)
			cont = time.Now()
		case !cont.IsZero() && (after >= 50 || time.Since(cont) > 10*time.Second):
			cancel()
		}
	}
	ts := s.Target()
	t.Logf("%d samples after SIGCONT; target %+v", after, ts)
	if !stoppedSeen {
		t.Error("the stop was not seen while it lasted")
	}
	if ts.Stops != 1 || ts.Stopped || ts.StoppedFor < 500*time.Millisecond {
		t.Errorf("target state %+v: want one stop of about 1 s, over", ts)
	}
	if after < 50 {
		t.Errorf("%d samples after the target continued", after)
	}
	if s.Exited() {
		t.Error("the target exited")
	}
}

// TestChurnDescriptors: a target whose threads come and go by the
// thousand leaves no descriptors or ring mappings behind, whether new
// threads inherit the events or are followed one by one.
func TestChurnDescriptors(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildC(t, "churn")
	for _, follow := range []bool{false, true} {
		t.Run(map[bool]string{false: "inherit", true: "follow"}[follow], func(t *testing.T) {
			tg := startTarget(t, bin, "2500", "1000", "4")
			before, beforeMaps := openFDs(t), perfMaps(t)
			time.Sleep(50 * time.Millisecond)
			s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true, Follow: follow})
			if err != nil {
				t.Fatal(err)
			}
			var fds, maps []int
			var last time.Time
			var samples int
			for done := false; !done; {
				b, err := s.Next(context.Background())
				if done = errors.Is(err, io.EOF); err != nil && !done {
					t.Fatal(err)
				}
				for _, r := range b.Records {
					if r.Kind == KindSample {
						samples++
					}
				}
				if time.Since(last) > 200*time.Millisecond {
					last = time.Now()
					fds = append(fds, openFDs(t))
					maps = append(maps, perfMaps(t))
				}
			}
			st := s.Stats()
			// What is kept per event goes with it: about 3000 threads came
			// and went.
			if len(s.ids) > 100 || len(s.leaders) > 100 || len(s.decoder.byID) > 100 {
				t.Errorf("after the churn the session knows %d event IDs, %d leaders, %d formats", len(s.ids), len(s.leaders), len(s.decoder.byID))
			}
			s.Close()
			t.Logf("%d samples, %d lost, %d threads started, %d alive at the end; descriptors over the run %v, ring mappings %v", samples, st.Lost, st.ThreadsNew, st.Threads, fds, maps)
			if st.ThreadsNew < 500 {
				t.Errorf("only %d threads seen starting", st.ThreadsNew)
			}
			if len(fds) < 5 {
				t.Fatalf("only %d looks at the descriptors", len(fds))
			}
			// Each live thread holds a group per CPU when followed, and a
			// dead one until its EXIT record is read: the target has at
			// most 5 threads at once, and starts about 3000. A leak of one
			// descriptor in a hundred threads would show.
			slack := 40
			lo, hi := fds[0], fds[0]
			for _, n := range fds {
				lo, hi = min(lo, n), max(hi, n)
			}
			if hi-lo > slack {
				t.Errorf("descriptors ranged over %d..%d while the target churned (slack %d): a leak", lo, hi, slack)
			}
			for _, m := range maps {
				if m-beforeMaps > len(s.cpus) {
					t.Errorf("%d ring mappings for %d CPUs", m-beforeMaps, len(s.cpus))
					break
				}
			}
			if after := openFDs(t); after != before {
				t.Errorf("descriptors: %d before, %d after Close", before, after)
			}
			if m := perfMaps(t); m != beforeMaps {
				t.Errorf("ring mappings: %d before, %d after Close", beforeMaps, m)
			}
		})
	}
}

// TestReconfigureFailureKeepsSampling: a configuration the kernel refuses
// leaves the old one sampling.
func TestReconfigureFailureKeepsSampling(t *testing.T) {
	skipIfNoPerf(t)
	if _, err := UprobeType(); err != nil {
		t.Skip("no uprobe PMU")
	}
	bin := buildAttachTarget(t)
	tg := startTarget(t, bin, "2", "100000", "30000")
	tg.waitWorkers(t, 2)
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var samples int
	count := func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind == KindSample {
				samples++
			}
		}
	}
	bad := []EventSpec{{Name: "nowhere", UprobePath: "/nonexistent/cctop-test", UprobeOffset: 0x1000}}
	drained, err := s.Reconfigure(bad)
	count(drained)
	if err == nil || !strings.Contains(err.Error(), "sampling goes on as before") {
		t.Fatalf("Reconfigure with a probe on a missing file: %v", err)
	}
	if len(s.Config().Members) != 0 || s.Followed() {
		t.Errorf("config after the failure: members %v, followed %v", s.Config().Members, s.Followed())
	}
	samples = 0
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.Run(ctx, count)
	if samples < 50 {
		t.Errorf("%d samples in the second after a failed reconfiguration", samples)
	}
}

// TestReconfigureDuringRun: the TUI changes the rate between two calls of
// Next while the reader goroutine copies the rings: every record is handed
// on once, in order, and sampling goes on at the new rate.
func TestReconfigureDuringRun(t *testing.T) {
	skipIfNoPerf(t)
	bin := buildAttachTarget(t)
	tg := startTarget(t, bin, "2", "100000", "30000")
	tg.waitWorkers(t, 2)
	s, err := Open(Config{PID: tg.pid, Freq: 999, UserOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var samples, after, changes int
	last := map[uint32]uint64{} // per thread: see Run on the order of batches
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	fn := func(b *Batch) {
		for _, r := range b.Records {
			if r.Kind != KindSample {
				continue
			}
			samples++
			if changes == 3 {
				after++
			}
		}
		for _, r := range b.Records {
			if r.Kind != KindSample {
				continue
			}
			if r.Time < last[r.TID] {
				t.Errorf("thread %d: a sample at %d after one at %d", r.TID, r.Time, last[r.TID])
			}
			last[r.TID] = r.Time
		}
	}
	for done := false; !done; {
		b, err := s.Next(ctx)
		if done = errors.Is(err, io.EOF); err != nil && !done {
			t.Fatal(err)
		}
		fn(b)
		el := time.Since(start)
		switch {
		case changes < 3 && el > time.Duration(changes+1)*300*time.Millisecond:
			freq := []uint64{499, 1999, 999}[changes]
			drained, err := s.ReconfigureWith(func(c *Config) { c.Freq = freq })
			fn(drained)
			if err != nil {
				t.Errorf("reconfigure to %d Hz: %v", freq, err)
			}
			changes++
		case changes == 3 && (after >= 100 || el > 10*time.Second):
			cancel()
		}
	}
	st := s.Stats()
	t.Logf("%d samples, %d after the last change; stats %+v", samples, after, st)
	if st.Samples != uint64(samples) {
		t.Errorf("stats say %d samples, fn saw %d", st.Samples, samples)
	}
	if after < 100 || s.Config().Freq != 999 {
		t.Errorf("%d samples after the last change, at %d Hz", after, s.Config().Freq)
	}
}

func TestMapsRecord(t *testing.T) {
	for _, c := range []struct {
		line string
		ok   bool
		want Record
	}{
		{"55d0c1a00000-55d0c1a21000 r-xp 00002000 fe:01 1835093                    /usr/bin/dash", true,
			Record{Kind: KindMmap, PID: 7, TID: 7, Addr: 0x55d0c1a00000, Len: 0x21000, PgOff: 0x2000, Major: 0xfe, Minor: 1, Inode: 1835093, Filename: "/usr/bin/dash"}},
		{"7f00 0000-7f01 r-xp 0 0:0 0", false, Record{}},
		{"7ffd4e5f0000-7ffd4e5f2000 r-xp 00000000 00:00 0                          [vdso]", true,
			Record{Kind: KindMmap, PID: 7, TID: 7, Addr: 0x7ffd4e5f0000, Len: 0x2000, Filename: "[vdso]"}},
		{"7f3a00000000-7f3a00001000 rwxp 00000000 00:00 0 ", true,
			Record{Kind: KindMmap, PID: 7, TID: 7, Addr: 0x7f3a00000000, Len: 0x1000, Filename: "//anon"}},
		{"7f3a00000000-7f3a00001000 rw-p 00000000 00:00 0", false, Record{}},
		{"00400000-00401000 r-xp 00000000 08:01 42 /tmp/a b (deleted)", true,
			Record{Kind: KindMmap, PID: 7, TID: 7, Addr: 0x400000, Len: 0x1000, Major: 8, Minor: 1, Inode: 42, Filename: "/tmp/a b (deleted)"}},
		{"", false, Record{}},
	} {
		got, ok := mapsRecord(7, c.line)
		if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("mapsRecord(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
